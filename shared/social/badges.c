/* badges.c -- the badges; see badges.h. */
#include <stdio.h>
#include <stdlib.h>

#include "base/buf.h"
#include "base/clock.h"
#include "count/counters.h"
#include "count/cstore.h"
#include "social/badges.h"
#include "social/bcache.h"
#include "social/followed.h"
#include "social/notify.h"
#include "social/session.h"
#include "social/timeline.h"
#include "store/db.h"
#include "store/dbq.h"

static int
followed(struct app *a, long long uid, long long *total)
{
	long long *authors, *unread;
	int n, i;

	*total = 0;
	if ((n = followed_unread(a, uid, &authors, &unread)) == -1)
		return -1;
	for (i = 0; i < n; i++)
		*total += unread[i];
	free(authors);
	free(unread);
	return 0;
}

/* The slow path: SQLite markers and counts, then a refill of the cache
 * against the stamp of the poll that missed. */
static int
badges_compute(struct app *a, long long uid, const struct bcache_stamp *st,
    struct badges *b)
{
	struct delta d = { .fam = FAM_USER_UNREAD, .k1 = uid };
	long long latest, seen, lit, visited;
	struct count unread;
	struct dbq *s;

	/* refills the cache under the stamp's generation: read now (db.h
	 * db_reads_together()) */
	db_reads_end(a->db);
	/* the counter as the poll read it, in its round trip; read (or
	 * loaded) now only when it was not there */
	if (st->have_unread)
		unread.v = st->unread > 0 ? st->unread : 0;
	else if (cstore_get(a, &d, 1, &unread) != 0)
		return -1;	/* a failed read is no badge, never a 0 */
	b->notifications = unread.v;
	if ((s = dbq_stmt(a->db, STMT_BADGE_SCALARS)) == NULL)
		return -1;
	dbq_bind_i64(s, 1, uid);
	/* one row always (scalar subqueries): anything else failed, and
	 * is no badge -- read as "none seen", it answered 0 and cached
	 * every notice unread and the red dot lit for the cache's age */
	if (dbq_step(s) != DBQ_ROW) {
		dbq_done(s);
		return -1;
	}
	latest = dbq_i64(s, 0);
	seen = dbq_i64(s, 1);	/* NULL: 0 */
	lit = dbq_i64(s, 2);
	visited = dbq_is_null(s, 3) ? -1 : dbq_i64(s, 3);
	dbq_done(s);
	b->notices = latest > seen ? latest - seen : 0;
	b->red_dot = lit > 0 && lit > visited;
	if (followed(a, uid, &b->followed) == -1)
		return -1;
	bcache_fill(a, uid, st, seen, visited, b->followed, latest, lit);
	return 0;
}

int
badges_get(struct app *a, long long uid, struct badges *b)
{
	struct bcache_stamp st;

	if (bcache_get(a, uid, NULL, b, &st) == 1)
		return 0;
	return badges_compute(a, uid, &st, b);
}

void
badges_send(struct app *a, long long uid, struct badges_q *q)
{
	q->uid = uid;
	bcache_send(a, uid, NULL, &q->q);
}

void
badges_drop(struct badges_q *q)
{
	bcache_drop(&q->q);
}

void
badges_read(struct app *a, struct badges_q *q)
{
	bcache_read(a, &q->q);
}

int
badges_end(struct app *a, struct badges_q *q, struct badges *b)
{
	struct bcache_stamp st;

	if (bcache_end(a, &q->q, b, &st) == 1)
		return 0;
	return badges_compute(a, q->uid, &st, b);
}

#define POLL_MAX	16	/* polls read in one round trip, at most */

void
badges_poll_many(struct app *a, const char *const *sid, int n,
    long long *uid, struct badges *b, int *rc)
{
	char hex[POLL_MAX][SID_HEX_LEN + 1];
	struct bcache_q q[POLL_MAX];
	struct bcache_stamp st;
	int i, ok[POLL_MAX], got;

	if (n > POLL_MAX) {
		badges_poll_many(a, sid + POLL_MAX, n - POLL_MAX,
		    uid + POLL_MAX, b + POLL_MAX, rc + POLL_MAX);
		n = POLL_MAX;
	}
	/* every poll's commands queued before the first reply is read */
	for (i = 0; i < n; i++) {
		rc[i] = 0;
		uid[i] = 0;
		ok[i] = sid[i] != NULL &&
		    session_id_parse(sid[i], &uid[i], hex[i]) == 0;
		if (ok[i])
			bcache_send(a, uid[i], hex[i], &q[i]);
	}
	for (i = 0; i < n; i++)
		if (ok[i])
			bcache_read(a, &q[i]);
	for (i = 0; i < n; i++) {
		if (!ok[i])
			continue;
		got = bcache_end(a, &q[i], &b[i], &st);
		if (got == 1)
			rc[i] = 1;
		else if (got == 0)
			rc[i] = badges_compute(a, uid[i], &st, &b[i]) == 0 ?
			    1 : -1;
	}
}

int
badges_poll(struct app *a, const char *sid, long long *uid,
    struct badges *b)
{
	int rc;

	badges_poll_many(a, &sid, 1, uid, b, &rc);
	return rc;
}

void
badges_etag(const struct badges *b, char *out, size_t sz)
{
	snprintf(out, sz, "\"b-%lld-%lld-%lld-%d\"", b->notifications,
	    b->notices, b->followed, b->red_dot);
}

int
badges_notice(struct app *a, const char *title, const char *body,
    long long *id)
{
	struct dbq *s;
	int rc;

	/* One at a time, numbered after the last committed (STMT_NOTICE_
	 * INSERT): a sequence's gaps (an insert rolled back, PostgreSQL's
	 * after a crash) and its commits out of order were counted as
	 * notices, or hid one from a reader between */
	*id = 0;
	if (db_begin(a->db) == -1)
		return -1;
	if (dbq_lock_key(a->db, "notices", 0) == -1 ||
	    (s = dbq_stmt(a->db, STMT_NOTICE_INSERT)) == NULL) {
		db_rollback(a->db);
		return -1;
	}
	dbq_bind_text(s, 1, title, -1);
	dbq_bind_text(s, 2, body, -1);
	dbq_bind_i64(s, 3, clock_wall_ms());
	rc = dbq_step(s);
	*id = rc == DBQ_ROW ? dbq_i64(s, 0) : 0;
	dbq_done(s);
	if (*id <= 0 || db_commit(a->db) == -1) {
		db_rollback(a->db);
		*id = 0;
		return -1;
	}
	bcache_globals(a, *id, -1);
	return 0;
}

int
badges_light(struct app *a)
{
	long long now = clock_wall_ms(), prev;
	int rc;

	/* Strictly later than any earlier light: a visit to /news marks
	 * the light it saw (handlers/notify.c), so a new one is unseen by
	 * every reader, whenever its clock was read. */
	if (db_begin(a->db) == -1)
		return -1;
	/* a failed read is no 0: the dot would go back */
	if (dbq_lock_key(a->db, "setting:red_dot_at", 0) == -1 ||
	    dbq_setting_read(a->db, "red_dot_at", 0, &prev) == -1) {
		db_rollback(a->db);
		return -1;
	}
	rc = dbq_setting_put(a->db, "red_dot_at", (now > prev ? now : prev) + 1);
	if (rc == -1 || db_commit(a->db) == -1) {
		db_rollback(a->db);
		return -1;
	}
	bcache_globals(a, -1, (now > prev ? now : prev) + 1);
	return 0;
}
