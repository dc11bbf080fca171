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
/* The same for the suggestions of /people's page `page` (0: as
 * view_found()): each follow form comes back to the list with the
 * people it follows kept in it (?keep=ID.ID, social/find.h). */
void	view_found_on(struct req *, const struct found_list *,
	    long long page);
void	view_topics(struct req *, const void *topic_list);
/* /followed: the authors with unread posts (num: how many). */
void	view_followed(struct req *, const void *people);

#endif
