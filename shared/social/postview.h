/* postview.h -- what a post's page shows: the post with its counts and
 * its comments, loaded before it renders (web/view_social.h). */
#ifndef TALLY_POSTVIEW_H
#define TALLY_POSTVIEW_H

#include "social/postlist.h"

struct comment {
	long long	 id;
	long long	 user_id;
	char		 login[40];
	char		 name[264];
	char		*body;		/* owned */
	long long	 created_at;
};

#define POSTVIEW_COMMENTS	500	/* the comments a post page shows */

/* A post's comments come oldest first, POSTVIEW_COMMENTS a page: a page
 * is those after a comment id (?after=ID; 0: from the first), and links
 * the next by its last (a comment deleted meanwhile moves nothing). */
struct post_view {
	struct post_card	 c;
	struct comment		*comments;	/* POSTVIEW_COMMENTS at most */
	int			 ncomments;
	long long		 comments_after;	/* the page's start */
	int			 comments_more;	/* later ones follow */
	int			 view_queued;	/* PV_VIEW_QUEUED: a reply waits */
};

#define PV_FULL		0x01	/* counts and comments too */
#define PV_VIEWED	0x02	/* and a visible post is viewed (counted) */
#define PV_COUNTS	0x04	/* counts and the viewer's marks, no comments */
#define PV_CALLER_COUNTS 0x08	/* with PV_FULL or PV_COUNTS: the counts
				 * not read here (the page reads them with
				 * its badges: layout_load_cards()) */
#define PV_VIEW_QUEUED	0x10	/* with PV_VIEWED and PV_CALLER_COUNTS: the
				 * view's script queued, its reply for the
				 * caller to read first (view_queued: 1),
				 * the counts queued after it showing it */

/* Loads post id as viewer (0: nobody, known by addr for a view) may see
 * it: 1, 0 no such post (or not the viewer's to see), -1 on error.
 * flags: PV_*; without PV_FULL only the post (the edit form). */
int	postview_load(struct app *, long long id, long long viewer,
	    const char *addr, unsigned flags, long long after,
	    struct post_view *);
/* The page of post's comments that shows comment id: the `after` of its
 * link (0: the first page; else the one that begins with it).  -1. */
long long postview_comment_page(struct app *, long long post, long long id);
void	postview_free(struct post_view *);

#endif
