/* post.c -- the truth rows of posts and what hangs off them; see post.h. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cstore.h"
#include "fanout.h"
#include "log.h"
#include "notify.h"
#include "outbox.h"
#include "post.h"

void
post_from_row(sqlite3_stmt *s, struct post *p)
{
	const unsigned char *body;

	memset(p, 0, sizeof(*p));
	p->id = sqlite3_column_int64(s, 0);
	p->user_id = sqlite3_column_int64(s, 1);
	db_col_text(s, 2, p->login, sizeof(p->login));
	db_col_text(s, 3, p->name, sizeof(p->name));
	db_col_text(s, 4, p->slug, sizeof(p->slug));
	body = sqlite3_column_text(s, 5);
	p->body = xstrdup(body ? (const char *)body : "");
	p->status = sqlite3_column_int(s, 6);
	p->is_deleted = sqlite3_column_int(s, 7);
	p->created_at = sqlite3_column_int64(s, 8);
	p->published_at = sqlite3_column_int64(s, 9);
	p->topic_id = sqlite3_column_int64(s, 10);
	p->likes = sqlite3_column_int64(s, 11);
}

/* The formula's view of a post row. */
static void
post_row(const struct post *p, struct row *r)
{
	memset(r, 0, sizeof(*r));
	r->kind = ROW_POST;
	r->id = p->id;
	r->user = p->user_id;
	r->topic = p->topic_id;
	r->visible = POST_VISIBLE(p);
	r->likes = p->likes;
}

/* Commits with the deltas of a row change and of n unread notes of user
 * in the outbox (outbox.h), then sends them.  0, or -1: roll back. */
static int
commit_counted(struct app *a, const struct row *old, const struct row *new,
    long long user, long long n)
{
	struct outbox ob = { .n = 0 };

	if (old != NULL || new != NULL)
		outbox_formula(&ob, old, new);
	notify_outbox(&ob, user, n);
	if (outbox_add(&a->db, &ob) == -1 || db_commit(&a->db) == -1)
		return -1;
	outbox_send(a, &ob);
	return 0;
}

void
post_free(struct post *p)
{
	free(p->body);
	p->body = NULL;
}

int
post_get(struct db *d, long long id, struct post *p)
{
	sqlite3_stmt *s = db_stmt(d, STMT_POST_GET);
	int rc;

	memset(p, 0, sizeof(*p));
	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		post_from_row(s, p);
	db_done(s);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int
post_can_see(const struct post *p, long long viewer)
{
	/* CONTRACT: a draft or deleted post is 404 to all but its author. */
	return POST_VISIBLE(p) || (viewer != 0 && viewer == p->user_id);
}

/* The id of topic slug, created on first use; -1 on error. */
static long long
topic_id(struct db *d, const char *slug, long long now)
{
	sqlite3_stmt *s = db_stmt(d, STMT_TOPIC_UPSERT);
	long long id = -1;

	if (s == NULL)
		return -1;
	sqlite3_bind_text(s, 1, slug, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, now);
	if (sqlite3_step(s) == SQLITE_ROW)
		id = sqlite3_column_int64(s, 0);
	db_done(s);
	return id;
}

/* Runs a statement; its changes(), or -1.  *first (when not NULL): the
 * first result row's first column (0 for none or NULL). */
static int
step_first(struct db *d, sqlite3_stmt *s, long long *first)
{
	int rc = sqlite3_step(s);

	if (first != NULL)
		*first = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	while (rc == SQLITE_ROW)
		rc = sqlite3_step(s);
	db_done(s);
	if (rc != SQLITE_DONE) {
		log_err("sqlite: %s", sqlite3_errmsg(d->h));
		return -1;
	}
	return sqlite3_changes(d->h);
}

/* Runs a statement without result rows; its changes(), or -1. */
static int
step_changes(struct db *d, sqlite3_stmt *s)
{
	return step_first(d, s, NULL);
}

int
post_create(struct app *a, long long uid, const char *slug, const char *body,
    int publish, long long *id)
{
	struct db *d = &a->db;
	long long now = db_now_ms(), tid;
	sqlite3_stmt *s;

	if (db_begin(d) == -1)
		return POST_ERR;
	if ((tid = topic_id(d, slug, now)) == -1 ||
	    (s = db_stmt(d, STMT_POST_INSERT)) == NULL)
		goto fail;
	sqlite3_bind_int64(s, 1, uid);
	sqlite3_bind_int64(s, 2, tid);
	sqlite3_bind_text(s, 3, body, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 4, publish ? 1 : 0);
	sqlite3_bind_int64(s, 5, now);
	*id = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	db_done(s);
	if (*id == 0)
		goto fail;
	{
		struct row nr = { ROW_POST, *id, uid, 0, tid, publish, 0 };

		if (commit_counted(a, NULL, &nr, 0, 0) == -1)
			goto fail;
	}
	if (publish)
		fanout_publish(a, *id, uid, now);
	return POST_OK;
fail:
	db_rollback(d);
	return POST_ERR;
}

int
post_edit(struct app *a, long long id, long long uid, const char *body,
    const char *slug, int publish)
{
	struct db *d = &a->db;
	struct post old, new;
	long long now = db_now_ms(), tid;
	sqlite3_stmt *s;
	int rc = POST_ERR, ch;

	memset(&old, 0, sizeof(old));
	memset(&new, 0, sizeof(new));
	if (db_begin(d) == -1)
		return POST_ERR;
	if ((ch = post_get(d, id, &old)) != 1) {
		rc = ch == 0 ? POST_NOTFOUND : POST_ERR;
		goto fail;
	}
	if (old.is_deleted || old.user_id != uid) {
		/* Another's draft is not there at all (no existence leak). */
		rc = old.is_deleted || !POST_VISIBLE(&old) ? POST_NOTFOUND :
		    POST_FORBIDDEN;
		goto fail;
	}
	if ((tid = topic_id(d, slug, now)) == -1 ||
	    (s = db_stmt(d, STMT_POST_UPDATE)) == NULL)
		goto fail;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, body, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, tid);
	sqlite3_bind_int(s, 4, publish ? 1 : 0);
	sqlite3_bind_int64(s, 5, now);
	if (step_changes(d, s) != 1 || post_get(d, id, &new) != 1)
		goto fail;
	{
		struct row or, nr;

		post_row(&old, &or);
		post_row(&new, &nr);
		if (commit_counted(a, &or, &nr, 0, 0) == -1)
			goto fail;
	}
	if (!POST_VISIBLE(&old) && POST_VISIBLE(&new))
		fanout_publish(a, id, uid, new.published_at);
	else if (POST_VISIBLE(&old) && !POST_VISIBLE(&new))
		fanout_remove(a, id, uid);
	post_free(&old);
	post_free(&new);
	return POST_OK;
fail:
	db_rollback(d);
	post_free(&old);
	post_free(&new);
	return rc;
}

int
post_delete(struct app *a, long long id, long long uid, int is_admin)
{
	struct db *d = &a->db;
	struct post old;
	sqlite3_stmt *s;
	int rc = POST_ERR, ch;

	if (db_begin(d) == -1)
		return POST_ERR;
	if ((ch = post_get(d, id, &old)) != 1) {
		db_rollback(d);
		return ch == 0 ? POST_NOTFOUND : POST_ERR;
	}
	if (old.user_id != uid && !is_admin) {
		rc = old.status == 1 && !old.is_deleted ? POST_FORBIDDEN :
		    POST_NOTFOUND;
		goto fail;
	}
	if (old.is_deleted) {		/* already: nothing changes */
		db_rollback(d);
		post_free(&old);
		return POST_OK;
	}
	if ((s = db_stmt(d, STMT_POST_DELETE)) == NULL)
		goto fail;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, db_now_ms());
	if (step_changes(d, s) != 1)
		goto fail;
	{
		struct row or, nr;

		post_row(&old, &or);
		nr = or;
		nr.visible = 0;
		if (commit_counted(a, &or, &nr, 0, 0) == -1)
			goto fail;
	}
	if (POST_VISIBLE(&old))
		fanout_remove(a, id, old.user_id);
	post_free(&old);
	return POST_OK;
fail:
	db_rollback(d);
	post_free(&old);
	return rc;
}

/* Opens a transaction on a post that must be visible to uid's action. */
static int
begin_on_visible(struct db *d, long long id, struct post *p)
{
	int ch;

	if (db_begin(d) == -1)
		return POST_ERR;
	if ((ch = post_get(d, id, p)) != 1) {
		db_rollback(d);
		return ch == 0 ? POST_NOTFOUND : POST_ERR;
	}
	if (!POST_VISIBLE(p)) {
		db_rollback(d);
		post_free(p);
		return POST_NOTFOUND;
	}
	return POST_OK;
}

/* A like, unlike or repost: the row, the post's like count and the
 * deltas of what really changed in one transaction.  A like keeps its
 * notification's id (likes.note_id); unlike withdraws that one by id. */
static int
pair_action(struct app *a, enum stmt st, long long id, long long uid,
    int with_time)
{
	struct db *d = &a->db;
	struct post p;
	struct row r;
	sqlite3_stmt *s;
	long long note_id = 0;
	int rc, changed, note = 0;
	int like = st == STMT_LIKE_INSERT || st == STMT_LIKE_DELETE;

	if ((rc = begin_on_visible(d, id, &p)) != POST_OK)
		return rc;
	if ((s = db_stmt(d, st)) == NULL)
		goto fail;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, uid);
	if (with_time)
		sqlite3_bind_int64(s, 3, db_now_ms());
	/* an unlike's row names the notification its like made */
	if ((changed = step_first(d, s, st == STMT_LIKE_DELETE ? &note_id :
	    NULL)) < 0)
		goto fail;
	if (changed) {		/* tell the author, or take it back */
		if (st == STMT_LIKE_DELETE)
			rc = notify_withdraw_id(d, note_id, p.user_id, uid,
			    "like", id, 0);
		else
			rc = notify_add(d, p.user_id, uid, like ? "like" :
			    "repost", id, 0, &note_id);
		if (rc == -1)
			goto fail;
		note = st == STMT_LIKE_DELETE ? -rc : rc;
	}
	if (changed && st == STMT_LIKE_INSERT && note_id > 0) {
		if ((s = db_stmt(d, STMT_LIKE_NOTE)) == NULL)
			goto fail;
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_int64(s, 2, uid);
		sqlite3_bind_int64(s, 3, note_id);
		if (step_changes(d, s) != 1)
			goto fail;
	}
	if (changed && like) {
		if ((s = db_stmt(d, STMT_POST_LIKES_ADD)) == NULL)
			goto fail;
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_int(s, 2, st == STMT_LIKE_INSERT ? 1 : -1);
		if (step_changes(d, s) != 1)
			goto fail;
	}
	memset(&r, 0, sizeof(r));
	r.kind = like ? ROW_LIKE : ROW_REPOST;
	r.id = id;
	r.user = uid;
	r.other = p.user_id;
	r.topic = p.topic_id;
	r.visible = 1;
	/* The row's deltas and the notification's: one outbox row. */
	if (commit_counted(a, changed && st == STMT_LIKE_DELETE ? &r : NULL,
	    changed && st != STMT_LIKE_DELETE ? &r : NULL, p.user_id,
	    note) == -1)
		goto fail;
	post_free(&p);
	return POST_OK;
fail:
	db_rollback(d);
	post_free(&p);
	return POST_ERR;
}

int
post_like(struct app *a, long long id, long long uid)
{
	return pair_action(a, STMT_LIKE_INSERT, id, uid, 1);
}

int
post_unlike(struct app *a, long long id, long long uid)
{
	return pair_action(a, STMT_LIKE_DELETE, id, uid, 0);
}

int
post_repost(struct app *a, long long id, long long uid)
{
	return pair_action(a, STMT_REPOST_INSERT, id, uid, 1);
}

int
post_comment(struct app *a, long long id, long long uid, const char *body,
    long long *cid)
{
	struct db *d = &a->db;
	struct post p;
	sqlite3_stmt *s;
	long long author;
	int rc, note = 0;

	if ((rc = begin_on_visible(d, id, &p)) != POST_OK)
		return rc;
	author = p.user_id;
	post_free(&p);
	if ((s = db_stmt(d, STMT_COMMENT_INSERT)) == NULL)
		goto fail;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, uid);
	sqlite3_bind_text(s, 3, body, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, db_now_ms());
	*cid = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	db_done(s);
	if (*cid == 0 || (note = notify_add(d, author, uid, "comment", id,
	    *cid, NULL)) == -1)
		goto fail;
	{
		struct row nr = { ROW_COMMENT, id, uid, 0, 0, 1, 0 };

		if (commit_counted(a, NULL, &nr, author, note) == -1)
			goto fail;
	}
	return POST_OK;
fail:
	db_rollback(d);
	return POST_ERR;
}

void
post_view(struct app *a, long long id)
{
	struct delta d = { FAM_POST_VIEWS, id, 0, 1 };

	cstore_apply(a, &d, 1);
}

int
post_comment_delete(struct app *a, long long cid, long long uid, int is_admin,
    long long *post_id)
{
	struct db *d = &a->db;
	struct post p;
	sqlite3_stmt *s;
	long long author = 0, post_author;
	int deleted = 0, rc, note;

	if (db_begin(d) == -1 || (s = db_stmt(d, STMT_COMMENT_GET)) == NULL) {
		db_rollback(d);
		return POST_ERR;
	}
	sqlite3_bind_int64(s, 1, cid);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		*post_id = sqlite3_column_int64(s, 1);
		author = sqlite3_column_int64(s, 2);
		deleted = sqlite3_column_int(s, 3);
	}
	db_done(s);
	if (rc != SQLITE_ROW || (deleted && author != uid && !is_admin)) {
		db_rollback(d);
		return rc == SQLITE_DONE || rc == SQLITE_ROW ? POST_NOTFOUND :
		    POST_ERR;
	}
	if (author != uid && !is_admin) {
		/* Under a post the caller cannot see, the comment is not
		 * there for them at all (no existence leak). */
		rc = post_get(d, *post_id, &p);
		if (rc == 1) {
			rc = POST_VISIBLE(&p) ? POST_FORBIDDEN : POST_NOTFOUND;
			post_free(&p);
		} else
			rc = POST_NOTFOUND;
		db_rollback(d);
		return rc;
	}
	if (deleted) {
		db_rollback(d);
		return POST_OK;
	}
	if ((s = db_stmt(d, STMT_COMMENT_DELETE)) == NULL)
		goto fail;
	sqlite3_bind_int64(s, 1, cid);
	if (step_changes(d, s) != 1 || post_get(d, *post_id, &p) != 1)
		goto fail;
	note = notify_withdraw(d, p.user_id, author, "comment", *post_id, cid);
	post_author = p.user_id;
	post_free(&p);
	if (note == -1)
		goto fail;
	{
		struct row or = { ROW_COMMENT, *post_id, author, 0, 0, 1, 0 };
		struct row nr = or;

		nr.visible = 0;
		if (commit_counted(a, &or, &nr, post_author, -note) == -1)
			goto fail;
	}
	return POST_OK;
fail:
	db_rollback(d);
	return POST_ERR;
}
