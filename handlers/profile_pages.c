/* profile_pages.c -- tally-social's profile, people and follow pages. */
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

static void
follow_button(struct req *r, const struct account *u, int following)
{
	struct buf *b = &r->body;

	html_raw(b, "<form method=\"post\" class=\"inline\" action=\"/");
	if (following)
		html_raw(b, "unfollow/");
	else
		html_raw(b, "follow/");
	html_url(b, u->login);
	html_raw(b, "\">");
	page_csrf(r);
	if (following)
		html_raw(b, "<button type=\"submit\" class=\"secondary\" "
		    "data-following=\"1\">Unfollow</button></form>");
	else
		html_raw(b, "<button type=\"submit\" data-following=\"0\">"
		    "Follow</button></form>");
}

static void
drafts(struct req *r, long long uid)
{
	struct dbq *s = db_stmt(&r->app->db, STMT_DRAFTS_OF_USER);
	struct post p;
	int first = 1;

	if (s == NULL)
		return;
	dbq_bind_i64(s, 1, uid);
	while (dbq_step(s) == DBQ_ROW) {
		if (first)
			html_raw(&r->body, "<h2>Your drafts</h2>");
		first = 0;
		post_from_row(s, &p);
		render_post(r, &p, 0, NULL);
		post_free(&p);
	}
	db_done(s);
}

static long long
author_latest(struct db *d, long long uid)
{
	struct dbq *s = db_stmt(d, STMT_AUTHOR_LATEST);
	long long t = 0;

	if (s == NULL)
		return 0;
	dbq_bind_i64(s, 1, uid);
	if (dbq_step(s) == DBQ_ROW)
		t = dbq_i64(s, 0);
	db_done(s);
	return t;
}

/* The four counts of a profile, one Redis round trip. */
static void
profile_counts(struct req *r, const struct account *u)
{
	static const enum family fams[4] = { FAM_USER_POSTS,
	    FAM_USER_FOLLOWERS, FAM_USER_FOLLOWING, FAM_USER_LIKES };
	static const char *const names[4] = { "posts", "followers",
	    "following", "likes" };
	struct delta ds[4];
	struct buf *b = &r->body;
	int i;

	memset(ds, 0, sizeof(ds));
	for (i = 0; i < 4; i++) {
		ds[i].fam = fams[i];
		ds[i].k1 = u->id;
	}
	cstore_get(r->app, ds, 4);
	html_raw(b, "<p class=\"counts\">");
	for (i = 0; i < 4; i++) {
		html_raw(b, "<span>");
		if (i == 1 || i == 2) {
			html_raw(b, "<a href=\"/u/");
			html_url(b, u->login);
			html_raw(b, "/");
			html_text(b, names[i]);
			html_raw(b, "\">");
		}
		html_raw(b, "<b>");
		render_count(r, names[i], ds[i].d, "data-login", u->login);
		html_raw(b, "</b> ");
		html_text(b, names[i]);
		if (i == 1 || i == 2)
			html_raw(b, "</a>");
		html_raw(b, "</span>");
	}
	html_raw(b, "</p>");
}

int
page_profile(struct req *r)
{
	struct account u;
	long long ids[FEED_PAGE], page = field_page(r);
	struct buf *b = &r->body;
	int n, following = 0, self;

	if (page == 0 || arg_user(r, &u) == -1)
		return -1;
	self = r->user && r->sess.user_id == u.id;
	if (r->user && !self) {
		following = follow_exists(&r->app->db, r->sess.user_id, u.id) == 1;
		/* Opening the profile reads the author's posts so far (a
		 * write only when there is something new to mark read). */
		if (author_latest(&r->app->db, u.id) > marker_get(&r->app->db,
		    r->sess.user_id, "author", u.id))
			marker_put(r->app, r->sess.user_id, "author", u.id,
			    clock_wall_ms());
	}
	n = timeline_ids(r, TL_PROFILE, u.id, page, FEED_PAGE, ids);
	if (n < 0)
		return resp_error(r, 500, "The profile could not be read.");
	page_begin(r, u.name);
	html_raw(b, "<section class=\"card profile\" data-login=\"");
	html_attr(b, u.login);
	html_raw(b, "\"><h1>");
	html_text(b, u.name);
	html_raw(b, " <small class=\"muted\">@");
	html_text(b, u.login);
	html_raw(b, "</small></h1>");
	profile_counts(r, &u);
	if (r->user && !self)
		follow_button(r, &u, following);
	html_raw(b, "</section>");
	if (self && page == 1)
		drafts(r, u.id);
	html_raw(b, "<h2>Posts</h2>");
	if (render_posts(r, ids, n, 0) < 0)
		return -1;
	if (n == 0)
		html_raw(b, "<p class=\"muted\">No posts yet.</p>");
	{
		char path[64];

		snprintf(path, sizeof(path), "/u/%s", u.login);
		render_pager(r, path, page, n == FEED_PAGE);
	}
	page_end(r);
	return 0;
}

static int
people_page(struct req *r, enum tl kind)
{
	struct account u;
	long long ids[PEOPLE_PAGE], page = field_page(r);
	struct buf *b = &r->body;
	struct dbq *s;
	char *json, path[80];
	int n, rows = 0;

	if (page == 0 || arg_user(r, &u) == -1)
		return -1;
	n = timeline_ids(r, kind, u.id, page, PEOPLE_PAGE, ids);
	s = db_stmt(&r->app->db, kind == TL_FOLLOWERS ? STMT_FOLLOWERS_BY_IDS :
	    STMT_FOLLOWING_BY_IDS);
	if (n < 0 || s == NULL)
		return resp_error(r, 500, "The list could not be read.");
	page_begin(r, kind == TL_FOLLOWERS ? "Followers" : "Following");
	html_raw(b, "<h1>");
	html_text(b, u.name);
	if (kind == TL_FOLLOWERS)
		html_raw(b, " \xc2\xb7 followers");
	else
		html_raw(b, " \xc2\xb7 following");
	html_raw(b, "</h1><ul class=\"people\">");
	json = render_ids_json(ids, n);
	dbq_bind_i64(s, 1, u.id);
	dbq_bind_text_copy(s, 2, json, -1);
	free(json);
	while (dbq_step(s) == DBQ_ROW) {
		const char *login = dbq_text(s, 1);

		html_raw(b, "<li data-login=\"");
		html_attr(b, login);
		html_raw(b, "\"><a href=\"/u/");
		html_url(b, login);
		html_raw(b, "\"><b>");
		html_text(b, dbq_text(s, 2));
		html_raw(b, "</b> @");
		html_text(b, login);
		html_raw(b, "</a> <span class=\"muted\">since ");
		render_time(r, dbq_i64(s, 3));
		html_raw(b, "</span></li>");
		rows++;
	}
	db_done(s);
	html_raw(b, "</ul>");
	if (rows == 0)
		html_raw(b, "<p class=\"muted\">Nobody yet.</p>");
	snprintf(path, sizeof(path), "/u/%s/%s", u.login,
	    kind == TL_FOLLOWERS ? "followers" : "following");
	render_pager(r, path, page, n == PEOPLE_PAGE);
	page_end(r);
	return 0;
}

int
page_followers(struct req *r)
{
	return people_page(r, TL_FOLLOWERS);
}

int
page_following(struct req *r)
{
	return people_page(r, TL_FOLLOWING);
}

static int
follow_action(struct req *r, int add)
{
	struct account u;
	char loc[64];
	int rc;

	if (arg_user(r, &u) == -1)
		return -1;
	if (u.id == r->sess.user_id)
		return resp_error(r, 400, "You cannot follow yourself.");
	rc = add ? follow_add(r->app, r->sess.user_id, u.id) :
	    follow_remove(r->app, r->sess.user_id, u.id);
	if (rc < 0)
		return resp_error(r, 500, "The follow could not be saved.");
	snprintf(loc, sizeof(loc), "/u/%s", u.login);
	return resp_redirect(r, loc);
}

int
page_follow(struct req *r)
{
	return follow_action(r, 1);
}

int
page_unfollow(struct req *r)
{
	return follow_action(r, 0);
}

