/* social_pages.c -- page functions of tally-social; logic is in shared/
 * (post.c, follow.c, timeline.c, render.c), these only map it to HTTP. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "count/cstore.h"
#include "count/lb.h"
#include "social/account.h"
#include "social/follow.h"
#include "social/notify.h"
#include "social/pcache.h"
#include "social/post.h"
#include "social/posting.h"
#include "social/timeline.h"
#include "social_pages.h"
#include "web/field.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/render.h"
#include "web/resp.h"


#define PEOPLE_PAGE	50

/* Maps an enum post_rc to its answer; 0 for POST_OK. */
int
post_answer(struct req *r, int rc)
{
	switch (rc) {
	case POST_OK:
		return 0;
	case POST_NOTFOUND:
		return resp_error(r, 404, "There is no such post.");
	case POST_FORBIDDEN:
		return resp_error(r, 403, "That is not yours.");
	default:
		return resp_error(r, 500, "The change could not be saved.");
	}
}

/* The user named by path argument 0, or answers 404 and returns -1. */
int
arg_user(struct req *r, struct account *u)
{
	char *login = NULL;
	int rc;

	if (r->nargs < 1 || valid_check(VALID_LOGIN, r->args[0],
	    strlen(r->args[0]), &login) == -1)
		return resp_error(r, 404, "There is no such user.");
	rc = pcache_get(r->app, login, u);
	free(login);
	if (rc == 1)
		return 0;
	return resp_error(r, rc == 0 ? 404 : 500, rc == 0 ?
	    "There is no such user." : "The user could not be read.");
}

/* One page of a timeline: from Redis, else from SQLite. */
int
timeline_ids(struct req *r, enum tl kind, long long uid, long long page,
    int per, long long *ids)
{
	long long off = (page - 1) * per;
	int n = tl_page(r->app, kind, uid, off, per, ids);

	if (n < 0)
		n = tl_page_sql(r->app, kind, uid, off, per, ids);
	return n;
}

int
page_feed(struct req *r)
{
	long long ids[FEED_PAGE], page = field_page(r);
	int n;

	if (page == 0)
		return -1;
	n = timeline_ids(r, TL_HOME, r->sess.user_id, page, FEED_PAGE, ids);
	if (n < 0)
		return resp_error(r, 500, "The feed could not be read.");
	page_begin(r, "Feed");
	html_raw(&r->body, "<h1>Your feed</h1>");
	if (page == 1)
		render_compose(r);
	if (render_posts(r, ids, n, r->sess.user_id) < 0)
		return -1;
	if (n == 0)
		html_raw(&r->body, "<p class=\"muted\">Nothing here yet. "
		    "Follow people to see their posts.</p>");
	render_pager(r, "/feed", page, n == FEED_PAGE);
	page_end(r);
	return 0;
}

/* The topic's best authors by rating (likes of their visible posts in
 * it), from the topic's leaderboard. */
static void
best_authors(struct req *r, long long tid)
{
	long long uids[5], vals[5];
	struct buf *b = &r->body;
	struct dbq *s;
	char *json;
	int n = lb_top(r->app, FAM_UT_RATING, tid, 5, uids, vals), i = 0;

	if (n <= 0 || (s = db_stmt(&r->app->db, STMT_USERS_BY_IDS)) == NULL)
		return;
	html_raw(b, "<section class=\"card\"><h2>Best authors</h2>"
	    "<ol class=\"best\">");
	json = render_ids_json(uids, n);
	dbq_bind_text_copy(s, 1, json, -1);
	free(json);
	while (dbq_step(s) == DBQ_ROW) {
		const char *login = dbq_text(s, 1);

		while (i < n && uids[i] != dbq_i64(s, 0))
			i++;
		if (i == n)
			break;
		html_raw(b, "<li data-login=\"");
		html_attr(b, login);
		html_raw(b, "\" data-value=\"");
		html_int(b, vals[i]);
		html_raw(b, "\"><a href=\"/u/");
		html_url(b, login);
		html_raw(b, "\">@");
		html_text(b, login);
		html_raw(b, "</a> \xc2\xb7 rating ");
		html_int(b, vals[i]);
		html_raw(b, "</li>");
		i++;
	}
	db_done(s);
	html_raw(b, "</ol></section>");
}

int
page_topic(struct req *r)
{
	struct dbq *s;
	long long tid = 0, ids[FEED_PAGE], page = field_page(r);
	struct buf *b = &r->body;
	char *slug = NULL, path[64];
	int n = 0, rc;

	if (page == 0)
		return -1;
	if (valid_check(VALID_TOPIC, r->args[0], strlen(r->args[0]), &slug)
	    == -1)
		return resp_error(r, 404, "There is no such topic.");
	req_keep(r, slug);
	if ((s = db_stmt(&r->app->db, STMT_TOPIC_BY_SLUG)) == NULL)
		return resp_error(r, 500, "The topic could not be read.");
	dbq_bind_text(s, 1, slug, -1);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		tid = dbq_i64(s, 0);
	db_done(s);
	if (tid == 0)
		return resp_error(r, 404, "There is no such topic.");
	if ((s = db_stmt(&r->app->db, STMT_TOPIC_SQL)) == NULL)
		return resp_error(r, 500, "The topic could not be read.");
	dbq_bind_i64(s, 1, tid);
	dbq_bind_int(s, 2, FEED_PAGE);
	dbq_bind_i64(s, 3, (page - 1) * FEED_PAGE);
	while (n < FEED_PAGE && dbq_step(s) == DBQ_ROW)
		ids[n++] = dbq_i64(s, 0);
	db_done(s);
	page_begin(r, slug);
	html_raw(b, "<h1 data-topic=\"");
	html_attr(b, slug);
	html_raw(b, "\">#");
	html_text(b, slug);
	html_raw(b, "</h1><p class=\"counts\"><span><b>");
	{
		struct delta d = { FAM_TOPIC_POSTS, tid, 0, 0 };

		cstore_get(r->app, &d, 1);
		render_count(r, "topic-posts", d.d, "data-topic", slug);
	}
	html_raw(b, "</b> posts</span></p>");
	best_authors(r, tid);
	if (render_posts(r, ids, n, 0) < 0)
		return -1;
	if (n == 0)
		html_raw(b, "<p class=\"muted\">No posts in this topic yet.</p>");
	snprintf(path, sizeof(path), "/t/%s", slug);
	render_pager(r, path, page, n == FEED_PAGE);
	page_end(r);
	return 0;
}
