/* seed_views.h -- the views of seeded posts, counted by the view path.
 *
 * Views have no truth rows (posting.h): a count is only ever the sum of
 * posting_view() calls.  The seed therefore makes its views as page views
 * do, one posting_view() each, deduplicated and budgeted like real ones, so
 * Redis, the counters table after a flush and a reconciliation agree.
 * The viewers are anonymous addresses of 198.18.0.0/15 (RFC 2544's
 * benchmarking range, never a real client): the demo's accounts have no
 * view already counted, so someone trying the site sees their own first
 * view of a post move its count.  Each address views at most
 * VIEW_ADDR_MAX posts, its budget, and a post's viewers are distinct.
 * Needs Redis: without it posting_view() counts nothing.
 */
#ifndef TALLY_SEED_VIEWS_H
#define TALLY_SEED_VIEWS_H

#include "store/app.h"

/* Most views one post is given. */
#define SEED_VIEWS_MAX	2000

/* Views of np published posts (ids[i] by authors[i]): per times
 * reactions[i] (its likes and comments), plus up to as many again and a
 * few for a post nobody reacted to, drawn from rs; capped at
 * SEED_VIEWS_MAX.  Returns how many were counted (0 with Redis down),
 * or -1 when an argument is negative or np posts need more addresses
 * than the range holds (over 6,500 posts). */
long	seed_views(struct app *, const long long *ids,
	    const long long *authors, const long *reactions, long np,
	    long per, unsigned long long *rs);

#endif
