/* social_pages.h -- the pages and actions of tally-social (routes in
 * social.c): each page a model, its load and its render (web/page.h),
 * each action the HTTP part of the domain function its route names. */
#ifndef TALLY_SOCIAL_PAGES_H
#define TALLY_SOCIAL_PAGES_H

#include "count/cstore.h"
#include "social/account.h"
#include "social/postlist.h"
#include "social/timeline.h"
#include "web/page.h"
#include "web/req.h"
#include "web/route.h"

/* Shared by the page files of tally-social. */
#define FEED_PAGE	30	/* posts a page of a timeline */
#define FEED_SUGGEST	5	/* people an empty feed suggests */

/* Maps an enum post_rc to its answer; 0 for POST_OK. */
int	post_answer(struct req *, int rc);
/* The user named by path argument 0, or answers 404 and returns -1. */
int	arg_user(struct req *, struct account *);
/* 1 when every count of the n cards and the nmore others was read. */
int	cards_counted(const struct post_card *, int n, const struct count *more,
	    int nmore);

/* For the pages a reader's group took (social.c): the first round trip
 * of a GET of page 1 (no ?page=) of a presumed reader, whose page this
 * process does not keep, on one Redis server that is up, sent into
 * r->ahead by send(r, q, arg) (q: qsize bytes, zeroed), its replies read
 * later with the group's, in one wait: 1, or 0 when nothing was sent.
 * The page's load then reads its own from r->ahead.  feed_ahead() and
 * profile_ahead() for /feed and /u/LOGIN (0: another request). */
int	page_ahead(struct req *, size_t qsize, void (*send)(struct req *,
	    void *, const void *), const void *arg);
int	feed_ahead(struct req *);
int	profile_ahead(struct req *);
/* Once its first round trip's replies are read: a feed's posts'
 * statement sent ahead with the group's (social/postlist.h:
 * postlist_send(); PostgreSQL), when those replies name its posts: 1, or
 * 0 (its load runs the statement). */
int	feed_sql_ahead(struct req *);
/* The same for a profile (the visitor's state and the posts, when this
 * process knows the login's id). */
int	profile_sql_ahead(struct req *);

extern const struct page page_feed, page_topic, page_profile,
	    page_followers, page_following, page_post, page_post_edit_form,
	    page_people, page_topics, page_followed, page_drafts;

int	act_follow_with(struct req *, const struct route *);
int	act_post_create(struct req *, const struct route *);
int	act_post_edit(struct req *, const struct route *);
int	act_post_delete(struct req *, const struct route *);
int	act_post_with(struct req *, const struct route *);
int	act_post_comment(struct req *, const struct route *);
int	act_post_comment_delete(struct req *, const struct route *);

#endif
