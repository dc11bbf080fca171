/* seed.h -- realistic data: users with real-looking names, power-law
 * followers, posts in topics (5% drafts), then follows, likes, comments
 * and reposts in time order with the notifications they send
 * (seed_events.h), written into SQLite in one transaction; counters by
 * the catalog's recount (Redis timelines are rebuilt on first read).
 * Views, which have no rows, come last, through the view path
 * (seed_views.h).  Nobody likes or reposts their own post.
 *
 * Followees are drawn from a Zipf distribution (s = 1.05): a few stars
 * get thousands of followers, most users a handful.  Every seeded user's
 * password is "password", hashed once at the minimum argon2id cost and
 * shared by all of them (demo data, never real accounts).
 */
#ifndef TALLY_SEED_H
#define TALLY_SEED_H

#include "store/app.h"

struct seed_opts {
	long		users;
	long		posts;
	long		follows;
	long		likes;
	long		comments;
	unsigned	rng;		/* random seed: same seed, same data */
	int		demo;		/* friendly names (alice, bob...) */
	int		quiet;
	long		reposts;
	long		views;		/* per like or comment a post got, with
					   a little more (seed_views.h); 0:
					   none.  Needs Redis. */
};

/* Notifications older than this (ms) are seeded read, newer ones unread. */
#define SEED_READ_AGE	(8LL * 3600 * 1000)
/* The demo's first user's busy last hour: likes and new followers. */
#define SEED_BURST	5
/* The demo's first user's rank among the authors (0: the busiest). */
#define SEED_FIRST_RANK	5

/* Returns 0 or -1 (logged; nothing written). */
int	seed_run(struct app *, const struct seed_opts *);

#endif
