/* topview.h -- an admin leaderboard page (/admin/top): the top n users by
 * one counter family, each with their four profile counts. */
#ifndef TALLY_TOPVIEW_H
#define TALLY_TOPVIEW_H

#include "count/lb.h"
#include "social/people.h"
#include "social/profileview.h"

struct top_view {
	struct people	 rows;		/* num: the ranked value */
	struct count	(*counts)[PROFILE_NCOUNTS];	/* per row */
};

/* Loads the top n (1..LB_MAX) by fam.  0, -1 when the leaderboard (Redis)
 * did not answer, -2 when SQLite failed. */
int	topview_load(struct app *, enum family fam, int n, struct top_view *);
void	topview_free(struct top_view *);

#endif
