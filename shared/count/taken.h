/* taken.h -- what one flush batch took from Redis (flush.h): the
 * counters of its buckets, put in the counters table's order, applied to
 * SQLite in one transaction with the batch's flushes row, then the
 * leaderboards and the acks.  Used by the sweep and by recovery alike.
 */
#ifndef TALLY_TAKEN_H
#define TALLY_TAKEN_H


#include "count/counters.h"
#include "store/app.h"
#include "store/db.h"

/* One counter a batch took: its delta, SQLite key and value after. */
struct item {
	struct delta	d;
	long long	val;		/* -1 until the UPSERT returns it */
	char		key[40];	/* counters_key() */
};

/* What a batch took: its buckets and counters. */
struct taken {
	int		*buckets;
	int		 nb, bcap;
	struct item	*it;
	int		 nds, cap;
	int		 applied;	/* items UPSERTed so far (atomic) */
	long long	 total;		/* sum of |delta| */
	int		 skipped;	/* buckets another batch held */
	int		 fenced;	/* the batch was declared dead */
};

void	taken_free(struct taken *);
/* Adds bucket b's fields (its inflight hash as HGETALL gives it: what
 * fbatch_take_lua took) to t; how many. */
int	taken_add(struct taken *, int b, const rds_reply *);
/* Adds to t the counters of from's bucket b that no reconciliation
 * recounts (views: no truth rows); how many. */
int	taken_add_unrecounted(struct taken *, int b, const struct taken *from);
/* Puts t in the counters table's order (once all is in). */
void	taken_sort(struct taken *);
/* Batch b's one SQLite transaction: t's UPSERTs (in t's order: sort it
 * first) and its flushes row, if Redis's epoch is still the one read
 * before the take (fbatch.h).
 * 1 applied now, 0 when another flusher had applied it (rolled back),
 * TAKEN_STALE when the epoch moved on (rolled back: the batch is the
 * repair run's, or recovery's if Redis still holds it), -1 on error
 * (logged, rolled back). */
#define TAKEN_STALE	(-2)
int	taken_apply(struct db *, long long b, long long epoch,
	    struct taken *);
/* After the commit: the leaderboards (with the values the UPSERTs
 * returned when have_vals, else those SQLite holds now), then the acks
 * of every bucket for batch.  lkey, when given, is the flusher's batch
 * lock: still held, it is renewed for the milliseconds this takes; when
 * it lapsed (the flusher stalled past it: another may have recovered the
 * batch, and later flushes moved the values on, so the returned ones are
 * old) every board is dropped instead, rebuilt from SQLite by its next
 * reader (the flusher's connection may be its next batch's).  0 or -1. */
int	taken_settle(struct app *, const char *batch, struct taken *,
	    int have_vals, const char *lkey);

#endif
