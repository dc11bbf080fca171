/* social_pages.h -- the page functions of tally-social (routes in social.c). */
#ifndef TALLY_SOCIAL_PAGES_H
#define TALLY_SOCIAL_PAGES_H

#include "req.h"

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

#endif
