/* fbatch.h -- what the flusher (flush.h) and recovery (recover.h) share
 * about a flush batch: its id, its lock key and the Redis scripts that
 * move a bucket's deltas through it.
 *
 * Ids are reserved in SQL, a block per flush (fbatch_reserve(): the
 * setting flush_next_batch, one small write transaction), so no id is
 * ever handed out twice -- not after Redis lost its data, nor after a
 * Redis Cluster failover lost the last writes of a master.  (They came
 * from a Redis INCR floored at the highest applied id: a failover that
 * lost the INCR of a batch taken but not yet applied handed its id out
 * again, and the second batch applied under it was refused as applied:
 * its deltas were lost.)  Flushers in several processes take disjoint
 * blocks; one that recovery fenced (below) gives up what it took and
 * reserves above the fence next time.  Per bucket: take_lua renames
 * pending to inflight, names the batch in meta (b) and answers with what
 * it took; held_lua returns inflight while the batch still holds it;
 * fence_lua makes every batch up to an id unable to take
 * (meta f), so a flusher declared dead that wakes up gives up.
 */
#ifndef TALLY_FBATCH_H
#define TALLY_FBATCH_H

#include <stddef.h>

#include "store/app.h"

extern struct rds_script fbatch_take_lua, fbatch_held_lua, fbatch_fence_lua;

/* The lock key that tells recovery batch b has a live flusher. */
void		fbatch_lock_key(long long b, char *out, size_t sz);
/* The highest batch id SQLite has applied, or -1. */
long long	fbatch_applied_max(struct app *);
/* Reserves n new batch ids, all above applied and above every id
 * reserved before: the first (the others follow it), or -1. */
long long	fbatch_reserve(struct app *, long long applied, int n);

#endif
