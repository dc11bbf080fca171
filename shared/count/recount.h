/* recount.h -- counting every family again from the truth rows, with the
 * catalog's GROUP BY queries (counters.c).  Used after bulk loads (seed)
 * and by reconciliation. */
#ifndef TALLY_RECOUNT_H
#define TALLY_RECOUNT_H

#include "count/counters.h"
#include "store/app.h"

/* Calls fn for every (key, value) of fam's recount, in key order.
 * Returns the number of rows, or -1. */
long	recount_family(struct db *, enum family,
	    int (*fn)(const struct delta *, void *), void *arg);

/* Rewrites posts.like_count and the whole counters table (but views,
 * which have no rows) from the truth rows, in one transaction.  Redis is
 * not touched: call only when Redis holds no live values for these
 * objects (fresh data), or follow with a reconciliation. */
int	recount_write_all(struct app *);

#endif
