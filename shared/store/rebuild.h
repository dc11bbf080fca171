/* rebuild.h -- rebuilding a Redis structure from SQLite, by one process
 * at a time (a timeline, a leaderboard, a cached profile).
 *
 * The rebuilder holds lock (SET NX with an expiry: a rebuilder that dies
 * holds it no longer than that).  When the structure has a completeness
 * marker ok, it reads "b" while the rebuild runs (writers keep adding,
 * readers wait or ask SQLite) and "1" once the structure is whole.  Every
 * way out releases the lock: rebuild_done() after success, rebuild_fail()
 * after a failure, which also drops ok, so readers go to SQLite instead
 * of waiting on a rebuild that will not finish.
 */
#ifndef TALLY_REBUILD_H
#define TALLY_REBUILD_H

#include "store/rds.h"

/* Takes lock for ms milliseconds.  1 taken, 0 another process holds it,
 * -1 Redis failed. */
int	rebuild_lock(struct rds *, const char *lock, int ms);
/* Takes lock for ms milliseconds and, when taken, starts the rebuild:
 * deletes the n keys of clear (the old structure, a scratch copy; 6 at
 * most), then sets ok (when not NULL) to "b"; one script, one round trip
 * (lock, ok and clear share a hash tag).  1 taken and started, 0 another
 * process holds the lock, -1 Redis failed (nothing known held: a lock
 * the script took lapses as a dead rebuilder's). */
int	rebuild_begin(struct rds *, const char *lock, int ms, const char *ok,
	    const char *const *clear, int n);
/* The structure is whole: ok (when not NULL) becomes "1", the lock is
 * released, in one round trip.  0, or -1 after rebuild_fail(). */
int	rebuild_done(struct rds *, const char *lock, const char *ok);
/* Drops ok (when not NULL) and the lock; best effort. */
void	rebuild_fail(struct rds *, const char *lock, const char *ok);

#endif
