/* social.c -- tally-social: feeds, profiles, follows, posts, topics.
 *
 * Routes (mirrored by nginx-conf/tally.conf.in):
 *   GET  /feed?page=N                 home timeline, 30 a page (login)
 *   GET  /u/LOGIN?page=N              profile and its posts | 404
 *   GET  /u/LOGIN/followers?page=N    50 a page, newest first | 404
 *   GET  /u/LOGIN/following?page=N
 *   POST /follow/LOGIN, /unfollow/LOGIN   303 /u/LOGIN | 400 self | 404
 *   POST /posts                       303 /posts/ID | 400
 *   GET  /posts/ID                    404 unless visible or own
 *   GET  /posts/ID/edit               the edit form (author) | 403 | 404
 *   POST /posts/ID/edit               303 /posts/ID | 400 | 403 | 404
 *   POST /posts/ID/delete             303 /feed | 403 | 404
 *   POST /posts/ID/like, /unlike, /repost     303 /posts/ID | 404
 *   POST /posts/ID/comments           303 /posts/ID | 400 | 404
 *   POST /comments/ID/delete          303 /posts/PID | 403 | 404
 *   GET  /t/SLUG?page=N               a topic's posts | 404
 *   GET  /people?q=TEXT&page=N        find people; no q: suggestions
 *   GET  /topics                      topics with posts, busiest first
 *   GET  /followed                    followed authors with new posts (login)
 * An action answers 303 to its `back` field or JSON (web/act.h).
 * Every POST needs the csrf field (403), every action a session (303).
 */
#include <stdlib.h>
#include <string.h>

#include "social/account.h"
#include "social/follow.h"
#include "social/post.h"
#include "social/posting.h"
#include "social/timeline.h"
#include "social_pages.h"
#include "web/batch.h"
#include "web/fcache.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/render.h"
#include "web/req.h"
#include "web/resp.h"
#include "web/route.h"
#include "web/serve.h"

/* A like, an unlike, a repost: one transaction that may share its commit
 * with the others queued beside it (web/batch.h). */
#define ROUTE_ACT	(ROUTE_USER | ROUTE_TXN | ROUTE_WRITE | ROUTE_GROUP)

static const struct route routes[] = {
	{ METHOD_GET, "/feed", page_feed, ROUTE_USER | ROUTE_LATESESS | ROUTE_TOGETHER },		/* ROUTE_FEED */
	{ METHOD_GET, "/u/:s", page_profile, ROUTE_LATESESS | ROUTE_TOGETHER },		/* ROUTE_PROFILE */
	{ METHOD_GET, "/u/:s/followers", page_followers, 0 },	/* ROUTE_FOLLOWERS */
	{ METHOD_GET, "/u/:s/following", page_following, 0 },	/* ROUTE_FOLLOWING */
	{ METHOD_POST, "/follow/:s", page_follow, ROUTE_USER | ROUTE_WRITE },	/* ROUTE_FOLLOW */
	{ METHOD_POST, "/unfollow/:s", page_unfollow, ROUTE_USER | ROUTE_WRITE }, /* ROUTE_UNFOLLOW */
	{ METHOD_POST, "/posts", page_post_create, ROUTE_USER | ROUTE_WRITE },	/* ROUTE_POST_NEW */
	{ METHOD_GET, "/posts/:id", page_post, 0 },		/* ROUTE_POST */
	{ METHOD_GET, "/posts/:id/edit", page_post_edit_form, ROUTE_USER }, /* ROUTE_POST_EDIT_FORM */
	{ METHOD_POST, "/posts/:id/edit", page_post_edit, ROUTE_USER },	/* ROUTE_POST_EDIT */
	{ METHOD_POST, "/posts/:id/delete", page_post_delete, ROUTE_USER }, /* ROUTE_POST_DELETE */
	{ METHOD_POST, "/posts/:id/like", page_post_like, ROUTE_ACT },	/* ROUTE_LIKE */
	{ METHOD_POST, "/posts/:id/unlike", page_post_unlike, ROUTE_ACT }, /* ROUTE_UNLIKE */
	{ METHOD_POST, "/posts/:id/repost", page_post_repost, ROUTE_ACT }, /* ROUTE_REPOST */
	{ METHOD_POST, "/posts/:id/comments", page_comment, ROUTE_USER | ROUTE_WRITE },	/* ROUTE_COMMENT */
	{ METHOD_POST, "/comments/:id/delete", page_comment_delete, ROUTE_USER }, /* ROUTE_COMMENT_DELETE */
	{ METHOD_GET, "/t/:s", page_topic, ROUTE_LATESESS },			/* ROUTE_TOPIC */
	{ METHOD_GET, "/people", page_people, 0 },		/* ROUTE_PEOPLE */
	{ METHOD_GET, "/topics", page_topics, 0 },		/* ROUTE_TOPICS */
	{ METHOD_GET, "/followed", page_followed, ROUTE_USER },	/* ROUTE_FOLLOWED */
};

/* The feeds and profiles taken together: one sync serves them all
 * (fcache_sync_taken(); on failure each page tries its own). */
static void
kept_taken(struct slot *s, int n)
{
	(void)n;
	fcache_sync_taken(s[0].r.app);
}

int
main(int argc, char *argv[])
{
	serve_together(kept_taken, fcache_sync_end);
	return serve_run(argc, argv, "social", routes,
	    sizeof(routes) / sizeof(routes[0]));
}
