/* followed.c -- followed authors with unread posts; see followed.h. */
#include <stdlib.h>

#include "base/buf.h"
#include "social/followed.h"
#include "social/timeline.h"
#include "social/tlcount.h"
#include "store/dbq.h"

int
followed_unread(struct app *a, long long uid, long long **authors,
    long long **unread)
{
	struct dbq *s = dbq_stmt(a->db, STMT_FOLLOWED_MARKS);
	long long *after = NULL;
	int n = 0, cap = 0, rc;

	*authors = *unread = NULL;
	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, uid);
	while ((rc = dbq_step(s)) == DBQ_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			*authors = xrealloc(*authors, (size_t)cap * sizeof(**authors));
			after = xrealloc(after, (size_t)cap * sizeof(*after));
		}
		(*authors)[n] = dbq_i64(s, 0);
		after[n] = dbq_i64(s, 1);
		n++;
	}
	dbq_done(s);
	if (rc == DBQ_DONE && n > 0) {
		*unread = xcalloc((size_t)n, sizeof(**unread));
		if (tlcount_after(a, n, *authors, after, *unread) == -1)
			rc = DBQ_ERR;
	}
	free(after);
	if (rc != DBQ_DONE) {
		free(*authors);
		free(*unread);
		*authors = *unread = NULL;
		return -1;
	}
	return n;
}

struct pair {
	long long	author, unread;
};

static int
by_unread(const void *x, const void *y)
{
	const struct pair *a = x, *b = y;

	if (a->unread != b->unread)
		return a->unread > b->unread ? -1 : 1;
	return a->author > b->author ? -1 : a->author < b->author;
}

int
followed_load(struct app *a, long long uid, struct people *out)
{
	long long *authors, *unread, *ids, *nums;
	struct pair *ps;
	int n, k = 0, i, rc;

	out->v = NULL;
	out->n = 0;
	if ((n = followed_unread(a, uid, &authors, &unread)) <= 0)
		return n;
	ps = xcalloc((size_t)n, sizeof(*ps));
	for (i = 0; i < n; i++)
		if (unread[i] > 0) {
			ps[k].author = authors[i];
			ps[k++].unread = unread[i];
		}
	qsort(ps, (size_t)k, sizeof(*ps), by_unread);
	ids = xcalloc((size_t)k + 1, sizeof(*ids));
	nums = xcalloc((size_t)k + 1, sizeof(*nums));
	for (i = 0; i < k; i++) {
		ids[i] = ps[i].author;
		nums[i] = ps[i].unread;
	}
	rc = k > 0 ? people_by_ids(a, ids, nums, k, out) : 0;
	free(ids);
	free(nums);
	free(ps);
	free(authors);
	free(unread);
	return rc;
}
