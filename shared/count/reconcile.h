/* reconcile.h -- recounting every counter from the truth rows, comparing
 * with SQLite's counters and Redis, and repairing both, while the site
 * keeps running.
 *
 * Per family: the catalog's GROUP BY (one read snapshot, no write lock)
 * against the counters table, merged by key, then every key's Redis state
 * (live value, pending, in-flight batches) in pipelined chunks.  A key
 * whose truth T differs from durable D + pending P, or whose live value
 * differs from D + P, is a candidate.  A candidate is settled without
 * losing concurrent increments (never a plain SET of the recount): read its
 * Redis state, recount it alone and read D in one SQLite snapshot, wait a
 * grace period (so an action committed before the snapshot has applied
 * its delta), then one Lua script applies the correction c = T - (D + P)
 * as a pending delta (flushed like any other) and sets the live value to
 * T -- but only if neither the pending value nor the flush version moved
 * since the first read; otherwise it is tried again.  The repair is a
 * delta, so increments landing meanwhile are kept.  posts.like_count is
 * checked and repaired first, in short transactions of 5000 posts; the
 * notification groups' stored size and unread count (social/notify.h)
 * last, the same way, 5000 groups a transaction.
 */
#ifndef TALLY_RECONCILE_H
#define TALLY_RECONCILE_H

#include "count/counters.h"
#include "count/recreport.h"
#include "store/app.h"

/* Called after each step with the percentage done and the index of the
 * next step (the checkpoint); returning -1 stops the run. */
typedef int (*rec_progress)(void *arg, int pct, int next,
    const struct rec_report *);

/* Runs steps from..end.  dry: report without repairing.  0, or -1 when
 * SQLite or Redis failed (the report so far is kept). */
int	reconcile(struct app *, int dry, int from, struct rec_report *,
	    rec_progress, void *arg);

/* The continuous drift check: settles n random counters of fam without
 * repairing them; adds to *checked and *wrong.  0; SETTLE_WAITED (a
 * writer's transaction open: nothing compared, nothing added; settle.h);
 * or -1. */
int	reconcile_sample(struct app *, enum family fam, int n,
	    long long *checked, long long *wrong);

#endif
