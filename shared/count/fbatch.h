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
 *
 * Redis's epoch (the setting redis_epoch) moves on whenever Redis may
 * have lost what it held -- emptied, a cluster's master replaced -- before
 * the repair run that follows is even wished for (the worker's
 * job_redis_gen(), job_topology()).  A batch is read with the epoch of the
 * moment before its take and applied only if the epoch is still that one
 * (taken_apply()).  A batch taken from the Redis that was lost and applied
 * after the run recounted its counters from the truth (the truth has
 * them, D + P lacks them: the run put them back as a pending delta)
 * counted its deltas twice in SQL; refused, its deltas are the run's.  A
 * refused batch taken from the new Redis (after the loss, before the
 * move) is still there: recovery applies it under the new epoch, and the
 * run counted it as in flight.  On PostgreSQL the move takes the epoch's
 * lock alone and a batch's transaction shares it, so a batch that read
 * the old epoch commits before the move does, and before the run reads.
 */
#ifndef TALLY_FBATCH_H
#define TALLY_FBATCH_H

#include <stddef.h>

#include "store/app.h"

extern struct rds_script fbatch_take_lua, fbatch_held_lua, fbatch_fence_lua;

/* The lock key that tells recovery batch b has a live flusher, and its
 * lifetime (ms, as a PX argument), renewed as the flusher goes. */
void		fbatch_lock_key(long long b, char *out, size_t sz);
#define FBATCH_LOCK_MS	"5000"
/* A batch's row in flushes is what refuses its second apply: by the
 * flusher that took it, stalled past its lock while recovery applied it,
 * or by recovery again.  Past FBATCH_KEEP_MS no batch is applied any
 * more (a flusher's lock lives seconds, recovery runs every ten), and
 * its row goes: one a second made the table grow for good.  The newest
 * row stays (the highest applied id, below).  fbatch_prune(): of the n
 * oldest rows, deletes those older than that; how many, or -1. */
#define FBATCH_KEEP_MS	(7LL * 24 * 3600 * 1000)
int		fbatch_prune(struct app *, long long now, int n);
/* The highest batch id SQLite has applied, or -1. */
long long	fbatch_applied_max(struct app *);
/* Reserves n new batch ids, all above applied and above every id
 * reserved before: the first (the others follow it), or -1.  *epoch:
 * Redis's epoch, read in the same transaction (before the take). */
long long	fbatch_reserve(struct app *, long long applied, int n,
		    long long *epoch);
/* Redis's epoch now, into *epoch: 0 or -1. */
int		fbatch_epoch(struct db *, long long *epoch);
/* In a batch's write transaction, before its first write: 1 when
 * Redis's epoch is still epoch, 0 when it moved on, -1 on an error. */
int		fbatch_epoch_holds(struct db *, long long epoch);
/* Moves Redis's epoch on (its own transaction): 0 or -1. */
int		fbatch_epoch_move(struct db *);

#endif
