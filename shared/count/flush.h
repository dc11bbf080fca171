/* flush.h -- moving pending deltas from Redis into SQLite's counters.
 *
 * One batch B (an id reserved in SQL, fbatch.h) sweeps the buckets of
 * cstore.h in order, FLUSH_PIPE of them per pipelined round, the next
 * round sent before the current one is read, so Redis works while
 * SQLite does: the buckets the sweep's first look (an HLEN each) found
 * pending, or, for flush_now(), all.  Per bucket a script renames
 * {c<n>}:pending to {c<n>}:inflight and notes B in {c<n>}:meta (take:
 * O(1), atomic with every change to the bucket); a bucket whose
 * inflight part still belongs to an unfinished batch is skipped.  The
 * taken counters (taken.h), sorted in the table's own order (SQLite
 * then walks its B-tree forward), go into one SQLite transaction of
 * UPSERTs that also records B in flushes; after its commit the
 * leaderboards take the new values and a script per bucket drops the
 * inflight hash if B still holds it (ack).  The next batch goes on from
 * there, taken from Redis while a thread applies the previous one to
 * SQLite (the database connection is the thread's alone meanwhile; the
 * previous batch's boards and acks, Redis only, run beside it too).
 * The first batch is one round, so SQLite starts early; a later one
 * stops taking at FLUSH_FIELDS counters, or sooner, once it holds a
 * 32nd of that and the batch before it will be applied by the time this
 * one has read its last round and sorted (timed as the flush goes):
 * SQLite seldom waits.  The last batch is FLUSH_TAIL buckets: few acks
 * wait for the last commit.
 *
 * While B runs, {flush}:lock:<B> lives (refreshed every round).  A
 * flusher killed at any point leaves buckets whose meta names B with no
 * lock: recover_batches() finishes them -- applies what they hold unless
 * SQLite has B already (a B applied twice is refused by the flushes
 * row), then acks.  A flusher that only stalled past its lock may wake
 * and take on: recovery first fences the dead ids in every bucket's meta
 * (field f), so such a take is refused and the waking flusher abandons
 * its batch.  Neither loses nor double-applies a delta.  flush_now()
 * (tallyctl flush) also waits for the buckets a live batch holds.
 */
#ifndef TALLY_FLUSH_H
#define TALLY_FLUSH_H

#include "store/app.h"

#define FLUSH_FIELDS	100000	/* counters a batch stops taking at */
#define FLUSH_PIPE	16	/* buckets per pipelined round */
#define FLUSH_TAIL	(2 * FLUSH_PIPE)	/* the last batch's buckets */
#define FLUSH_GROW	3	/* a batch holds a third of what the flush
				   applied before it, at least (flush.c) */
#define FLUSH_WAIT_MS	15000	/* tallyctl flush outwaits a held bucket
				   (a batch's lock lives 5 s unrefreshed) */
#define FLUSH_POLL_MS	50	/* ... sweeping again this often */

struct flush_stats {
	long long	batches;
	long long	buckets;	/* buckets taken */
	long long	counters;	/* rows written to SQLite */
	long long	total;		/* sum of |delta| moved */
	long long	skipped;	/* buckets another flusher's batch held */
	long long	apply_us;	/* CPU of the batches' SQLite threads */
	int		outbox_waits;	/* flush_now(): outbox rows wait for
					   an open transaction */
	int		stale;		/* flush_now(): its last sweep met
					   Redis's epoch moving on */
};

#define FLUSH_SYNC	1	/* flush_all(): the WAL synced at the end */

/* Sweeps every bucket once (at most max_batches batches).  When no
 * bucket has a pending field it takes nothing and writes nothing to SQL
 * (no batch ids reserved), so an idle worker's sweeps leave every
 * reader's SQLite page cache whole.  With FLUSH_SYNC in flags, what it
 * committed is on disk when it returns (the WAL synced beside the last
 * acks), else as SQLite's synchronous = NORMAL has it.  0; FLUSH_STALE
 * when a batch was refused because Redis's epoch moved on while it was
 * taken (fbatch.h: Redis may have lost its data; the batch is finished
 * as recovery would, its views kept, recover.h; the sweep stopped
 * there); or -1 when Redis or SQLite failed (what was taken is finished
 * by a later recover_batches). */
#define FLUSH_STALE	(-2)
int	flush_all(struct app *, int max_batches, int flags,
	    struct flush_stats *);

/* "Flush now" (tallyctl flush): recovers, then sweeps until a sweep
 * skips no bucket, so every delta pending when it was called is in
 * SQLite, on disk, when it returns.  A bucket another live flusher's
 * batch holds (the worker's) is waited for, polling, for at most
 * wait_ms; a dead flusher's is finished once its lock expires; outbox
 * rows a transaction still open may precede (PostgreSQL) are waited for
 * as long.  0; 1 when wait_ms ran out with buckets still held
 * (st->skipped says how many), outbox rows still waiting
 * (st->outbox_waits) or Redis's epoch still moving (st->stale); -1 when
 * Redis or SQLite failed.  st accumulates over the sweeps (skipped: the
 * last sweep's). */
int	flush_now(struct app *, long long wait_ms, struct flush_stats *);

/* Counters with deltas not yet in SQLite (pending or in flight), or -1. */
long long flush_pending(struct app *);

#endif
