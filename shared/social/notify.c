/* notify.c -- notifications, their groups and read markers; see
 * notify.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/log.h"
#include "count/counters.h"
#include "count/cstore.h"
#include "social/bcache.h"
#include "social/notify.h"
#include "store/dbq.h"

static void
bind_opt(struct dbq *s, int i, long long v)
{
	if (v > 0)
		dbq_bind_i64(s, i, v);
	else
		dbq_bind_null(s, i);
}

/* A notification statement with its identifying fields bound. */
static struct dbq *
note_stmt(struct db *d, enum stmt st, long long recipient, long long actor,
    const char *kind, long long post, long long comment)
{
	struct dbq *s = dbq_stmt(d, st);

	if (s == NULL)
		return NULL;
	dbq_bind_i64(s, 1, recipient);
	dbq_bind_i64(s, 2, actor);
	dbq_bind_text(s, 3, kind, -1);
	bind_opt(s, 4, post);
	bind_opt(s, 5, comment);
	return s;
}

/* Moves group gid's stored size and unread by ds and du (at: a new
 * member's time, 0 none); a group that lost members takes its first and
 * last times from those left (GROUP_LEFT_SET, sql.h), and one left empty
 * goes.  0 or -1. */
static int
group_move(struct db *d, long long gid, long long ds, long long du,
    long long at)
{
	struct dbq *s;
	int rc;

	if (gid <= 0 || (ds == 0 && du == 0))
		return 0;
	if ((s = dbq_stmt(d, ds < 0 ? STMT_NOTE_GROUP_LEFT :
	    STMT_NOTE_GROUP_ADD)) == NULL)
		return -1;
	dbq_bind_i64(s, 1, gid);
	dbq_bind_i64(s, 2, ds);
	dbq_bind_i64(s, 3, du);
	if (ds >= 0)
		dbq_bind_i64(s, 4, at);
	rc = dbq_step(s);
	dbq_done(s);
	if (rc != DBQ_DONE)
		return -1;
	if (ds >= 0)
		return 0;
	if ((s = dbq_stmt(d, STMT_NOTE_GROUP_DROP_EMPTY)) == NULL)
		return -1;
	dbq_bind_i64(s, 1, gid);
	rc = dbq_step(s);
	dbq_done(s);
	return rc == DBQ_DONE ? 0 : -1;
}

/* The group a notification of this kind about post, made at at, joins:
 * its id, 0 none (a new one begins), -1. */
static long long
group_open(struct db *d, long long recipient, const char *kind,
    long long post, long long at)
{
	struct dbq *s;
	long long gid = 0;
	int rc;

	if (strcmp(kind, "comment") == 0)
		return 0;		/* never grouped */
	if ((s = dbq_stmt(d, STMT_NOTE_GROUP_OPEN)) == NULL)
		return -1;
	dbq_bind_i64(s, 1, recipient);
	dbq_bind_text(s, 2, kind, -1);
	bind_opt(s, 3, post);
	dbq_bind_i64(s, 4, at - NOTE_GROUP_MS);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		gid = dbq_i64(s, 0);
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : gid;
}

int
notify_add_at(struct db *d, long long recipient, long long actor,
    const char *kind, long long post, long long comment, long long at,
    long long *id)
{
	struct dbq *s;
	long long nid, gid;
	char lock[80];
	int rc;

	if (id != NULL)
		*id = 0;
	if (recipient == actor)
		return 0;
	/* Found, or else made, alone: two likes of one post at once make
	 * one group (PostgreSQL's writers run at once: dbq.h). */
	snprintf(lock, sizeof(lock), "note:%lld:%s:%lld", recipient, kind, post);
	if (strcmp(kind, "comment") != 0 && dbq_lock_key(d, lock, 0) == -1)
		return -1;
	if ((gid = group_open(d, recipient, kind, post, at)) == -1)
		return -1;
	/* a group deleted or emptied meanwhile moves nothing: a new one */
	if (gid > 0 && group_move(d, gid, 1, 1, at) == -1)
		return -1;
	if (gid > 0 && dbq_changes(d) == 0)
		gid = 0;
	if (gid == 0) {
		if ((s = dbq_stmt(d, STMT_NOTE_GROUP_NEW)) == NULL)
			return -1;
		dbq_bind_i64(s, 1, recipient);
		dbq_bind_text(s, 2, kind, -1);
		bind_opt(s, 3, post);
		dbq_bind_i64(s, 4, at);
		rc = dbq_insert_id(d, s, &gid);
		dbq_done(s);
		if (rc != 1)
			return -1;
	}
	if ((s = note_stmt(d, STMT_NOTE_INSERT, recipient, actor, kind, post,
	    comment)) == NULL)
		return -1;
	dbq_bind_i64(s, 6, at);
	dbq_bind_i64(s, 7, gid);
	rc = dbq_insert_id(d, s, &nid);
	dbq_done(s);
	if (id != NULL)
		*id = nid;
	return rc == 1 ? 1 : -1;
}

int
notify_add(struct db *d, long long recipient, long long actor,
    const char *kind, long long post, long long comment, long long *id)
{
	return notify_add_at(d, recipient, actor, kind, post, comment,
	    clock_wall_ms(), id);
}

/* Steps a withdrawing statement (each removed row's is_read, group),
 * then takes each from its group: the unread ones it removed, or -1. */
static int
withdrawn(struct db *d, struct dbq *s)
{
	long long gid[16], read[16];
	int rc, i, n = 0, unread = 0, over = 0;

	while ((rc = dbq_step(s)) == DBQ_ROW) {
		if (n == 16) {
			over = 1;	/* one source notifies once: never */
			continue;
		}
		read[n] = dbq_int(s, 0) != 0;
		gid[n++] = dbq_i64(s, 1);
	}
	dbq_done(s);
	if (rc != DBQ_DONE || over)
		return -1;
	for (i = 0; i < n; i++) {
		unread += read[i] == 0;
		if (group_move(d, gid[i], -1, read[i] ? 0 : -1, 0) == -1)
			return -1;
	}
	return unread;
}

int
notify_withdraw(struct db *d, long long recipient, long long actor,
    const char *kind, long long post, long long comment)
{
	struct dbq *s;

	if (recipient == actor)
		return 0;
	if ((s = note_stmt(d, STMT_NOTE_REMOVE, recipient, actor, kind, post,
	    comment)) == NULL)
		return -1;
	return withdrawn(d, s);
}

/* The notification id with those fields: 1 with its is_read in *read
 * and its group in *gid, 0 none, -1.  (SQLite's way to what
 * STMT_NOTE_REMOVE_ID returns on PostgreSQL: dbq_cheap_returning().) */
static int
read_of(struct db *d, long long id, long long recipient, long long actor,
    const char *kind, long long post, long long comment, int *read,
    long long *gid)
{
	struct dbq *s;
	int rc;

	if ((s = note_stmt(d, STMT_NOTE_READ_OF, recipient, actor, kind, post,
	    comment)) == NULL)
		return -1;
	dbq_bind_i64(s, 6, id);
	if ((rc = dbq_step(s)) == DBQ_ROW) {
		*read = dbq_int(s, 0) != 0;
		*gid = dbq_i64(s, 1);
	}
	dbq_done(s);
	return rc == DBQ_ROW ? 1 : rc == DBQ_DONE ? 0 : -1;
}

int
notify_withdraw_id(struct db *d, long long id, long long recipient,
    long long actor, const char *kind, long long post, long long comment)
{
	struct dbq *s;
	long long gid = 0;
	int rc, read = 1, cheap = dbq_cheap_returning(d);

	if (id <= 0 || recipient == actor)
		return 0;
	if (!cheap && (rc = read_of(d, id, recipient, actor, kind, post,
	    comment, &read, &gid)) != 1)
		return rc;	/* none (nothing to delete), or an error */
	if ((s = note_stmt(d, STMT_NOTE_REMOVE_ID, recipient, actor, kind, post,
	    comment)) == NULL)
		return -1;
	dbq_bind_i64(s, 6, id);
	if (cheap)
		return withdrawn(d, s);
	rc = dbq_step(s);
	dbq_done(s);
	if (rc != DBQ_DONE)
		return -1;
	if (dbq_changes(d) != 1)
		return 0;
	if (group_move(d, gid, -1, read ? 0 : -1, 0) == -1)
		return -1;
	return !read;
}

int
notify_deltas(long long user, long long n, struct delta *out)
{
	struct row r = { ROW_NOTE, 0, user, 0, 0, 1, 0 };
	int i, k;

	if (n == 0)
		return 0;
	/* The formula for one unread row created (n > 0) or gone (n < 0),
	 * times |n| identical row changes. */
	k = counters_deltas(n < 0 ? &r : NULL, n < 0 ? NULL : &r, out);
	for (i = 0; i < k; i++)
		out[i].d *= n < 0 ? -n : n;
	return k;
}

void
notify_outbox(struct outbox *ob, long long user, long long n)
{
	struct delta ds[DELTA_MAX];

	outbox_deltas(ob, ds, notify_deltas(user, n, ds));
}

/* Commits the open transaction with the deltas of n unread
 * notifications of user gone in its outbox row, then sends them.  0 or
 * -1 (nothing committed; the caller rolls back). */
static int
commit_read(struct app *a, long long user, long long n)
{
	struct outbox ob = { .n = 0 };

	notify_outbox(&ob, user, -n);
	if (outbox_commit(a->db, &ob) == -1)
		return -1;
	outbox_send(a, &ob);
	return 0;
}

/* The group of uid's notification id: 1 (*gid), 0 none, -1. */
static int
group_of(struct db *d, long long id, long long uid, long long *gid)
{
	struct dbq *s = dbq_stmt(d, STMT_NOTE_GROUP_OF);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, id);
	dbq_bind_i64(s, 2, uid);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		*gid = dbq_i64(s, 0);
	dbq_done(s);
	return rc == DBQ_ROW ? 1 : rc == DBQ_DONE ? 0 : -1;
}

/* A read or a delete of the group of uid's notification id, in a
 * transaction: how many unread ones it turned read or removed. */
static int
owner_change(struct app *a, enum stmt st, long long id, long long uid)
{
	struct db *d = a->db;
	struct dbq *s;
	long long gid = 0;
	int rc, n = 0;

	if (db_begin(d) == -1 || (rc = group_of(d, id, uid, &gid)) == -1) {
		db_rollback(d);
		return -1;
	}
	if (rc == 0) {			/* not the user's, or gone */
		db_rollback(d);
		return 0;
	}
	/* its post's row first, as notify_read_all() takes them: a group
	 * commit that withdrew two of the group's notifications (two
	 * unlikes of the post) in the other order than this statement's
	 * makes no deadlock with it */
	/* and the group's own row before its members (PostgreSQL): a
	 * follow that added a member to a follow group (no post) meanwhile
	 * left it behind a delete, unread, in no group; and a read-all,
	 * holding the post shared as this does, takes its groups first
	 * (sql_pg.c): a read that took the members first deadlocked */
	if (dbq_run_ll2(d, STMT_NOTE_GROUP_POST_LOCK, gid, uid) == -1 ||
	    dbq_run_ll2(d, STMT_NOTE_GROUP_LOCK, gid, gid) == -1 ||
	    (s = dbq_stmt(d, st)) == NULL) {
		db_rollback(d);
		return -1;
	}
	dbq_bind_i64(s, 1, gid);
	dbq_bind_i64(s, 2, uid);
	while ((rc = dbq_step(s)) == DBQ_ROW)
		n += dbq_int(s, 0) == 0;	/* DELETE: was unread */
	dbq_done(s);
	if (rc != DBQ_DONE) {
		db_rollback(d);
		return -1;
	}
	if (st == STMT_NOTE_READ) {
		/* exactly the rows this statement changed: of concurrent
		 * reads of one group, one changes each row */
		n = dbq_changes(d);
		rc = group_move(d, gid, 0, -n, 0);
	} else if ((s = dbq_stmt(d, STMT_NOTE_GROUP_DELETE)) == NULL)
		rc = -1;
	else {
		dbq_bind_i64(s, 1, gid);
		dbq_bind_i64(s, 2, uid);
		rc = dbq_step(s) == DBQ_DONE ? 0 : -1;
		dbq_done(s);
	}
	if (rc == -1 || commit_read(a, uid, n) == -1) {
		db_rollback(d);
		return -1;
	}
	return n;
}

int
notify_read(struct app *a, long long id, long long uid)
{
	return owner_change(a, STMT_NOTE_READ, id, uid);
}

int
notify_delete(struct app *a, long long id, long long uid)
{
	return owner_change(a, STMT_NOTE_DELETE, id, uid);
}

static int
ll_cmp(const void *x, const void *y)
{
	long long a = *(const long long *)x, b = *(const long long *)y;

	return (a > b) - (a < b);
}

/* Steps s to its end, its rows' first column into *out (malloc'd, or
 * NULL): how many, or -1 on an error (then *out is freed).  Handed back
 * (dbq_done()). */
static long
step_ids(struct dbq *s, long long **out)
{
	long n = 0, cap = 0;
	int rc;

	*out = NULL;
	while ((rc = dbq_step(s)) == DBQ_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			*out = xrealloc(*out, (size_t)cap * sizeof(**out));
		}
		(*out)[n++] = dbq_i64(s, 0);
	}
	dbq_done(s);
	if (rc == DBQ_DONE)
		return n;
	free(*out);
	*out = NULL;
	return -1;
}

/* A statement of uid's unread notifications up to upto, bound; NULL. */
static struct dbq *
unread_stmt(struct db *d, enum stmt st, long long uid, long long upto)
{
	struct dbq *s = dbq_stmt(d, st);

	if (s != NULL) {
		dbq_bind_i64(s, 1, uid);
		dbq_bind_i64(s, 2, upto);
	}
	return s;
}

/* A read-all first takes the posts of uid's unread notifications up to
 * upto (STMT_NOTE_POSTS_LOCK), their rows held on PostgreSQL: shared,
 * in the order of their ids, before it touches a notification or a
 * group.  Every writer takes a post's row before that post's
 * notifications and groups, and a group commit takes its posts in the
 * order of their ids (web/batch.c): the read-all then waits for a writer
 * holding nothing the writer will want, or a writer waits for it, never
 * both (by their groups' ids, it deadlocked with a group commit under
 * a storm of likes: a 500).  It then reads only notifications of these
 * posts (or of none): one of a post not held waits for the next. */
int
notify_read_all(struct app *a, long long uid, long long upto,
    long long upto_at, const char *snap)
{
	struct db *d = a->db;
	struct dbq *s;
	long long *gids = NULL, *posts = NULL;
	long n = -1, np = -1, i, j;

	if (db_begin(d) == -1 ||
	    (s = unread_stmt(d, STMT_NOTE_POSTS_LOCK, uid, upto)) == NULL ||
	    (np = step_ids(s, &posts)) == -1 ||
	    (s = unread_stmt(d, STMT_NOTE_READ_ALL, uid, upto)) == NULL) {
		free(posts);
		db_rollback(d);
		return -1;
	}
	dbq_bind_ids(s, 3, posts, (int)np);
	dbq_bind_i64(s, 4, upto_at);
	dbq_bind_null(s, 5);
	if (snap != NULL)
		dbq_bind_text(s, 5, snap, -1);
	free(posts);
	/* each one read names its group: as many rows as were unread */
	if ((n = step_ids(s, &gids)) > 1)
		qsort(gids, (size_t)n, sizeof(*gids), ll_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && gids[j] == gids[i]; j++)
			;
		if (group_move(d, gids[i], 0, -(long long)(j - i), 0) == -1)
			n = -1;
	}
	free(gids);
	/* Exactly the rows this statement changed: one that arrives after
	 * it stays unread and counted. */
	if (n == -1 || commit_read(a, uid, (long long)n) == -1) {
		db_rollback(d);
		return -1;
	}
	return (int)n;
}

int
notify_marker_put(struct app *a, long long uid, const char *kind, long long key,
    long long value)
{
	struct dbq *s = dbq_stmt(a->db, STMT_MARKER_PUT);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, uid);
	dbq_bind_text(s, 2, kind, -1);
	dbq_bind_i64(s, 3, key);
	dbq_bind_i64(s, 4, value);
	rc = dbq_step(s);
	dbq_done(s);
	if (rc != DBQ_DONE)
		return -1;
	bcache_forget(a, uid);
	return 0;
}
