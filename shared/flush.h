/* flush.h -- moving pending deltas from Redis into SQLite's counters.
 *
 * One batch: a script pops up to N dirty hashes into the batch's
 * manifest {flush}:batch:<B> (B from INCR {flush}:seq); for each hash a
 * script moves every pending "~F" to "^B:F" (take); one SQLite
 * transaction records B in flushes and adds the coalesced sums to
 * counters (a B already recorded is not applied again); then a script
 * per hash deletes "^B:*" (ack), and the manifest goes.  A flusher killed
 * at any point leaves a manifest behind; flush_recover() finishes it:
 * take again (only if B is not applied yet), apply-once, ack.  Neither
 * loses nor double-applies a delta.
 */
#ifndef TALLY_FLUSH_H
#define TALLY_FLUSH_H

#include "app.h"

#define FLUSH_BATCH	2000	/* hashes per batch */

struct flush_stats {
	long long	batches;
	long long	hashes;		/* objects flushed */
	long long	counters;	/* rows written to SQLite */
	long long	total;		/* sum of |delta| moved */
};

/* Flushes until nothing is dirty (at most max_batches).  0, or -1 when
 * Redis or SQLite failed (what was taken is finished by a later
 * flush_recover). */
int	flush_all(struct app *, int max_batches, struct flush_stats *);

/* Finishes batches left behind by a dead flusher (manifests older than
 * grace_ms with no live lock).  Returns how many, or -1. */
int	flush_recover(struct app *, long long grace_ms);

/* Hashes waiting in the dirty set, or -1. */
long long flush_pending(struct app *);

#endif
