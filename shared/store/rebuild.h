/* rebuild.h -- rebuilding a Redis structure from SQLite, by one process
 * at a time (a timeline, a leaderboard).
 *
 * The rebuilder holds lock (SET NX with an expiry: a rebuilder that dies
 * holds it no longer than that), its value the rebuilder's own token.
 * When the structure has a completeness marker ok, it reads "b" while
 * the rebuild runs (writers keep adding, readers wait or ask SQLite) and
 * "1" once the structure is whole.  Every way out releases the lock:
 * rebuild_done() after success, rebuild_fail() after a failure, which
 * also drops ok, so readers go to SQLite instead of waiting on a rebuild
 * that will not finish.  Both act only while the lock is still the
 * rebuilder's: one too slow for its lock (a long stall) whose lock
 * lapsed, and another's rebuild began, neither marks that other's
 * half-built structure whole nor ends it, nor frees its lock.
 */
#ifndef TALLY_REBUILD_H
#define TALLY_REBUILD_H

#include "store/rds.h"

/* A rebuilder's token: its lock's value. */
#define REBUILD_TOKEN	40

/* Takes lock for ms milliseconds and, when taken, starts the rebuild:
 * deletes the n keys of clear (the old structure, a scratch copy; 6 at
 * most), then sets ok (when not NULL) to "b"; one script, one round trip
 * (lock, ok and clear share a hash tag).  The lock's value, new, into
 * tok.  1 taken and started, 0 another process holds the lock, -1 Redis
 * failed (nothing known held: a lock the script took lapses as a dead
 * rebuilder's). */
int	rebuild_begin(struct rds *, const char *lock, int ms, const char *ok,
	    const char *const *clear, int n, char tok[REBUILD_TOKEN]);
/* The structure is whole: ok (when not NULL) becomes "1", the lock is
 * released, in one round trip; when the lock is still tok, and ok still
 * reads "b" (dropped meanwhile, it stays dropped: the lock is freed and
 * the structure not marked whole).  0; -1 after rebuild_fail(), or when
 * the lock was no longer tok (nothing done: the structure is another
 * rebuilder's now), or ok was dropped. */
int	rebuild_done(struct rds *, const char *lock, const char *ok,
	    const char *tok);
/* Drops ok (when not NULL) and the lock when the lock is still tok;
 * best effort. */
void	rebuild_fail(struct rds *, const char *lock, const char *ok,
	    const char *tok);

#endif
