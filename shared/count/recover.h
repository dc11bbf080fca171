/* recover.h -- recovery of flush batches whose flusher died.
 *
 * A flusher killed at any point leaves buckets whose meta names its batch
 * B with no {flush}:lock:<B>.  Recovery applies what such a batch holds
 * unless SQLite has B already (the flushes row: a batch is never applied
 * twice), then acks it.  See flush.h for the batch's whole life.
 */
#ifndef TALLY_RECOVER_H
#define TALLY_RECOVER_H

#include "count/taken.h"
#include "store/app.h"

/* Finishes the batches of dead flushers (in flight with no lock).
 * Returns how many, or -1. */
int	recover_batches(struct app *);

/* The flusher's own batch b, which it took (mine) and SQL refused as
 * stale (Redis's epoch moved on meanwhile, fbatch.h: Redis may have lost
 * it): what Redis still holds of it is applied under the new epoch and
 * acked, as a dead flusher's is (the repair run counted it in flight);
 * of each bucket Redis no longer holds, the counters no run recounts
 * (views) are applied from mine, their only copy -- the others are the
 * run's.  Called with the batch's lock still live.  0 or -1. */
int	recover_own(struct app *, long long b, const struct taken *mine);

#endif
