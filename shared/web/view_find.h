/* view_find.h -- the pages that find people and topics (social/find.h,
 * social/followed.h models).  Each writes a whole page and does no I/O. */
#ifndef TALLY_VIEW_FIND_H
#define TALLY_VIEW_FIND_H

#include "social/find.h"
#include "web/req.h"

/* /people?q=: the search form, then what q found (q NULL or empty:
 * suggestions). */
struct find_model {
	const char		*q;
	struct found_list	 found;
	long long		 page;
};
void	view_find_people(struct req *, const void *find_model);
/* The people of a list, each with their follower count and a follow
 * button (a part of a page). */
void	view_found(struct req *, const struct found_list *);
void	view_topics(struct req *, const void *topic_list);
/* /followed: the authors with unread posts (num: how many). */
void	view_followed(struct req *, const void *people);

#endif
