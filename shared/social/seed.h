/* seed.h -- realistic data: users, power-law followers, posts in topics,
 * likes and comments, written straight into SQLite in one transaction
 * (Redis timelines are rebuilt from it on first read).
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
};

/* Returns 0 or -1 (logged; nothing written). */
int	seed_run(struct app *, const struct seed_opts *);

#endif
