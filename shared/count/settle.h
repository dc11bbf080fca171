/* settle.h -- one step of reconciliation (reconcile.h): a counter's Redis
 * state, and the exact correction of candidates that may be busy.
 *
 * settle_read_states() reads, per key, the bucket's flush version, the
 * live value, the pending delta, the in-flight batch with its amount and
 * the key's changes since the last take, in one pipeline (no fence: what
 * reconcile.c compares to pick candidates, and to see which keys moved).
 *
 * settle_keys() corrects candidates without waiting for them to go
 * quiet.  Per round, for every candidate still open:
 *   1. a fence (fence_lua): from now on every delta Redis applies to the
 *      key is also written to the fence's log with its outbox row id
 *      (capply.c), and the key's state is read;
 *   2. one SQL read snapshot: the newest outbox row id N, and per key
 *      its recount T, durable value D, backlog version and whether its
 *      in-flight batch is applied.  Row ids grow with commit order, so
 *      the snapshot holds exactly the actions of rows up to N;
 *   3. the outbox rows up to N that touch a key are applied again (at
 *      most once, as ever): what T holds is now in Redis, or will never
 *      be (its deltas went to the backlog, which T covers);
 *   4. one script per key (fix_lua): the value Redis should hold is T
 *      plus the logged deltas of rows above N (their actions came after
 *      the snapshot); the difference to D + pending (+ the inflight part)
 *      goes to pending, live is set, the fence ends.  It refuses only
 *      when the fence is gone (a stale one dropped, Redis emptied) or a
 *      flush's take or ack moved the bucket (meta v): the next round,
 *      milliseconds later, tries again;
 *   5. the backlog rows of fixed keys go, if their version did not move.
 * The likes, follows and reads that land meanwhile are neither lost nor
 * refused: the key never has to be quiet.  A key still open after
 * SETTLE_ROUNDS (another settler holds it each time, flushes in the way)
 * counts as wrong and waits in the backlog as a zero delta, which the
 * worker settles within seconds (backlog_settle()).
 */
#ifndef TALLY_SETTLE_H
#define TALLY_SETTLE_H

#include <stddef.h>

#include "count/counters.h"
#include "count/recreport.h"
#include "store/app.h"

/* A counter: its keys, truth t and durable value d; owner: a post's
 * author (delta.owner), else 0. */
struct rec_entry {
	long long	k1, k2, t, d, owner;
};

/* One key's Redis state, parsed from state_lua's reply. */
struct rstate {
	int		ok;		/* read: 0 when nothing is known */
	char		ver[48];	/* meta v: takes and acks (settle.c) */
	char		pend[24];	/* raw pending, as read */
	int		has_live;
	long long	live;
	char		batch[24];	/* the batch holding inflight, or "" */
	long long	fly;		/* its amount for this key */
	char		seq[24];	/* its changes since the bucket's last
					   take ({cB}:seq), "" none */
	char		watch[48];	/* the watching run's token (meta w),
					   "" none */
};

/* Reads the Redis state of n entries in one pipeline; -1 if Redis failed. */
int	settle_read_states(struct app *, enum family, struct rec_entry *,
	    size_t n, struct rstate *);
/* Settles n candidates (t and d are read again); dry: report only.  Adds
 * to rf (wrong, fixed, queued).  0; SETTLE_WAITED when a write
 * transaction of tally's stayed open past the outbox's wait (a writer
 * stalled, or waiting on a lock: outbox_horizon()), so that what was not
 * settled is queued for the worker, not waited for again; or -1 when
 * SQLite or Redis failed (what was not settled then is queued too). */
#define SETTLE_WAITED	1
int	settle_keys(struct app *, enum family, int dry, struct rec_entry *,
	    size_t n, struct rec_family *rf);

#endif
