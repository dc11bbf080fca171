/* people.c -- lists of people for pages; see people.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "social/people.h"
#include "store/sql.h"

static void
from_row(struct dbq *s, struct person *p)
{
	p->id = dbq_i64(s, 0);
	snprintf(p->login, sizeof(p->login), "%s", dbq_text(s, 1));
	snprintf(p->name, sizeof(p->name), "%s", dbq_text(s, 2));
}

int
people_by_ids(struct app *a, const long long *ids, const long long *nums,
    int n, struct people *out)
{
	struct dbq *s;
	int i = 0, rc = DBQ_DONE;

	out->v = xcalloc((size_t)n + 1, sizeof(*out->v));
	out->n = 0;
	if (n <= 0)
		return 0;
	if ((s = dbq_stmt(a->db, STMT_USERS_BY_IDS)) == NULL)
		return -1;
	dbq_bind_ids(s, 1, ids, n);
	while (out->n < n && (rc = dbq_step(s)) == DBQ_ROW) {
		while (i < n && ids[i] != dbq_i64(s, 0))
			i++;
		if (i == n)
			break;
		from_row(s, &out->v[out->n]);
		out->v[out->n++].num = nums != NULL ? nums[i] : 0;
		i++;
	}
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : 0;
}

int
people_follows(struct app *a, enum tl kind, long long uid, long long page,
    int per, struct people *out, int *more)
{
	long long *ids = xcalloc((size_t)per, sizeof(*ids));
	struct dbq *s;
	int n, rc = DBQ_DONE;

	out->v = xcalloc((size_t)per, sizeof(*out->v));
	out->n = 0;
	*more = 0;
	n = timeline_ids(a, kind, uid, page, per, ids);
	s = n < 0 ? NULL : dbq_stmt(a->db, kind == TL_FOLLOWERS ?
	    STMT_FOLLOWERS_BY_IDS : STMT_FOLLOWING_BY_IDS);
	if (s == NULL) {
		free(ids);
		return -1;
	}
	*more = n == per;
	dbq_bind_i64(s, 1, uid);
	dbq_bind_ids(s, 2, ids, n);
	while (out->n < per && (rc = dbq_step(s)) == DBQ_ROW) {
		from_row(s, &out->v[out->n]);
		out->v[out->n++].num = dbq_i64(s, 3);
	}
	dbq_done(s);
	free(ids);
	return rc == DBQ_ERR ? -1 : 0;
}

void
people_free(struct people *p)
{
	free(p->v);
	p->v = NULL;
	p->n = 0;
}
