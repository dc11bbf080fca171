/* view_find.h -- the pages that find people and topics (social/find.h,
 * social/followed.h models).  Each writes a whole page and does no I/O. */
#ifndef TALLY_VIEW_FIND_H
#define TALLY_VIEW_FIND_H

#include "social/find.h"
#include "web/req.h"

/* /people?q=: the search form, then what q found (q NULL or empty:
 * suggestions). */
void	view_find_people(struct req *, const char *q,
	    const struct found_list *, long long page);
/* The people of a list, each with their follower count and a follow
 * button (a part of a page). */
void	view_found(struct req *, const struct found_list *);
void	view_topics(struct req *, const struct topic_list *);
/* /followed: the authors with unread posts (num: how many). */
void	view_followed(struct req *, const struct people *);

#endif
