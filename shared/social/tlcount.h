/* tlcount.h -- how many posts authors published after a time each, for
 * the followed-authors badge (followed.h). */
#ifndef TALLY_TLCOUNT_H
#define TALLY_TLCOUNT_H

#include "store/app.h"

/* For each author i, the number of their visible posts published after
 * after[i] (ms), from their profile timeline (so at most TL_CAP each):
 * one round trip (on one Redis one script for up to 128 authors, a
 * script each on a cluster); authors whose timeline is not materialised
 * are counted from SQLite, bounded the same way.  0 or -1. */
int	tlcount_after(struct app *, int n, const long long *authors,
	    const long long *after, long long *out);

#endif
