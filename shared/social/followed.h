/* followed.h -- the authors a user follows that have posts the user has
 * not seen: the "followed" badge is their sum, /followed lists them.
 * An author's unread posts are their visible posts published after the
 * later of the follow and the user's last visit to the author's profile
 * (tlcount.h tlcount_after: one ZCOUNT each, SQLite when Redis misses).
 */
#ifndef TALLY_FOLLOWED_H
#define TALLY_FOLLOWED_H

#include "social/people.h"

/* Every author uid follows, and their unread counts (0 included), in
 * *authors and *unread (the caller frees both); how many, or -1. */
int	followed_unread(struct app *, long long uid, long long **authors,
	    long long **unread);
/* The authors with unread posts, most unread first (num: the count;
 * equal counts: the newer account first).  0 or -1. */
int	followed_load(struct app *, long long uid, struct people *);

#endif
