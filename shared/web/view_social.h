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

/* /feed: page `page` of the reader's timeline; an empty first page
 * offers suggest (NULL: none). */
void	view_feed(struct req *, const struct post_cards *, long long page,
	    int more, const struct found_list *suggest);
void	view_topic(struct req *, const struct topic_view *);
void	view_profile(struct req *, const struct profile_view *);
/* /u/LOGIN/followers or /following (kind) of u. */
void	view_people(struct req *, const struct account *u, enum tl kind,
	    const struct people *, long long page, int more);
void	view_post(struct req *, const struct post_view *);
void	view_post_edit(struct req *, const struct post *);
/* A post form again (web/form.h), as refused: what was typed, the field
 * marked. */
void	view_post_form(struct req *, const struct post_form *);
/* The comment form of post post_id again, holding body. */
void	view_comment_form(struct req *, long long post_id, const char *body);

#endif
