/* fcache.h -- the Redis part of the pages people open most (the home
 * feed, a profile), kept by each handler process while Redis says none
 * of it changed (store/rtrack.h).
 *
 * A feed page is a timeline page (Redis), the posts with the reader's
 * marks (SQLite), their counts, the header's badges and the session's
 * copy (Redis); a profile adds the cached profile (pcache.h) and its four
 * counts, and reads whether the reader follows the author (SQLite).  The
 * Redis part of a reader's page is kept here, with the name of every key
 * read for it.  A later visit sends a sync (one PING on the process's
 * invalidation connection instead of two round trips and ~36 commands;
 * visits queued together share one: web/batch.h),
 * reads the SQLite part as before while Redis answers, and, when none of
 * the keys changed, shows the kept part with it: the counts are what
 * Redis holds now, the posts, marks and follow state what SQLite holds.
 *
 * The whole page is kept too (fcache_body()), with the data version
 * SQLite was at, or before, when the page read its SQLite part
 * (store/db.h: db_data_version(), which changes with every commit to
 * the file).  A visit whose entry holds a page for the same URI checks
 * that version first (one PRAGMA: the read transaction's locks, no
 * page read) and, when nothing was committed since and the sync says
 * nothing of the Redis part changed, sends that page as it is: no
 * SQLite statement, no rendering.  Any commit, by anyone, means the
 * SQLite part is read again (then the Redis part may still be kept).
 * PostgreSQL has no such version: the SQLite part is always read there.
 * The page's relative times ("5 min ago") are then up to the entry's
 * second old.
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

#include "social/account.h"
#include "social/postlist.h"
#include "web/req.h"

#define FC_IDS		30	/* a page of a timeline (FEED_PAGE) */
#define FC_CARDS	96	/* its cards: posts, and an own profile's drafts */
#define FC_MORE		4	/* the page's own counts (a profile's) */
#define FC_TTL_MS	1000

enum fc_kind { FC_FEED, FC_PROFILE };

/* Which page: the feed, or the profile of login (folded). */
struct fc_page {
	enum fc_kind	 kind;
	long long	 page;
	const char	*login;		/* FC_PROFILE */
};

/* What the page read from Redis, for fcache_end(). */
struct fc_model {
	const long long		*ids;	/* the timeline page */
	int			 n;
	const struct post_card	*cs;	/* with their counts */
	int			 ncards;
	const struct account	*u;	/* FC_PROFILE */
	const struct count	*more;	/* nmore of the page's own counts */
	int			 nmore;
};

struct fc_hit {
	struct fc_page	 pg;
	int		 n;		/* the timeline page's ids */
	long long	 ids[FC_IDS];
	struct account	 u;		/* FC_PROFILE */
	const void	*e;		/* the entry */
};

/* For a presumed reader (req.h) of page pg, sends the sync's PING: 1 when
 * an entry is kept (h: its ids, its profile), so that the page reads its
 * SQLite part while Redis answers, then asks fcache_hit(); 0 when none is
 * kept: what the page reads from Redis from now on is recorded for
 * fcache_end(); -1: the cache is not usable (nothing is recorded). */
int	fcache_get(struct req *, const struct fc_page *pg, struct fc_hit *h);
/* After fcache_get() answered 1: reads the sync's answer.  1 when the
 * entry holds, the session confirmed from it (r->user, r->sess, r->csrf,
 * r->badges); 0 when it was dropped (recording as after 0 above); -1
 * when the cache is not usable, or use is 0 (the page will not use it:
 * it is to write, and confirms its session in SQLite first). */
int	fcache_hit(struct req *, struct fc_hit *h, int use);
/* After fcache_get() answered 1, before the page reads anything else:
 * the whole page of h's entry, when it holds one for this URI and
 * SQLite's data version is the one it was read at; the sync is then read
 * (fcache_hit()).  1: the page is in r->body (status 200); 0: no whole
 * page (the sync not read yet: go on as after fcache_get()); -1: the
 * sync dropped the entry or failed: the page is to be read whole
 * (recording, as when fcache_hit() answers 0, if it answered 0). */
int	fcache_whole(struct req *, struct fc_hit *h);
/* After the page was rendered from the entry fcache_hit() confirmed or
 * from what fcache_end() kept: keeps the rendered page with that entry
 * (a 200 text/html page with no header or cookie of its own).  The
 * page's caller says it shows no state that a request may change without
 * a commit (a profile's visit to mark: not kept). */
void	fcache_body(struct req *);
/* Fills the counts of the n cards and the nmore page counts from the
 * entry of h: 0, or -1 when one was not kept (a post the entry did not
 * show: the page is then read whole). */
int	fcache_counts(const struct fc_hit *h, struct post_card *cs, int n,
	    struct count *more, int nmore);
/* After fcache_get() or fcache_hit() answered 0: stops recording and,
 * when m is not NULL and the page was read from Redis whole (see above),
 * keeps it.  Nothing when not recording (it may end every page). */
void	fcache_end(struct req *, const struct fc_page *pg,
	    const struct fc_model *m);
/* One sync for every request the process has taken and not yet served
 * (web/batch.h: a reader's gathering): each was queued before it was
 * sent, so until fcache_sync_end() their pages send none of their own.
 * 0, or -1 when the cache is not usable (each page then tries its own,
 * as without this call). */
int	fcache_sync_taken(struct app *);
void	fcache_sync_end(void);
/* Round trips of the invalidation connection so far (a request's cost). */
unsigned long long fcache_syncs(void);
/* Pages sent whole by fcache_whole() so far. */
unsigned long long fcache_wholes(void);

#endif
