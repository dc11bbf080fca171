/* social_pages.h -- the page functions of tally-social (routes in social.c). */
#ifndef TALLY_SOCIAL_PAGES_H
#define TALLY_SOCIAL_PAGES_H

#include "social/account.h"
#include "social/timeline.h"
#include "web/req.h"

/* Shared by the page files of tally-social. */
#define FEED_PAGE	30	/* posts a page of a timeline */
#define FEED_SUGGEST	5	/* people an empty feed suggests */

/* Maps an enum post_rc to its answer; 0 for POST_OK. */
int	post_answer(struct req *, int rc);
/* The user named by path argument 0, or answers 404 and returns -1. */
int	arg_user(struct req *, struct account *);

int	page_feed(struct req *);
int	page_profile(struct req *);
int	page_followers(struct req *);
int	page_following(struct req *);
int	page_follow(struct req *);
int	page_unfollow(struct req *);
int	page_post_create(struct req *);
int	page_post(struct req *);
int	page_post_edit_form(struct req *);
int	page_post_edit(struct req *);
int	page_post_delete(struct req *);
int	page_post_like(struct req *);
int	page_post_unlike(struct req *);
int	page_post_repost(struct req *);
int	page_comment(struct req *);
int	page_comment_delete(struct req *);
int	page_topic(struct req *);
int	page_people(struct req *);
int	page_topics(struct req *);
int	page_followed(struct req *);

#endif
