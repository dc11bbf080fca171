/* drafts.c -- a user's drafts a page at a time; see drafts.h. */
#include <limits.h>

#include "base/buf.h"
#include "social/drafts.h"
#include "store/dbq.h"

int
drafts_read(struct app *a, long long uid, long long before, int per,
    struct post_cards *out, int *more)
{
	struct dbq *s = dbq_stmt(a->db, STMT_DRAFTS_OF_USER);
	int rc = DBQ_DONE;

	out->v = NULL;
	out->n = 0;
	*more = 0;
	if (s == NULL)
		return -1;
	out->v = xcalloc((size_t)per, sizeof(*out->v));
	dbq_bind_i64(s, 1, uid);
	dbq_bind_i64(s, 2, before > 0 ? before : LLONG_MAX);
	dbq_bind_int(s, 3, per + 1);	/* one more: is there a next page */
	while ((rc = dbq_step(s)) == DBQ_ROW) {
		if (out->n == per) {
			*more = 1;
			break;
		}
		post_from_row(s, &out->v[out->n++].p);
	}
	dbq_done(s);
	if (rc == DBQ_ERR) {
		postlist_free(out);
		*more = 0;
		return -1;
	}
	return 0;
}
