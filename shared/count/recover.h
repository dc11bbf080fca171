/* recover.h -- recovery of flush batches whose flusher died.
 *
 * A flusher killed at any point leaves buckets whose meta names its batch
 * B with no {flush}:lock:<B>.  Recovery applies what such a batch holds
 * unless SQLite has B already (the flushes row: a batch is never applied
 * twice), then acks it.  See flush.h for the batch's whole life.
 */
#ifndef TALLY_RECOVER_H
#define TALLY_RECOVER_H

#include "store/app.h"

/* Finishes the batches of dead flushers (in flight with no lock).
 * Returns how many, or -1. */
int	recover_batches(struct app *);

#endif
