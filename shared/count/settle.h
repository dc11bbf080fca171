/* settle.h -- one step of reconciliation (reconcile.h): a counter's Redis
 * state, and the settling of candidates.
 *
 * settle_read_states() reads, per key, the bucket's flush version, the live
 * value, the pending delta and the in-flight batch with its amount, in
 * one pipeline.  settle_keys() then, per candidate: recounts it alone and
 * reads its durable value in one SQLite snapshot, waits a grace period,
 * applies the outbox's waiting rows, and runs one script that adds the
 * correction T - (D + P) to pending and sets live to T -- only if neither
 * the version nor the pending delta moved since the read (else it tries
 * again, up to a few rounds; what still moves is "unsettled").  The
 * repair is a delta: increments landing meanwhile are kept.
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
	char		ver[48];	/* "v:s": meta v, then seq (settle.c) */
	char		pend[24];	/* raw pending, as read */
	int		has_live;
	long long	live;
	char		batch[24];	/* the batch holding inflight, or "" */
	long long	fly;		/* its amount for this key */
};

/* Reads the Redis state of n entries in one pipeline; -1 if Redis failed. */
int	settle_read_states(struct app *, enum family, struct rec_entry *,
	    size_t n, struct rstate *);
/* Settles n candidates (t and d are read again); dry: report only.  Adds
 * to rf.  0, or -1 when SQLite or Redis failed. */
int	settle_keys(struct app *, enum family, int dry, struct rec_entry *,
	    size_t n, struct rec_family *rf);

#endif
