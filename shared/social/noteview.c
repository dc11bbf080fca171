/* noteview.c -- the notification and notice page models; see
 * noteview.h. */
#include <stdio.h>
#include <stdlib.h>

#include "base/buf.h"
#include "social/noteview.h"
#include "store/sql.h"

int
notes_load(struct app *a, long long uid, long long page, int per,
    struct notes *out)
{
	struct dbq *s = db_stmt(&a->db, STMT_NOTES_PAGE);
	struct note_item *it;
	int rc = DBQ_DONE;

	out->v = xcalloc((size_t)per, sizeof(*out->v));
	out->n = 0;
	out->page = page;
	out->more = 0;
	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, uid);
	dbq_bind_int(s, 2, per);
	dbq_bind_i64(s, 3, (page - 1) * per);
	while (out->n < per && (rc = dbq_step(s)) == DBQ_ROW) {
		it = &out->v[out->n++];
		it->id = dbq_i64(s, 0);
		snprintf(it->kind, sizeof(it->kind), "%s", dbq_text(s, 1));
		it->post = dbq_i64(s, 2);
		it->read = dbq_int(s, 3) != 0;
		it->at = dbq_i64(s, 4);
		snprintf(it->login, sizeof(it->login), "%s", dbq_text(s, 5));
		snprintf(it->name, sizeof(it->name), "%s", dbq_text(s, 6));
	}
	db_done(s);
	out->more = out->n == per;
	return rc == DBQ_ERR ? -1 : 0;
}

void
notes_free(struct notes *ns)
{
	free(ns->v);
	ns->v = NULL;
	ns->n = 0;
}

int
note_owner(struct app *a, long long id, long long *owner)
{
	return db_i64_by_id(&a->db, STMT_NOTE_OWNER, id, owner);
}

int
notices_load(struct app *a, int max, struct notices *out)
{
	struct dbq *s = db_stmt(&a->db, STMT_NOTICES_PAGE);
	struct notice *n;
	int rc = DBQ_DONE;

	out->v = xcalloc((size_t)max, sizeof(*out->v));
	out->n = 0;
	if (s == NULL)
		return -1;
	dbq_bind_int(s, 1, max);
	dbq_bind_int(s, 2, 0);
	while (out->n < max && (rc = dbq_step(s)) == DBQ_ROW) {
		n = &out->v[out->n++];
		n->id = dbq_i64(s, 0);
		n->title = xstrdup(dbq_text(s, 1));
		n->body = xstrdup(dbq_text(s, 2));
		n->at = dbq_i64(s, 3);
	}
	db_done(s);
	return rc == DBQ_ERR ? -1 : 0;
}

void
notices_free(struct notices *ns)
{
	int i;

	for (i = 0; i < ns->n; i++) {
		free(ns->v[i].title);
		free(ns->v[i].body);
	}
	free(ns->v);
	ns->v = NULL;
	ns->n = 0;
}
