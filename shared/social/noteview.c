/* noteview.c -- the notification and notice page models; see
 * noteview.h. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "social/noteview.h"
#include "store/sql.h"

/* The newest people of item it's group, and its newest id.  0 or -1. */
static int
note_who_load(struct app *a, long long gid, struct note_item *it)
{
	struct dbq *s = dbq_stmt(a->db, STMT_NOTE_GROUP_MEMBERS);
	struct note_who *w;
	int rc = DBQ_DONE;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, gid);
	dbq_bind_int(s, 2, NOTE_NAMED);
	while (it->nwho < NOTE_NAMED && (rc = dbq_step(s)) == DBQ_ROW) {
		if (it->nwho == 0) {
			it->id = dbq_i64(s, 0);
			it->at = dbq_i64(s, 1);
		}
		w = &it->who[it->nwho++];
		snprintf(w->login, sizeof(w->login), "%s", dbq_text(s, 2));
		snprintf(w->name, sizeof(w->name), "%s", dbq_text(s, 3));
	}
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : 0;
}

/* The page's snapshot t kept in snap (NOTE_SNAP_MAX + 1 bytes); one
 * too long to keep, as "XMIN:XMIN:": it sees fewer transactions (none
 * from its oldest in flight on), so a read-all leaves more unread, never
 * one the page did not see. */
static void
snap_keep(char *snap, const char *t)
{
	size_t len = strlen(t), x = strcspn(t, ":");

	if (len <= NOTE_SNAP_MAX)
		memcpy(snap, t, len + 1);
	else if (x < 32)
		snprintf(snap, NOTE_SNAP_MAX + 1, "%.*s:%.*s:", (int)x, t,
		    (int)x, t);
	else
		snap[0] = '\0';
}

int
noteview_load(struct app *a, long long uid, long long page,
    const struct note_mark *before, int per, struct notes *out)
{
	struct dbq *s = dbq_stmt(a->db, STMT_NOTES_PAGE);
	struct note_item *it;
	const char *t;
	long long *gid;
	int rc = DBQ_DONE, i, n = 0;

	out->v = xcalloc((size_t)per, sizeof(*out->v));
	out->n = 0;
	out->page = before != NULL ? 0 : page;	/* 0: not by number */
	out->more = 0;
	out->newest = 0;
	out->newest_at = 0;
	out->snap[0] = '\0';
	out->before = before != NULL ? *before : (struct note_mark){ 0, 0 };
	out->last = out->before;
	if (s == NULL)
		return -1;
	gid = xcalloc((size_t)per, sizeof(*gid));
	dbq_bind_i64(s, 1, uid);
	dbq_bind_int(s, 2, per + 1);	/* one more: is there a next page */
	dbq_bind_i64(s, 3, before != NULL ? 0 : (page - 1) * per);
	dbq_bind_i64(s, 4, before != NULL ? before->at : LLONG_MAX);
	dbq_bind_i64(s, 5, before != NULL ? before->id : LLONG_MAX);
	while ((rc = dbq_step(s)) == DBQ_ROW) {
		if (n == per) {
			out->more = 1;
			break;
		}
		it = &out->v[n];
		gid[n++] = dbq_i64(s, 0);
		snprintf(it->kind, sizeof(it->kind), "%s", dbq_text(s, 1));
		it->post = dbq_i64(s, 2);
		it->size = dbq_i64(s, 3);
		it->unread = dbq_i64(s, 4);
		it->at = dbq_i64(s, 5);
		t = dbq_text(s, 6);
		snprintf(it->excerpt, sizeof(it->excerpt), "%s", t);
		it->cut = dbq_int(s, 8) != 0;
		it->post_shown = dbq_int(s, 7) != 0;
		if (n == 1)
			snap_keep(out->snap, dbq_text(s, 9));
		out->last = (struct note_mark){ it->at, gid[n - 1] };
	}
	dbq_done(s);
	/* the people of each, newest first; a group whose rows are gone
	 * (reconciliation will find it) is not an item */
	for (i = 0; rc != DBQ_ERR && i < n; i++) {
		long long last;

		it = &out->v[out->n];
		if (i != out->n)
			*it = out->v[i];
		last = it->at;	/* the group's newest time, of any member */
		it->nwho = 0;
		if (note_who_load(a, gid[i], it) == -1)
			rc = DBQ_ERR;
		else if (it->nwho > 0) {
			/* the read-all's bounds: the newest id shown, and
			 * the newest time, which a member of a lower id may
			 * hold (PostgreSQL: a like reads the clock before it
			 * waits for its post's row) */
			if (it->id > out->newest)
				out->newest = it->id;
			if (it->at > last)
				last = it->at;
			if (last > out->newest_at)
				out->newest_at = last;
			out->n++;
		}
	}
	free(gid);
	return rc == DBQ_ERR ? -1 : 0;
}

void
noteview_free(struct notes *ns)
{
	free(ns->v);
	ns->v = NULL;
	ns->n = 0;
}

int
noteview_owner(struct app *a, long long id, long long *owner, long long *at)
{
	struct dbq *s = dbq_stmt(a->db, STMT_NOTE_OWNER);
	int rc;

	*owner = *at = 0;
	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, id);
	if ((rc = dbq_step(s)) == DBQ_ROW) {
		*owner = dbq_i64(s, 0);
		*at = dbq_i64(s, 1);
	}
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : 0;
}

int
noteview_notices_load(struct app *a, int max, struct notices *out)
{
	struct dbq *s = dbq_stmt(a->db, STMT_NOTICES_PAGE);
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
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : 0;
}

void
noteview_notices_free(struct notices *ns)
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
