/* notify.c -- notifications and read markers; see notify.h. */
#include "base/clock.h"
#include "base/log.h"
#include "count/counters.h"
#include "count/cstore.h"
#include "social/bcache.h"
#include "social/notify.h"
#include "store/query.h"

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
	struct dbq *s = db_stmt(d, st);

	if (s == NULL)
		return NULL;
	dbq_bind_i64(s, 1, recipient);
	dbq_bind_i64(s, 2, actor);
	dbq_bind_text(s, 3, kind, -1);
	bind_opt(s, 4, post);
	bind_opt(s, 5, comment);
	return s;
}

int
notify_add(struct db *d, long long recipient, long long actor,
    const char *kind, long long post, long long comment, long long *id)
{
	struct dbq *s;
	long long nid;
	int rc;

	if (id != NULL)
		*id = 0;
	if (recipient == actor)
		return 0;
	if ((s = note_stmt(d, STMT_NOTE_INSERT, recipient, actor, kind, post,
	    comment)) == NULL)
		return -1;
	dbq_bind_i64(s, 6, clock_wall_ms());
	rc = db_insert_id(d, s, &nid);
	db_done(s);
	if (id != NULL)
		*id = nid;
	return rc == 1 ? 1 : -1;
}

/* Steps a withdrawing statement: the unread ones it removed, or -1. */
static int
withdrawn(struct dbq *s)
{
	int rc, unread = 0;

	while ((rc = dbq_step(s)) == DBQ_ROW)
		unread += dbq_int(s, 0) == 0;
	db_done(s);
	return rc == DBQ_DONE ? unread : -1;
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
	return withdrawn(s);
}

/* The notification id with those fields: 1 with its is_read in *read,
 * 0 none, -1.  (SQLite's way to what STMT_NOTE_REMOVE_ID returns on
 * PostgreSQL: db_cheap_returning().) */
static int
read_of(struct db *d, long long id, long long recipient, long long actor,
    const char *kind, long long post, long long comment, int *read)
{
	struct dbq *s;
	int rc;

	if ((s = note_stmt(d, STMT_NOTE_READ_OF, recipient, actor, kind, post,
	    comment)) == NULL)
		return -1;
	dbq_bind_i64(s, 6, id);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		*read = dbq_int(s, 0) != 0;
	db_done(s);
	return rc == DBQ_ROW ? 1 : rc == DBQ_DONE ? 0 : -1;
}

int
notify_withdraw_id(struct db *d, long long id, long long recipient,
    long long actor, const char *kind, long long post, long long comment)
{
	struct dbq *s;
	int rc, read = 1, cheap = db_cheap_returning(d);

	if (id <= 0 || recipient == actor)
		return 0;
	if (!cheap && (rc = read_of(d, id, recipient, actor, kind, post,
	    comment, &read)) != 1)
		return rc;	/* none (nothing to delete), or an error */
	if ((s = note_stmt(d, STMT_NOTE_REMOVE_ID, recipient, actor, kind, post,
	    comment)) == NULL)
		return -1;
	dbq_bind_i64(s, 6, id);
	if (cheap)
		return withdrawn(s);
	rc = dbq_step(s);
	db_done(s);
	if (rc != DBQ_DONE)
		return -1;
	return db_changes(d) == 1 && !read;
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
	k = counter_deltas(n < 0 ? &r : NULL, n < 0 ? NULL : &r, out);
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
	if (outbox_add(&a->db, &ob) == -1 || db_commit(&a->db) == -1)
		return -1;
	outbox_send(a, &ob);
	return 0;
}

/* Runs a statement on one of uid's notifications in a transaction and
 * returns how many unread ones it turned read or removed. */
static int
owner_change(struct app *a, enum stmt st, long long id, long long uid)
{
	struct db *d = &a->db;
	struct dbq *s;
	int rc, n = 0;

	if (db_begin(d) == -1 || (s = db_stmt(d, st)) == NULL) {
		db_rollback(d);
		return -1;
	}
	dbq_bind_i64(s, 1, id);
	dbq_bind_i64(s, 2, uid);
	while ((rc = dbq_step(s)) == DBQ_ROW)
		n += dbq_int(s, 0) == 0;	/* DELETE: was unread */
	db_done(s);
	if (rc != DBQ_DONE) {
		db_rollback(d);
		return -1;
	}
	if (st == STMT_NOTE_READ)
		n = db_changes(d);
	if (commit_read(a, uid, n) == -1) {
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

int
notify_read_all(struct app *a, long long uid, long long upto)
{
	struct db *d = &a->db;
	struct dbq *s;
	int rc, n;

	if (db_begin(d) == -1 || (s = db_stmt(d, STMT_NOTE_READ_ALL)) == NULL) {
		db_rollback(d);
		return -1;
	}
	dbq_bind_i64(s, 1, uid);
	dbq_bind_i64(s, 2, upto);
	rc = dbq_step(s);
	db_done(s);
	n = db_changes(d);
	/* Exactly the rows this statement changed: one that arrives after
	 * it stays unread and counted. */
	if (rc != DBQ_DONE || commit_read(a, uid, n) == -1) {
		db_rollback(d);
		return -1;
	}
	return n;
}

int
marker_put(struct app *a, long long uid, const char *kind, long long key,
    long long value)
{
	struct dbq *s = db_stmt(&a->db, STMT_MARKER_PUT);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, uid);
	dbq_bind_text(s, 2, kind, -1);
	dbq_bind_i64(s, 3, key);
	dbq_bind_i64(s, 4, value);
	rc = dbq_step(s);
	db_done(s);
	if (rc != DBQ_DONE)
		return -1;
	bcache_forget(a, uid);
	return 0;
}
