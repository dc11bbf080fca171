/* follow.c -- follow and unfollow; see follow.h. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fault.h"
#include "base/log.h"
#include "count/cstore.h"
#include "count/outbox.h"
#include "social/bcache.h"
#include "social/follow.h"
#include "social/notify.h"
#include "social/timeline.h"
#include "store/db.h"
#include "store/dbq.h"
#include "store/key.h"

/* What the followee brings to a home timeline: their newest visible
 * posts at their publication, then the newest posts they reposted at the
 * repost's time (ids and scores, at most 2 * TL_CAP); the count, -1.
 * *floor (when not NULL): the score down to which they are all there (a
 * kind read to its TL_CAP may have more in SQL: the last one read), or
 * 0. */
static int
followee_entries(struct app *a, long long uid, long long *ids,
    long long *scores, long long *floor)
{
	static const enum stmt sts[2] = { STMT_PROFILE_SQL,
	    STMT_REPOSTS_OF_USER };
	struct dbq *s;
	int i, n = 0, from, rc = DBQ_DONE;

	for (i = 0; i < 2 && rc != DBQ_ERR; i++) {
		if ((s = dbq_stmt(a->db, sts[i])) == NULL)
			return -1;
		dbq_bind_i64(s, 1, uid);
		dbq_bind_int(s, 2, TL_CAP);
		if (i == 0)
			dbq_bind_i64(s, 3, 0);
		from = n;
		while (n < (i + 1) * TL_CAP && (rc = dbq_step(s)) == DBQ_ROW) {
			ids[n] = dbq_i64(s, 0);
			scores[n] = dbq_i64(s, 1);
			n++;
		}
		dbq_done(s);
		if (floor != NULL && n - from == TL_CAP &&
		    scores[n - 1] > *floor)
			*floor = scores[n - 1];
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
		/* a row whose time is not a time (0: made by SQL) is a row */
		t = dbq_i64(s, 0) > 0 ? dbq_i64(s, 0) : 1;
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

/* A follow's Redis side, once committed: the follower's followed badge,
 * both follow lists, the followee's posts in the follower's home.  0, or
 * -1 when the followee's posts could not be read (the note stays, for
 * the worker to do it again; Redis failing marks the timelines stale,
 * tlstale.h). */
static int
after_follow(struct app *a, long long follower, long long followee,
    long long t)
{
	long long *ids, *scores, floor = 0;
	int n;

	bcache_forget(a, follower);	/* its followed badge */
	timeline_add(a, TL_FOLLOWERS, followee, 1, &t, &follower);
	timeline_add(a, TL_FOLLOWING, follower, 1, &t, &followee);
	ids = xcalloc(2 * TL_CAP, sizeof(*ids));
	scores = xcalloc(2 * TL_CAP, sizeof(*scores));
	if ((n = followee_entries(a, followee, ids, scores, &floor)) > 0 &&
	    timeline_add(a, TL_HOME, follower, n, scores, ids) >= 0 &&
	    floor > 0)
		/* the followee's older ones were not read: the home is
		 * whole down to the last read, and cut there */
		timeline_cut_below(a, TL_HOME, follower, floor);
	free(ids);
	free(scores);
	return n < 0 ? -1 : 0;
}

/* The unfollow's places of the followee's entries in follower's home
 * (ids, scores: n), read after its commit, put exactly (an entry goes
 * down or out).  A repost or a follow that committed between that read
 * and the put, its add made before the put, was undone by it: the post
 * out of the home, or below SQL's place, for good.  The places are read
 * again after the put and put again where they moved, three rounds at
 * most, as an unrepost's (fanout.c unrepost_put()); one committed after
 * a read adds after it (GT).  The set's size, or < 0 as timeline_put(). */
static long long
home_put_exact(struct app *a, long long follower, int n, long long *ids,
    long long *scores)
{
	long long *now = xcalloc((size_t)n, sizeof(*now)), left;
	int i, k = n, m, round;

	left = timeline_put(a, TL_HOME, follower, n, scores, ids);
	for (round = 0; left >= 0 && k > 0 && round < 2; round++) {
		db_reads_end(a->db);	/* what committed meanwhile */
		if (timeline_home_scores(a, STMT_HOME_SCORES, follower, ids, k,
		    now) != 0)
			break;
		for (i = 0, m = k, k = 0; i < m; i++)
			if (now[i] != scores[i]) {
				ids[k] = ids[i];
				scores[k++] = now[i];
			}
		if (k > 0)
			left = timeline_put(a, TL_HOME, follower, k, scores,
			    ids);
	}
	free(now);
	return left;
}

/* An unfollow's, once committed; as after_follow(). */
static int
after_unfollow(struct app *a, long long follower, long long followee)
{
	long long *ids, *scores, left = -1;
	int n;

	bcache_forget(a, follower);
	timeline_rem(a, TL_FOLLOWERS, followee, 1, &follower);
	timeline_rem(a, TL_FOLLOWING, follower, 1, &followee);
	/* Each entry the followee brought goes, or moves back to where
	 * someone else still places it (their post reposted by another
	 * followee, a post another followee reposted too). */
	ids = xcalloc(2 * TL_CAP, sizeof(*ids));
	scores = xcalloc(2 * TL_CAP, sizeof(*scores));
	if ((n = followee_entries(a, followee, ids, scores, NULL)) > 0 &&
	    timeline_home_scores(a, STMT_HOME_SCORES, follower, ids, n,
	    scores) == 0) {
		fault_point("unfollow-scored");
		left = home_put_exact(a, follower, n, ids, scores);
	} else if (n > 0)		/* not known: the rebuild knows */
		left = 0;
	free(ids);
	free(scores);
	if (left >= 0 && left < TL_REFILL)
		timeline_rebuild(a, TL_HOME, follower);
	return n < 0 ? -1 : 0;
}

/* The note of a follow or unfollow, made in its transaction before the
 * commit ("<follower>:<followee>:<pid>:<us>", scored by the time): the
 * note (malloc'd), or NULL when Redis failed. */
static char *
note_make(struct app *a, long long follower, long long followee)
{
	char *m, now[24], buf[96];
	rds_reply *rep;

	snprintf(buf, sizeof(buf), "%lld:%lld:%ld:%lld", follower, followee,
	    (long)getpid(), clock_mono_us());
	m = xstrdup(buf);
	snprintf(now, sizeof(now), "%lld", clock_wall_ms());
	if ((rep = rds_cmdv(a->rds, "ZADD", KEY_FOLLOW_NOTES, now, m, NULL)) !=
	    NULL && rds_type(rep) == RDS_INTEGER) {
		rds_free(rep);
		return m;
	}
	if (rep != NULL)
		rds_free(rep);
	free(m);
	return NULL;
}

static void
note_drop(struct app *a, char *note)
{
	rds_reply *rep;

	if (note == NULL)
		return;
	if ((rep = rds_cmdv(a->rds, "ZREM", KEY_FOLLOW_NOTES, note, NULL)) !=
	    NULL)
		rds_free(rep);
	free(note);
}

/* When follower followed followee: the time, 0 not, -1 on an error. */
static long long
follow_time(struct db *d, long long follower, long long followee)
{
	struct dbq *s = dbq_stmt(d, STMT_IS_FOLLOWING);
	long long t = 0;
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, follower);
	dbq_bind_i64(s, 2, followee);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		t = dbq_i64(s, 0);
	dbq_done(s);
	return rc == DBQ_ROW ? (t > 0 ? t : 1) : rc == DBQ_DONE ? 0 : -1;
}

/* A note's work as the follow stands (t: its time, 0 none), done again
 * while the follow changed under it (a follow or unfollow of the pair
 * whose own work may have come before this): up to three times.  0, or
 * -1 when SQL failed (the note stays). */
static int
redo(struct app *a, long long follower, long long followee, long long t)
{
	long long now;
	int i;

	for (i = 0; i < 3; i++) {
		if ((t > 0 ? after_follow(a, follower, followee, t) :
		    after_unfollow(a, follower, followee)) == -1)
			return -1;
		db_reads_end(a->db);	/* the follow as committed now */
		if ((now = follow_time(a->db, follower, followee)) < 0)
			return -1;
		if (now == t)
			return 0;
		t = now;
	}
	return 0;
}

/* A follow (add) or an unfollow: the row, the followee's notification,
 * the deltas, then the Redis side, noted before the commit (follow.h):
 * before the transaction even, so that its round trip does not hold the
 * writers' lock (a note is done as the follow stands, whatever it was
 * for). */
static int
follow_change(struct app *a, long long follower, long long followee, int add)
{
	long long t;
	char *mark = note_make(a, follower, followee);
	int note = 0;

	if (db_begin(a->db) == -1) {
		note_drop(a, mark);
		return -1;
	}
	if ((t = follow_row(a->db, add ? STMT_FOLLOW_INSERT :
	    STMT_FOLLOW_DELETE, follower, followee)) <= 0 ||
	    (note = add ? notify_add(a->db, followee, follower, "follow", 0, 0,
	    NULL) : notify_withdraw(a->db, followee, follower, "follow", 0,
	    0)) == -1)
		goto fail;
	if (commit_follow(a, follower, followee, add, note) == -1)
		goto fail;
	/* redone while the follow changed under it: an unfollow on one
	 * host whose timeline put came after a follow's on another took
	 * the followee's posts out of a home that follows them */
	if (redo(a, follower, followee, add ? t : 0) == -1)
		free(mark);	/* the note stays: the worker's, redone */
	else
		note_drop(a, mark);
	return 1;
fail:
	db_rollback(a->db);
	note_drop(a, mark);
	return t == 0 ? 0 : -1;
}

int
follow_add(struct app *a, long long follower, long long followee)
{
	return follow_change(a, follower, followee, 1);
}

int
follow_remove(struct app *a, long long follower, long long followee)
{
	return follow_change(a, follower, followee, 0);
}

int
follow_reclaim(struct app *a, long long grace_ms)
{
	char until[24];
	rds_reply *rep;
	long long follower, followee, t;
	size_t i;
	int n = 0;

	snprintf(until, sizeof(until), "%lld", clock_wall_ms() - grace_ms);
	if ((rep = rds_cmdv(a->rds, "ZRANGEBYSCORE", KEY_FOLLOW_NOTES, "-inf",
	    until, "LIMIT", "0", "100", NULL)) == NULL)
		return -1;
	for (i = 0; rds_type(rep) == RDS_ARRAY && i < rds_n(rep); i++) {
		const char *m = rds_str(rds_at(rep, i));

		if (sscanf(m, "%lld:%lld:", &follower, &followee) == 2) {
			/* as the truth is now, whatever the action was */
			if ((t = follow_time(a->db, follower, followee)) < 0)
				break;	/* the note stays: next time */
			log_warn("follow %lld -> %lld: its timelines were left "
			    "undone (its writer died, or SQL failed); done "
			    "now", follower, followee);
			if (redo(a, follower, followee, t) == -1)
				break;	/* the note stays: next time */
		}
		rds_free(rds_cmdv(a->rds, "ZREM", KEY_FOLLOW_NOTES, m, NULL));
		n++;
	}
	rds_free(rep);
	return n;
}

int
follow_exists(struct db *d, long long follower, long long followee)
{
	long long t = follow_time(d, follower, followee);

	return t < 0 ? -1 : t > 0;
}
