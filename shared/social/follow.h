/* follow.h -- the follow graph: SQLite rows, and the Redis sets and home
 * timeline that follow from them.  Both calls are idempotent: the row
 * change says whether anything changed (INSERT ... ON CONFLICT DO NOTHING
 * RETURNING, DELETE ... RETURNING), and only a real change touches Redis.
 */
#ifndef TALLY_FOLLOW_H
#define TALLY_FOLLOW_H

#include "store/app.h"

/* 1 when the follow is new, 0 when it existed, -1 on error.  Copies the
 * followee's newest posts (up to the cap) into the follower's home. */
int	follow_add(struct app *, long long follower, long long followee);
/* 1 when a follow was removed, 0 when there was none, -1 on error.
 * Takes the followee's posts out of the follower's home and refills it
 * from SQLite when fewer than TL_REFILL entries are left. */
int	follow_remove(struct app *, long long follower, long long followee);
/* A follow's or unfollow's Redis side (its lists, the follower's home)
 * is noted in KEY_FOLLOW_NOTES before its transaction (so that the round
 * trip does not hold the writers' lock), and the note dropped once it is
 * done: a process killed between its commit and then leaves the note.  The worker takes notes older than grace_ms over
 * and does that side as the follow stands in SQL then (a follow rolled
 * back or undone since: its unfollow's).  How many, or -1. */
int	follow_reclaim(struct app *, long long grace_ms);
/* The grace: a note is made before its transaction, which may wait
 * DB_BUSY_MS for the writers' lock (store/db.h); taken by the worker
 * before its commit, its work would race the writer's own. */
#define FOLLOW_NOTE_GRACE_MS	15000
/* 1 when follower follows followee, 0 not, -1 error. */
int	follow_exists(struct db *, long long follower, long long followee);

#endif
