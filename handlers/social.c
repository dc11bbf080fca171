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
 *   POST /posts/ID/like, /unlike, /repost, /unrepost   303 /posts/ID | 404
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
#include "social/postlist.h"
#include "social/timeline.h"
#include "social_pages.h"
#include "store/rds.h"
#include "web/batch.h"
#include "web/html.h"
#include "web/keep.h"
#include "web/layout.h"
#include "web/render.h"
#include "web/req.h"
#include "web/resp.h"
#include "web/route.h"
#include "web/serve.h"

/* A like, an unlike, a repost: one transaction that may share its commit
 * with the others queued beside it (web/batch.h). */
#define ROUTE_ACT	(ROUTE_USER | ROUTE_TXN | ROUTE_WRITE | ROUTE_GROUP)
/* The feed and a profile: the busiest pages (route.h, web/keep.h). */
#define ROUTE_BUSY	(ROUTE_LATESESS | ROUTE_TOGETHER | ROUTE_KEEP)

static const struct route routes[] = {
	{ METHOD_GET, "/feed", .page = &page_feed, .flags = ROUTE_USER | ROUTE_BUSY },
	{ METHOD_GET, "/u/:s", .page = &page_profile, .flags = ROUTE_BUSY },
	{ METHOD_GET, "/u/:s/followers", .page = &page_followers },
	{ METHOD_GET, "/u/:s/following", .page = &page_following },
	{ METHOD_POST, "/follow/:s", .act = act_follow_with,
	    .call.user = follow_add, .flags = ROUTE_USER | ROUTE_WRITE },
	{ METHOD_POST, "/unfollow/:s", .act = act_follow_with,
	    .call.user = follow_remove, .flags = ROUTE_USER | ROUTE_WRITE },
	{ METHOD_POST, "/posts", .act = act_post_create,
	    .flags = ROUTE_USER | ROUTE_WRITE },
	{ METHOD_GET, "/posts/:id", .page = &page_post },
	{ METHOD_GET, "/posts/:id/edit", .page = &page_post_edit_form,
	    .flags = ROUTE_USER },
	/* an action as a post is: publishing or withdrawing one fans out
	 * to every follower (TALLY_WRITE_RATE, throttle.h) */
	{ METHOD_POST, "/posts/:id/edit", .act = act_post_edit,
	    .flags = ROUTE_USER | ROUTE_WRITE },
	{ METHOD_POST, "/posts/:id/delete", .act = act_post_delete,
	    .flags = ROUTE_USER },
	{ METHOD_POST, "/posts/:id/like", .act = act_post_with,
	    .call.post = posting_like, .flags = ROUTE_ACT },
	{ METHOD_POST, "/posts/:id/unlike", .act = act_post_with,
	    .call.post = posting_unlike, .flags = ROUTE_ACT },
	{ METHOD_POST, "/posts/:id/repost", .act = act_post_with,
	    .call.post = posting_repost, .flags = ROUTE_ACT },
	{ METHOD_POST, "/posts/:id/unrepost", .act = act_post_with,
	    .call.post = posting_unrepost, .flags = ROUTE_ACT },
	{ METHOD_POST, "/posts/:id/comments", .act = act_post_comment,
	    .flags = ROUTE_USER | ROUTE_WRITE },
	{ METHOD_POST, "/comments/:id/delete", .act = act_post_comment_delete,
	    .flags = ROUTE_USER },
	{ METHOD_GET, "/t/:s", .page = &page_topic, .flags = ROUTE_LATESESS },
	{ METHOD_GET, "/people", .page = &page_people },
	{ METHOD_GET, "/topics", .page = &page_topics },
	{ METHOD_GET, "/followed", .page = &page_followed, .flags = ROUTE_USER },
	{ METHOD_GET, "/drafts", .page = &page_drafts, .flags = ROUTE_USER },
};

/* The feeds and profiles taken together: one sync serves them all
 * (web/keep.h; on failure each page tries its own).  The first round
 * trip of each feed and profile goes out while the sync is on its way,
 * and the replies are read in one wait, each page's kept for its load
 * (page_ahead()): one round trip, not one a page (a round trip cost the
 * stack ~40 us, docs/BENCHMARKS.md), and not after the sync's: Redis
 * finds both connections' commands in one wake-up.  The pages' reads
 * do not wait for the sync: it only tells what the process kept (the
 * pages, the counts) from before the requests came, and nothing of
 * that is used before it is back.  Then, on PostgreSQL, the posts'
 * statement of each feed and profile whose replies named its posts
 * goes out (a profile's visitor state with it), and the results are
 * read in one wait (feed_sql_ahead(), profile_sql_ahead(): a round trip
 * for the group's pages, not one a page), before any page loads: the
 * connection is back to one statement at a time for the loads. */
static void
kept_taken(struct slot *s, int n)
{
	struct req *rs[READ_MAX] = { NULL };
	struct rds *rd = s[0].r.app->rds;
	int i, m = n < READ_MAX ? n : READ_MAX, ahead = 0, sync, sql;

	for (i = 0; i < m; i++)
		rs[i] = &s[i].r;
	sync = keep_sync_send(s[0].r.app);
	if (n >= 2 && rds_queued(rd) == 0) {
		for (i = 0; i < m; i++)
			if (s[i].st == 0)
				ahead += feed_ahead(&s[i].r) ||
				    profile_ahead(&s[i].r);
		if (ahead > 0)
			rds_send_queued(rd);
	}
	keep_sync_recv(rs, m, sync);
	for (i = 0; ahead > 0 && i < m; i++)
		if (s[i].r.ahead != NULL)
			rds_stash_fill(rd, &s[i].r.ahead->st,
			    s[i].r.ahead->want);
	sql = 0;
	if (ahead > 0 && postlist_ahead_ok(s[0].r.app))
		for (i = 0; i < m; i++)
			sql += feed_sql_ahead(&s[i].r) ||
			    profile_sql_ahead(&s[i].r);
	if (sql > 0)
		postlist_ahead_wait(s[0].r.app);
}

int
main(int argc, char *argv[])
{
	serve_together(kept_taken, NULL);
	return serve_run(argc, argv, "social", routes,
	    sizeof(routes) / sizeof(routes[0]));
}
