/* fcache.h -- the home feed's Redis part, kept by each handler process
 * while Redis says none of it changed (store/rtrack.h).
 *
 * A feed page is a timeline page (Redis), the posts with the reader's
 * marks (SQLite), their counts, the header's badges and the session's
 * copy (Redis).  The Redis part of a reader's page is kept here: the
 * ids, the counts, the badges and the session, with the name of every
 * key read for them.  A later visit syncs with Redis (one PING on the
 * process's invalidation connection instead of two round trips and ~36
 * commands) and, when none of those keys changed, shows them with the
 * posts read from SQLite as before: the counts are what Redis holds now,
 * the marks and the posts what SQLite holds now.
 *
 * An entry lives one second at most: a badge's inputs are re-derived
 * from SQLite on a clock (bcache.h), and a session's copy confirms it for
 * a minute (sesscache.h); the entry never outlives either.  Nothing is
 * kept when anything was doubtful: a counter or badge not read from
 * Redis, a timeline rebuilt, the session confirmed by SQLite, a Redis
 * Cluster (rtrack.h), the data connection replaced meanwhile.
 */
#ifndef TALLY_FCACHE_H
#define TALLY_FCACHE_H

#include "social/postlist.h"
#include "web/req.h"

#define FC_IDS		30	/* a feed page (FEED_PAGE) */
#define FC_TTL_MS	1000

struct fc_hit {
	long long	 page;
	int		 n;		/* the timeline page's ids */
	long long	 ids[FC_IDS];
	const void	*e;		/* the entry, for fcache_counts() */
};

/* For a presumed reader (req.h) of feed page page, sends the sync's
 * PING: 1 when an entry is kept (h: its ids), so that the page reads its
 * posts while Redis answers, then asks fcache_hit(); 0 when none is
 * kept: what the page reads from Redis from now on is recorded for
 * fcache_end(); -1: the cache is not usable (nothing is recorded). */
int	fcache_get(struct req *, long long page, struct fc_hit *h);
/* After fcache_get() answered 1: reads the sync's answer.  1 when the
 * entry holds, the session confirmed from it (r->user, r->sess, r->csrf,
 * r->badges); 0 when it was dropped (recording as after 0 above); -1
 * when the cache is not usable. */
int	fcache_hit(struct req *, struct fc_hit *h);
/* Fills the counts of the n cards from the entry of h: 0, or -1 when a
 * card's counts were not kept (a post the entry did not show). */
int	fcache_counts(const struct fc_hit *h, struct post_card *cs, int n);
/* After fcache_get() answered 0: stops recording and, when keep is set
 * and the page was read from Redis whole (see above), keeps it. */
void	fcache_end(struct req *, long long page, int keep, const long long *ids,
	    int n, const struct post_card *cs, int ncards);
/* Round trips of the invalidation connection so far (a request's cost). */
unsigned long long fcache_syncs(void);

#endif
