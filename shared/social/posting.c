/* posting.c -- the actions on posts, likes, reposts and comments; see
 * posting.h.
 *
 * One file: why this file of over 500 lines is one concept -- every
 * action here writes a post's rows through the same
 * transaction helpers (begin_on_visible(), step_first(), commit_counted():
 * the row's old state, what really changed, the formula's deltas in one
 * outbox row), which split across files would be exported for no reader
 * but each other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/log.h"
#include "count/cname.h"
#include "count/cstore.h"
#include "count/outbox.h"
#include "social/fanout.h"
#include "social/notify.h"
#include "social/post.h"
#include "social/posting.h"
#include "store/dbq.h"
#include "store/key.h"
#include "store/rds.h"

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
	if (outbox_commit(a->db, &ob) == -1)
		return -1;
	outbox_send(a, &ob);
	return 0;
}

/* The id of topic slug, created on first use; -1 on error. */
static long long
topic_id(struct db *d, const char *slug, long long now)
{
	struct dbq *s = dbq_stmt(d, STMT_TOPIC_UPSERT);
	long long id = -1;

	if (s == NULL)
		return -1;
	dbq_bind_text(s, 1, slug, -1);
	dbq_bind_i64(s, 2, now);
	if (dbq_step(s) == DBQ_ROW)
		id = dbq_i64(s, 0);
	dbq_done(s);
	return id;
}

/* Runs a statement; its changes(), or -1.  *first (when not NULL): the
 * first result row's first column (0 for none or NULL). */
static int
step_first(struct db *d, struct dbq *s, long long *first)
{
	int rc = dbq_step(s);

	if (first != NULL)
		*first = rc == DBQ_ROW ? dbq_i64(s, 0) : 0;
	while (rc == DBQ_ROW)
		rc = dbq_step(s);
	dbq_done(s);
	if (rc != DBQ_DONE) {
		log_err("sqlite: %s", dbq_errmsg(d));
		return -1;
	}
	return dbq_changes(d);
}

/* Runs a statement without result rows; its changes(), or -1. */
static int
step_changes(struct db *d, struct dbq *s)
{
	return step_first(d, s, NULL);
}

int
posting_create(struct app *a, long long uid, const char *slug, const char *body,
    int publish, long long *id)
{
	struct db *d = a->db;
	long long now, tid;
	struct dbq *s;
	char *note = NULL;

	if (db_begin(d) == -1)
		return POST_ERR;
	/* Stamped once the writers' lock is ours, not before a wait for it
	 * (up to DB_BUSY_MS): a post stamped before a profile visit moved
	 * its reader's marker (social/followed.h), and committed after it,
	 * was never on the reader's followed badge. */
	now = clock_wall_ms();
	if ((tid = topic_id(d, slug, now)) == -1 ||
	    (s = dbq_stmt(d, STMT_POST_INSERT)) == NULL)
		goto fail;
	dbq_bind_i64(s, 1, uid);
	dbq_bind_i64(s, 2, tid);
	dbq_bind_text(s, 3, body, -1);
	dbq_bind_int(s, 4, publish ? 1 : 0);
	dbq_bind_i64(s, 5, now);
	*id = dbq_step(s) == DBQ_ROW ? dbq_i64(s, 0) : 0;
	dbq_done(s);
	if (*id == 0)
		goto fail;
	if (publish)		/* before the commit: fanout.h */
		note = fanout_publish_intent(a, *id, uid, now);
	{
		struct row nr = { ROW_POST, *id, uid, 0, tid, publish, 0 };

		if (commit_counted(a, NULL, &nr, 0, 0) == -1)
			goto fail;
	}
	if (publish)
		fanout_publish(a, *id, uid, now, note);
	return POST_OK;
fail:
	db_rollback(d);
	fanout_intent_drop(a, note);
	return POST_ERR;
}

/* uid's edit of p: POST_OK, or why not.  Another's draft is not there
 * at all (no existence leak). */
static int
edit_allowed(const struct post *p, long long uid)
{
	if (!p->is_deleted && p->user_id == uid)
		return POST_OK;
	return p->is_deleted || !POST_VISIBLE(p) ? POST_NOTFOUND :
	    POST_FORBIDDEN;
}

int
posting_edit_check(struct app *a, long long id, long long uid)
{
	struct post p;
	int rc = post_head(a->db, id, &p);

	return rc == 1 ? edit_allowed(&p, uid) : rc == 0 ? POST_NOTFOUND :
	    POST_ERR;
}

int
posting_edit(struct app *a, long long id, long long uid, const char *body,
    const char *slug, int publish, int *visible)
{
	struct db *d = a->db;
	struct post old, new;
	long long now, tid;
	struct dbq *s;
	char *note = NULL;
	int rc = POST_ERR, ch, published, withdrawn;

	memset(&old, 0, sizeof(old));
	memset(&new, 0, sizeof(new));
	if (db_begin(d) == -1)
		return POST_ERR;
	now = clock_wall_ms();		/* as posting_create()'s */
	if ((ch = post_get_locked(d, id, &old)) != 1) {
		rc = ch == 0 ? POST_NOTFOUND : POST_ERR;
		goto fail;
	}
	if ((rc = edit_allowed(&old, uid)) != POST_OK)
		goto fail;
	rc = POST_ERR;
	tid = slug != NULL ? topic_id(d, slug, now) : old.topic_id;
	if (tid == -1 || (s = dbq_stmt(d, STMT_POST_UPDATE)) == NULL)
		goto fail;
	dbq_bind_i64(s, 1, id);
	dbq_bind_text(s, 2, body, -1);
	dbq_bind_i64(s, 3, tid);
	dbq_bind_int(s, 4, publish < 0 ? old.status : publish ? 1 : 0);
	dbq_bind_i64(s, 5, now);
	if (step_changes(d, s) != 1 || post_get(d, id, &new) != 1)
		goto fail;
	published = !POST_VISIBLE(&old) && POST_VISIBLE(&new);
	withdrawn = POST_VISIBLE(&old) && !POST_VISIBLE(&new);
	if (published)		/* before the commit: fanout.h */
		note = fanout_publish_intent(a, id, uid, new.published_at);
	else if (withdrawn)
		note = fanout_remove_intent(a, id, uid);
	{
		struct row or, nr;

		post_row(&old, &or);
		post_row(&new, &nr);
		if (commit_counted(a, &or, &nr, 0, 0) == -1)
			goto fail;
	}
	if (published)
		fanout_publish(a, id, uid, new.published_at, note);
	else if (withdrawn)
		fanout_remove(a, id, uid, note);
	if (visible != NULL)
		*visible = POST_VISIBLE(&new);
	post_free(&old);
	post_free(&new);
	return POST_OK;
fail:
	db_rollback(d);
	fanout_intent_drop(a, note);
	post_free(&old);
	post_free(&new);
	return rc;
}

int
posting_delete(struct app *a, long long id, long long uid, int is_admin)
{
	struct db *d = a->db;
	struct post old;
	struct dbq *s;
	char *note = NULL;
	int rc = POST_ERR, ch;

	if (db_begin(d) == -1)
		return POST_ERR;
	if ((ch = post_get_locked(d, id, &old)) != 1) {
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
	if ((s = dbq_stmt(d, STMT_POST_DELETE)) == NULL)
		goto fail;
	dbq_bind_i64(s, 1, id);
	dbq_bind_i64(s, 2, clock_wall_ms());
	if (step_changes(d, s) != 1)
		goto fail;
	if (POST_VISIBLE(&old))	/* before the commit: fanout.h */
		note = fanout_remove_intent(a, id, old.user_id);
	{
		struct row or, nr;

		post_row(&old, &or);
		nr = or;
		nr.visible = 0;
		if (commit_counted(a, &or, &nr, 0, 0) == -1)
			goto fail;
	}
	if (POST_VISIBLE(&old))
		fanout_remove(a, id, old.user_id, note);
	post_free(&old);
	return POST_OK;
fail:
	db_rollback(d);
	fanout_intent_drop(a, note);
	post_free(&old);
	return rc;
}

/* Opens a transaction on a post that must be visible to uid's action;
 * p gets its head (post_head()): author, topic, visibility. */
static int
begin_on_visible(struct db *d, long long id, struct post *p)
{
	int ch;

	if (db_begin(d) == -1)
		return POST_ERR;
	if ((ch = post_head_locked(d, id, p)) != 1) {
		db_rollback(d);
		return ch == 0 ? POST_NOTFOUND : POST_ERR;
	}
	if (!POST_VISIBLE(p)) {
		db_rollback(d);
		return POST_NOTFOUND;
	}
	return POST_OK;
}

/* A like's, unlike's, repost's or unrepost's outbox row (the row
 * (kind, post id, uid) on the post of author and topic: its deltas when
 * it changed, taken back on an undo; note: the author's unread moved
 * by), then the commit: commit_counted(). */
static int
commit_pair(struct app *a, enum row_kind kind, long long id, long long uid,
    long long author, long long topic, int changed, int undo, int note)
{
	struct row r;

	memset(&r, 0, sizeof(r));
	r.kind = kind;
	r.id = id;
	r.user = uid;
	r.other = author;
	r.topic = topic;
	r.visible = 1;
	return commit_counted(a, changed && undo ? &r : NULL,
	    changed && !undo ? &r : NULL, author, note);
}

/* A like or an unlike where the engine runs its steps as one call
 * (dbq_server_actions(): schema_pg.c's tally_like and tally_unlike, the
 * statements pair_action() runs, in its order): what it reports, then
 * the outbox row and the commit as pair_action() does.  *at as there. */
static int
like_on_server(struct app *a, int like, long long id, long long uid,
    long long *at)
{
	struct db *d = a->db;
	struct dbq *s;
	long long author, topic;
	int visible, changed, note;

	if (db_begin(d) == -1)
		return POST_ERR;
	if ((s = dbq_stmt(d, like ? STMT_LIKE_ON_SERVER :
	    STMT_UNLIKE_ON_SERVER)) == NULL)
		goto fail;
	*at = clock_wall_ms();
	dbq_bind_i64(s, 1, id);
	dbq_bind_i64(s, 2, uid);
	if (like) {
		dbq_bind_i64(s, 3, *at);
		dbq_bind_i64(s, 4, *at - NOTE_GROUP_MS);
	}
	if (dbq_step(s) != DBQ_ROW) {
		dbq_done(s);
		log_err("postgres: %s", dbq_errmsg(d));
		goto fail;
	}
	visible = dbq_int(s, 0);
	author = dbq_i64(s, 1);
	topic = dbq_i64(s, 2);
	changed = dbq_int(s, 3);
	note = dbq_int(s, 4);
	dbq_done(s);
	if (!visible) {
		db_rollback(d);
		return POST_NOTFOUND;
	}
	if (!changed)
		*at = 0;
	if (commit_pair(a, ROW_LIKE, id, uid, author, topic, changed, !like,
	    note) == -1)
		goto fail;
	return POST_OK;
fail:
	db_rollback(d);
	return POST_ERR;
}

/* A like, unlike, repost or unrepost: the row, the post's like count and
 * the deltas of what really changed in one transaction.  A like keeps its
 * notification's id (likes.note_id); unlike withdraws that one by id, an
 * unrepost its repost's by its source (notify.h).  *at: the action's
 * time when it changed a row, else 0.  fan (reposts): the fan-out's
 * note, made before the commit when a row changed (fanout.h). */
static int
pair_action(struct app *a, enum stmt st, long long id, long long uid,
    int with_time, long long *at, char **fan)
{
	struct db *d = a->db;
	struct post p;
	struct dbq *s;
	long long note_id = 0;
	int rc, changed, note = 0;
	int like = st == STMT_LIKE_INSERT || st == STMT_LIKE_DELETE;
	int undo = st == STMT_LIKE_DELETE || st == STMT_REPOST_DELETE;
	int read_first = st == STMT_LIKE_DELETE && !dbq_cheap_returning(d);

	if (like && dbq_server_actions(d))
		return like_on_server(a, st == STMT_LIKE_INSERT, id, uid, at);
	if ((rc = begin_on_visible(d, id, &p)) != POST_OK)
		return rc;
	/* an unlike withdraws the notification its like made: its id read
	 * first on SQLite (the delete returns it on PostgreSQL, dbq.h) */
	if (read_first) {
		if ((s = dbq_stmt(d, STMT_LIKE_NOTE_OF)) == NULL)
			goto fail;
		dbq_bind_i64(s, 1, id);
		dbq_bind_i64(s, 2, uid);
		if (step_first(d, s, &note_id) < 0)
			goto fail;
	}
	if ((s = dbq_stmt(d, st)) == NULL)
		goto fail;
	dbq_bind_i64(s, 1, id);
	dbq_bind_i64(s, 2, uid);
	*at = clock_wall_ms();
	if (with_time)
		dbq_bind_i64(s, 3, *at);
	if ((changed = step_first(d, s, st == STMT_LIKE_DELETE && !read_first ?
	    &note_id : NULL)) < 0)
		goto fail;
	if (!changed)
		*at = 0;
	if (changed) {		/* tell the author, or take it back */
		if (st == STMT_LIKE_DELETE)
			rc = notify_withdraw_id(d, note_id, p.user_id, uid,
			    "like", id, 0);
		else if (st == STMT_REPOST_DELETE)
			rc = notify_withdraw(d, p.user_id, uid, "repost", id, 0);
		else
			rc = notify_add(d, p.user_id, uid, like ? "like" :
			    "repost", id, 0, &note_id);
		if (rc == -1)
			goto fail;
		note = undo ? -rc : rc;
	}
	if (changed && st == STMT_LIKE_INSERT && note_id > 0) {
		if ((s = dbq_stmt(d, STMT_LIKE_NOTE)) == NULL)
			goto fail;
		dbq_bind_i64(s, 1, id);
		dbq_bind_i64(s, 2, uid);
		dbq_bind_i64(s, 3, note_id);
		if (step_changes(d, s) != 1)
			goto fail;
	}
	if (changed && like) {
		if ((s = dbq_stmt(d, STMT_POST_LIKES_ADD)) == NULL)
			goto fail;
		dbq_bind_i64(s, 1, id);
		dbq_bind_int(s, 2, st == STMT_LIKE_INSERT ? 1 : -1);
		if (step_changes(d, s) != 1)
			goto fail;
	}
	if (changed && fan != NULL)	/* before the commit: fanout.h */
		*fan = fanout_repost_intent(a, id, uid, *at, undo);
	/* The row's deltas and the notification's: one outbox row. */
	if (commit_pair(a, like ? ROW_LIKE : ROW_REPOST, id, uid, p.user_id,
	    p.topic_id, changed, undo, note) == -1)
		goto fail;
	return POST_OK;
fail:
	db_rollback(d);
	if (fan != NULL) {
		fanout_intent_drop(a, *fan);
		*fan = NULL;
	}
	return POST_ERR;
}

int
posting_like(struct app *a, long long id, long long uid)
{
	long long at;

	return pair_action(a, STMT_LIKE_INSERT, id, uid, 1, &at, NULL);
}

int
posting_unlike(struct app *a, long long id, long long uid)
{
	long long at;

	return pair_action(a, STMT_LIKE_DELETE, id, uid, 0, &at, NULL);
}

/* A repost reaches the reposter's followers' feeds, and an unrepost
 * leaves them, once committed (fanout.h: noted before the commit; a
 * failed fan-out leaves the timelines to their rebuild, as a post's
 * does). */
int
posting_repost(struct app *a, long long id, long long uid)
{
	long long at;
	char *fan = NULL;
	int rc = pair_action(a, STMT_REPOST_INSERT, id, uid, 1, &at, &fan);

	if (rc == POST_OK && at > 0)
		fanout_repost(a, id, uid, at, fan);
	else
		free(fan);
	return rc;
}

int
posting_unrepost(struct app *a, long long id, long long uid)
{
	long long at;
	char *fan = NULL;
	int rc = pair_action(a, STMT_REPOST_DELETE, id, uid, 0, &at, &fan);

	if (rc == POST_OK && at > 0)
		fanout_unrepost(a, id, uid, fan);
	else
		free(fan);
	return rc;
}

int
posting_comment(struct app *a, long long id, long long uid, const char *body,
    long long *cid)
{
	struct db *d = a->db;
	struct post p;
	struct dbq *s;
	long long author;
	int rc, note = 0;

	if ((rc = begin_on_visible(d, id, &p)) != POST_OK)
		return rc;
	author = p.user_id;
	if ((s = dbq_stmt(d, STMT_COMMENT_INSERT)) == NULL)
		goto fail;
	dbq_bind_i64(s, 1, id);
	dbq_bind_i64(s, 2, uid);
	dbq_bind_text(s, 3, body, -1);
	dbq_bind_i64(s, 4, clock_wall_ms());
	*cid = dbq_step(s) == DBQ_ROW ? dbq_i64(s, 0) : 0;
	dbq_done(s);
	if (*cid == 0 || (note = notify_add(d, author, uid, "comment", id,
	    *cid, NULL)) == -1)
		goto fail;
	{
		struct row nr = { ROW_COMMENT, id, uid, author, 0, 1, 0 };

		if (commit_counted(a, NULL, &nr, author, note) == -1)
			goto fail;
	}
	return POST_OK;
fail:
	db_rollback(d);
	return POST_ERR;
}

/* An anonymous address's budget, taken for one more post in the window:
 * 0 taken, 1 past it (no view counted).  Redis failing: 1. */
static int
budget_take(struct app *a, const char *bk)
{
	const char *set[6] = { "SET", bk, "0", "NX", "PX", VIEW_WINDOW_MS };
	const char *incr[2] = { "INCR", bk };
	rds_reply *rep = NULL;
	long long n = VIEW_ADDR_MAX + 1;

	if (rds_append_strs(a->rds, 6, set) == 0 &&
	    rds_append_strs(a->rds, 2, incr) == 0 &&
	    rds_collect(a->rds, 1) == 0 &&
	    rds_get_reply(a->rds, &rep) == 0 && rds_type(rep) == RDS_INTEGER)
		n = rds_int(rep);
	if (rep != NULL)
		rds_free(rep);
	return n > VIEW_ADDR_MAX;
}

/* The viewer's key of post id (uid's, or addr's for an anonymous one), in
 * the slot of the count's bucket: 0, or -1 when there is no viewer. */
static int
view_key(const struct delta *d, long long uid, const char *addr, char *key,
    size_t sz)
{
	char what[KEY_VIEW_MAX];

	if (uid != 0)
		snprintf(what, sizeof(what), "v%lld:u%lld", d->k1, uid);
	else if (addr != NULL && *addr != '\0')
		snprintf(what, sizeof(what), "v%lld:a%s", d->k1, addr);
	else
		return -1;
	cname_bucket_key(cname_bucket(d), what, key, sz);
	return 0;
}

int
posting_view(struct app *a, long long id, long long author, long long uid,
    const char *addr)
{
	struct delta d = { FAM_POST_VIEWS, id, 0, 1, author };
	char key[KEY_VIEW_MAX], bk[KEY_VIEW_MAX];
	rds_reply *rep;
	int seen, rc;

	/* One script: the viewer's key, in the slot of the count's bucket,
	 * and the count (cstore_apply_view()). */
	if (view_key(&d, uid, addr, key, sizeof(key)) == -1)
		return 0;
	if (uid != 0)
		return cstore_apply_view(a, &d, key, VIEW_WINDOW_MS) == 1;
	/* An anonymous viewer also has a budget of posts, in its address's
	 * own slot: a view seen already costs none (one EXISTS), a new one
	 * takes it before the script and gives it back when the script found
	 * the key set meanwhile (the same address twice at once).  Killed
	 * between the two, the address has one post fewer this half hour,
	 * and its next view of the post counts.  Redis down: no view. */
	rep = rds_cmdv(a->rds, "EXISTS", key, NULL);
	seen = rep == NULL || rds_type(rep) != RDS_INTEGER || rds_int(rep) != 0;
	rds_free(rep);
	key_view_addr(bk, sizeof(bk), addr);
	if (seen || budget_take(a, bk))
		return 0;
	if ((rc = cstore_apply_view(a, &d, key, VIEW_WINDOW_MS)) == 0)
		rds_free(rds_cmdv(a->rds, "DECR", bk, NULL));
	return rc == 1;
}

int
posting_view_send(struct app *a, long long id, long long author,
    long long uid, const char *addr)
{
	struct delta d = { FAM_POST_VIEWS, id, 0, 1, author };
	char key[KEY_VIEW_MAX];

	/* an anonymous viewer's budget waits on replies; a cluster's client
	 * reads a script alone: those views are done now */
	if (uid == 0 || rds_is_cluster(a->rds)) {
		(void)posting_view(a, id, author, uid, addr);
		return 0;
	}
	(void)view_key(&d, uid, addr, key, sizeof(key));
	return cstore_view_send(a, &d, key, VIEW_WINDOW_MS) == 0;
}

int
posting_view_recv(struct app *a)
{
	return cstore_view_recv(a) == 1;
}

int
posting_comment_delete(struct app *a, long long cid, long long uid, int is_admin,
    long long *post_id)
{
	struct db *d = a->db;
	struct post p;
	struct dbq *s;
	long long author = 0, post_author;
	int deleted = 0, rc, note;

	if (db_begin(d) == -1 ||
	    (s = dbq_stmt(d, STMT_COMMENT_GET_LOCK)) == NULL) {
		db_rollback(d);
		return POST_ERR;
	}
	dbq_bind_i64(s, 1, cid);
	if ((rc = dbq_step(s)) == DBQ_ROW) {
		*post_id = dbq_i64(s, 1);
		author = dbq_i64(s, 2);
		deleted = dbq_int(s, 3);
	}
	dbq_done(s);
	if (rc != DBQ_ROW || (deleted && author != uid && !is_admin)) {
		db_rollback(d);
		return rc == DBQ_DONE || rc == DBQ_ROW ? POST_NOTFOUND :
		    POST_ERR;
	}
	if (author != uid && !is_admin) {
		/* Under a post the caller cannot see, the comment is not
		 * there for them at all (no existence leak). */
		rc = post_head(d, *post_id, &p);
		if (rc == 1)
			rc = POST_VISIBLE(&p) ? POST_FORBIDDEN : POST_NOTFOUND;
		else	/* a failed read is no "not there" */
			rc = rc == 0 ? POST_NOTFOUND : POST_ERR;
		db_rollback(d);
		return rc;
	}
	if (deleted) {
		db_rollback(d);
		return POST_OK;
	}
	if ((s = dbq_stmt(d, STMT_COMMENT_DELETE)) == NULL)
		goto fail;
	dbq_bind_i64(s, 1, cid);
	/* its post's row before the notification and its group, as every
	 * writer of them takes it (PostgreSQL: the owner's delete of the
	 * group holds the post, then the group; docs/ARCHITECTURE.md) */
	if (step_changes(d, s) != 1 || post_head_locked(d, *post_id, &p) != 1)
		goto fail;
	note = notify_withdraw(d, p.user_id, author, "comment", *post_id, cid);
	post_author = p.user_id;
	if (note == -1)
		goto fail;
	{
		struct row or = { ROW_COMMENT, *post_id, author, post_author,
		    0, 1, 0 };
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

int
posting_topic_exists(struct app *a, const char *slug)
{
	struct dbq *s = dbq_stmt(a->db, STMT_TOPIC_BY_SLUG);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_text(s, 1, slug, -1);
	rc = dbq_step(s);
	dbq_done(s);
	return rc == DBQ_ROW ? 1 : rc == DBQ_DONE ? 0 : -1;
}
