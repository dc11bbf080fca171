/* moved.h -- which counters moved while a reconciliation read them.
 *
 * A run (reconcile.c) reads a family's truth and durable values from SQL
 * at one moment and each key's Redis state at a later one, and compares
 * them: a key whose truth is not its durable value plus its pending
 * delta is a candidate, corrected exactly under a fence (settle.h).  The
 * comparison is only fair for a key nothing touched in between.  A key
 * one short whose author posts between the two reads looks right (the
 * truth without the post, Redis with it) and would stay one short; the
 * same with an action committed before the truth was read whose delta
 * reaches Redis only after the state was.  So a key that may have moved
 * is a candidate whatever the comparison says:
 *
 *   1. before the truth is read, every bucket is watched (meta w, a
 *      token of this run's own) and its flush version (meta v: every
 *      take and ack bumps it) and its changes per pending field
 *      ({cB}:seq: while the bucket is watched, every delta applied bumps
 *      the field; every correction does; a take drops them all) are
 *      read, one script a bucket (moved_begin);
 *   2. after it, the keys of every outbox row still in SQL (committed,
 *      maybe not yet in Redis) and of every backlog row (not in Redis)
 *      are gathered (moved_pending);
 *   3. with each key's state (settle_read_states(), after), moved_key()
 *      says 1 when the bucket's watch is no longer this run's token (it
 *      was dropped, by FLUSHALL or a run beside this one, so changes may
 *      have gone uncounted), when the version or the field's changes
 *      differ from step 1, when a flush batch holds part of the key
 *      (SQLite may apply it between the reads), or when the key is one of
 *      step 2's;
 *   4. the run's watch is dropped (moved_end), where it is still its own.
 * Everything that changes a key's pending delta bumps one of the two
 * while watched (capply.c, fbatch.c, taken.c, settle.c), so a key for
 * which moved_key() says 0 had the same Redis state at both reads, and no
 * action on it was in flight: the comparison is exact.  A busy key costs a correction that
 * finds it right; a site where every key is busy pays one per key.
 *
 * Why a watch: seq has no other reader.  Bumped on every change, it was
 * one more write a counter a like (applied again by every replica) for a
 * reader that runs minutes a day; the script that applies a delta reads
 * meta w in the HMGET it already made for o.  A run that dies leaves its
 * watch behind: changes are counted until the next run's end drops it,
 * which costs writes, never a count.
 */
#ifndef TALLY_MOVED_H
#define TALLY_MOVED_H

#include <stddef.h>

#include "count/counters.h"
#include "count/settle.h"
#include "store/app.h"

/* One pending field's changes when step 1 read them. */
struct moved_seq {
	int		bucket;
	char		field[64];
	char		count[24];
};

/* A pending delta's key (step 2). */
struct moved_keyid {
	long long	k1, k2;
};

struct moved {
	enum family		 fam;
	char			 token[48];	/* this run's watch (meta w) */
	char			(*ver)[48];	/* CSTORE_BUCKETS versions */
	struct moved_seq	*seq;		/* sorted by bucket, field */
	size_t			 nseq;
	struct moved_keyid	*keys;		/* sorted */
	size_t			 nkeys;
};

/* Step 1 for family fam, into *m (ended by moved_end and freed by
 * moved_free even on failure).  0, or -1 when Redis failed. */
int	moved_begin(struct app *, enum family fam, struct moved *m);
/* Step 2.  0, or -1 when SQLite failed. */
int	moved_pending(struct app *, struct moved *m);
/* Step 3: 1 when the key e, whose state after is st, may have moved. */
int	moved_key(const struct moved *, const struct rec_entry *e,
	    const struct rstate *st);
/* Step 4: every bucket m still watches is unwatched (best effort: a
 * watch left behind costs writes, not counts). */
void	moved_end(struct app *, const struct moved *m);
void	moved_free(struct moved *);

#endif
