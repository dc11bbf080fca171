/* follow.c -- follow and unfollow; see follow.h. */
#include <stdlib.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/log.h"
#include "count/cstore.h"
#include "count/outbox.h"
#include "social/bcache.h"
#include "social/follow.h"
#include "social/notify.h"
#include "social/timeline.h"
#include "store/dbq.h"

/* What the followee brings to a home timeline: their newest visible
 * posts at their publication, then the newest posts they reposted at the
 * repost's time (ids and scores, at most 2 * TL_CAP); the count, -1. */
static int
followee_entries(struct app *a, long long uid, long long *ids,
    long long *scores)
{
	static const enum stmt sts[2] = { STMT_PROFILE_SQL,
	    STMT_REPOSTS_OF_USER };
	struct dbq *s;
	int i, n = 0, rc = DBQ_DONE;

	for (i = 0; i < 2 && rc != DBQ_ERR; i++) {
		if ((s = dbq_stmt(a->db, sts[i])) == NULL)
			return -1;
		dbq_bind_i64(s, 1, uid);
		dbq_bind_int(s, 2, TL_CAP);
		if (i == 0)
			dbq_bind_i64(s, 3, 0);
		while (n < (i + 1) * TL_CAP && (rc = dbq_step(s)) == DBQ_ROW) {
			ids[n] = dbq_i64(s, 0);
			scores[n] = dbq_i64(s, 1);
			n++;
		}
		dbq_done(s);
	}
	return rc == DBQ_ERR ? -1 : n;
}

/* Runs the follow INSERT or DELETE; the follow time, 0 when nothing
 * changed, -1 on error. */
static long long
follow_row(struct db *d, enum stmt st, long long follower, long long followee)
{
	struct dbq *s = dbq_stmt(d, st);
	long long t = 0;
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, follower);
	dbq_bind_i64(s, 2, followee);
	if (st == STMT_FOLLOW_INSERT)
		dbq_bind_i64(s, 3, clock_wall_ms());
	rc = dbq_step(s);
	if (rc == DBQ_ROW) {
		t = dbq_i64(s, 0);
		rc = dbq_step(s);
	}
	dbq_done(s);
	if (rc != DBQ_DONE) {
		log_err("follow: %s", dbq_errmsg(d));
		return -1;
	}
	return t;
}

/* Commits the follow row created or deleted (add) with its counter
 * deltas and the followee's note notifications in the outbox, then sends
 * them.  0, or -1 (the caller rolls back). */
static int
commit_follow(struct app *a, long long follower, long long followee,
    int add, int note)
{
	struct row r = { ROW_FOLLOW, 0, follower, followee, 0, 1, 0 };
	struct outbox ob = { .n = 0 };

	outbox_formula(&ob, add ? NULL : &r, add ? &r : NULL);
	notify_outbox(&ob, followee, add ? note : -note);
	if (outbox_commit(a->db, &ob) == -1)
		return -1;
	outbox_send(a, &ob);
	return 0;
}

int
follow_add(struct app *a, long long follower, long long followee)
{
	long long t, *ids, *scores;
	int n, note = 0;

	if (db_begin(a->db) == -1)
		return -1;
	if ((t = follow_row(a->db, STMT_FOLLOW_INSERT, follower, followee)) <= 0 ||
	    (note = notify_add(a->db, followee, follower, "follow", 0, 0,
	    NULL)) == -1 ||
	    commit_follow(a, follower, followee, 1, note) == -1) {
		db_rollback(a->db);
		return t == 0 ? 0 : -1;
	}
	bcache_forget(a, follower);	/* its followed badge */
	/* Committed (autocommit); now the caches. */
	timeline_add(a, TL_FOLLOWERS, followee, 1, &t, &follower);
	timeline_add(a, TL_FOLLOWING, follower, 1, &t, &followee);
	ids = xcalloc(2 * TL_CAP, sizeof(*ids));
	scores = xcalloc(2 * TL_CAP, sizeof(*scores));
	if ((n = followee_entries(a, followee, ids, scores)) > 0)
		timeline_add(a, TL_HOME, follower, n, scores, ids);
	free(ids);
	free(scores);
	return 1;
}

int
follow_remove(struct app *a, long long follower, long long followee)
{
	long long t, *ids, *scores, left = -1;
	int n, note = 0;

	if (db_begin(a->db) == -1)
		return -1;
	if ((t = follow_row(a->db, STMT_FOLLOW_DELETE, follower, followee)) <= 0 ||
	    (note = notify_withdraw(a->db, followee, follower, "follow", 0, 0))
	    == -1 || commit_follow(a, follower, followee, 0, note) == -1) {
		db_rollback(a->db);
		return t == 0 ? 0 : -1;
	}
	bcache_forget(a, follower);
	timeline_rem(a, TL_FOLLOWERS, followee, 1, &follower);
	timeline_rem(a, TL_FOLLOWING, follower, 1, &followee);
	/* Each entry the followee brought goes, or moves back to where
	 * someone else still places it (their post reposted by another
	 * followee, a post another followee reposted too). */
	ids = xcalloc(2 * TL_CAP, sizeof(*ids));
	scores = xcalloc(2 * TL_CAP, sizeof(*scores));
	if ((n = followee_entries(a, followee, ids, scores)) > 0 &&
	    timeline_home_scores(a, STMT_HOME_SCORES, follower, ids, n,
	    scores) == 0)
		left = timeline_put(a, TL_HOME, follower, n, scores, ids);
	else if (n > 0)		/* not known: the rebuild knows */
		left = 0;
	free(ids);
	free(scores);
	if (left >= 0 && left < TL_REFILL)
		timeline_rebuild(a, TL_HOME, follower);
	return 1;
}

int
follow_exists(struct db *d, long long follower, long long followee)
{
	struct dbq *s = dbq_stmt(d, STMT_IS_FOLLOWING);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, follower);
	dbq_bind_i64(s, 2, followee);
	rc = dbq_step(s);
	dbq_done(s);
	return rc == DBQ_ROW ? 1 : rc == DBQ_DONE ? 0 : -1;
}
