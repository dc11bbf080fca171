/* view_social.h -- the pages of tally-social, rendered from models the
 * social layer loaded (postlist.h, profileview.h, people.h, postview.h).
 * Each writes a whole page (frame included) and does no I/O. */
#ifndef TALLY_VIEW_SOCIAL_H
#define TALLY_VIEW_SOCIAL_H

#include "social/find.h"
#include "social/people.h"
#include "social/postview.h"
#include "social/profileview.h"
#include "web/form.h"
#include "web/req.h"

/* The pages: each renders its model (page.h), given as void *. */

/* /feed: page `page` of the reader's timeline; an empty first page
 * offers suggest. */
struct feed_model {
	struct post_cards	 cards;
	long long		 page;
	int			 more;
	struct found_list	 suggest;
};
void	view_feed(struct req *, const void *feed_model);
void	view_topic(struct req *, const void *topic_view);
void	view_profile(struct req *, const void *profile_view);
/* /u/LOGIN/followers or /following (kind) of u. */
struct people_model {
	struct account		 u;
	enum tl			 kind;
	struct people		 ps;
	long long		 page;
	int			 more;
};
void	view_people(struct req *, const void *people_model);
/* /drafts: the reader's drafts older than the draft before (0: the
 * newest); more when older ones follow. */
struct drafts_model {
	struct post_cards	 cards;
	long long		 before;
	int			 more;
};
void	view_drafts(struct req *, const void *drafts_model);
void	view_post(struct req *, const void *posting_view);
/* The edit form of a post (a posting_view: its author's). */
void	view_post_edit(struct req *, const void *posting_view);
/* A post form again (web/form.h), as refused: what was typed, the field
 * marked. */
void	view_post_form(struct req *, const struct post_form *);
/* The comment form of post post_id again, holding body. */
void	view_comment_form(struct req *, long long post_id, const char *body);

#endif
