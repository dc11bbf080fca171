/* fbatch.h -- what the flusher (flush.h) and recovery (recover.h) share
 * about a flush batch: its id, its lock key and the Redis scripts that
 * move a bucket's deltas through it.
 *
 * Ids come from {flush}:seq, never below the highest id SQLite recorded
 * as applied (a Redis that lost its data must not hand out an applied id
 * again).  Per bucket: take_lua renames pending to inflight and names the
 * batch in meta (b); held_lua returns inflight while the batch still
 * holds it; fence_lua makes every batch up to an id unable to take
 * (meta f), so a flusher declared dead that wakes up gives up.
 */
#ifndef TALLY_FBATCH_H
#define TALLY_FBATCH_H

#include <stddef.h>

#include "store/app.h"

extern struct rds_script fbatch_seq_lua, fbatch_take_lua, fbatch_held_lua,
    fbatch_fence_lua;

/* The lock key that tells recovery batch b has a live flusher. */
void		fbatch_lock_key(long long b, char *out, size_t sz);
/* The highest batch id SQLite has applied, or -1. */
long long	fbatch_applied_max(struct app *);
/* A new batch id above applied, or -1. */
long long	fbatch_next_id(struct app *, long long applied);

#endif
