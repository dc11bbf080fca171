/* social_pages.c -- page functions of tally-social; logic is in shared/
 * (post.c, follow.c, timeline.c, render.c), these only map it to HTTP. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "cstore.h"
#include "follow.h"
#include "html.h"
#include "layout.h"
#include "lb.h"
#include "notify.h"
#include "pcache.h"
#include "post.h"
#include "render.h"
#include "resp.h"
#include "social_pages.h"
#include "timeline.h"

#define FEED_PAGE	30
#define PEOPLE_PAGE	50

/* Maps an enum post_rc to its answer; 0 for POST_OK. */
static int
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
static int
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
static int
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
	long long ids[FEED_PAGE], page = req_page(r);
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
	sqlite3_stmt *s = db_stmt(&r->app->db, STMT_DRAFTS_OF_USER);
	struct post p;
	int first = 1;

	if (s == NULL)
		return;
	sqlite3_bind_int64(s, 1, uid);
	while (sqlite3_step(s) == SQLITE_ROW) {
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
	sqlite3_stmt *s = db_stmt(d, STMT_AUTHOR_LATEST);
	long long t = 0;

	if (s == NULL)
		return 0;
	sqlite3_bind_int64(s, 1, uid);
	if (sqlite3_step(s) == SQLITE_ROW)
		t = sqlite3_column_int64(s, 0);
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
	long long ids[FEED_PAGE], page = req_page(r);
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
			    db_now_ms());
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
	long long ids[PEOPLE_PAGE], page = req_page(r);
	struct buf *b = &r->body;
	sqlite3_stmt *s;
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
	sqlite3_bind_int64(s, 1, u.id);
	sqlite3_bind_text(s, 2, json, -1, SQLITE_TRANSIENT);
	free(json);
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *login = (const char *)sqlite3_column_text(s, 1);

		html_raw(b, "<li data-login=\"");
		html_attr(b, login);
		html_raw(b, "\"><a href=\"/u/");
		html_url(b, login);
		html_raw(b, "\"><b>");
		html_text(b, (const char *)sqlite3_column_text(s, 2));
		html_raw(b, "</b> @");
		html_text(b, login);
		html_raw(b, "</a> <span class=\"muted\">since ");
		render_time(r, sqlite3_column_int64(s, 3));
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

/* body, topic, publish of a post form; -1 after a 400. */
static int
post_fields(struct req *r, const char **body, const char **slug, int *publish)
{
	const char *pub;

	if ((*body = req_need(r, "body", VALID_BODY)) == NULL)
		return -1;
	if ((*slug = req_opt(r, "topic", VALID_TOPIC, "general")) == NULL)
		return -1;
	if ((pub = req_opt(r, "publish", VALID_BOOL, "1")) == NULL)
		return -1;
	*publish = pub[0] == '1';
	return 0;
}

static int
redirect_post(struct req *r, long long id)
{
	char loc[48];

	snprintf(loc, sizeof(loc), "/posts/%lld", id);
	return resp_redirect(r, loc);
}

int
page_post_create(struct req *r)
{
	const char *body, *slug;
	long long id = 0;
	int publish;

	if (post_fields(r, &body, &slug, &publish) == -1)
		return -1;
	if (post_answer(r, post_create(r->app, r->sess.user_id, slug, body,
	    publish, &id)) == -1)
		return -1;
	return redirect_post(r, id);
}

static void
comments(struct req *r, const struct post *p)
{
	sqlite3_stmt *s = db_stmt(&r->app->db, STMT_COMMENTS_OF_POST);
	struct buf *b = &r->body;
	long long cid, author;

	html_raw(b, "<section class=\"comments\"><h2>Comments</h2>");
	if (s != NULL) {
		sqlite3_bind_int64(s, 1, p->id);
		while (sqlite3_step(s) == SQLITE_ROW) {
			cid = sqlite3_column_int64(s, 0);
			author = sqlite3_column_int64(s, 1);
			html_raw(b, "<div class=\"card comment\" id=\"c");
			html_int(b, cid);
			html_raw(b, "\" data-comment-id=\"");
			html_int(b, cid);
			html_raw(b, "\"><a href=\"/u/");
			html_url(b, (const char *)sqlite3_column_text(s, 2));
			html_raw(b, "\"><b>");
			html_text(b, (const char *)sqlite3_column_text(s, 3));
			html_raw(b, "</b></a> ");
			render_time(r, sqlite3_column_int64(s, 5));
			html_raw(b, "<div class=\"body\">");
			html_text(b, (const char *)sqlite3_column_text(s, 4));
			html_raw(b, "</div>");
			if (r->user && (author == r->sess.user_id ||
			    r->sess.is_admin)) {
				html_raw(b, "<form method=\"post\" class=\"inline\" "
				    "action=\"/comments/");
				html_int(b, cid);
				html_raw(b, "/delete\" data-confirm=\"Delete this "
				    "comment?\">");
				page_csrf(r);
				html_raw(b, "<button type=\"submit\" class=\"link\">"
				    "Delete</button></form>");
			}
			html_raw(b, "</div>");
		}
		db_done(s);
	}
	if (r->user && POST_VISIBLE(p)) {
		html_raw(b, "<form method=\"post\" class=\"stack card\" "
		    "action=\"/posts/");
		html_int(b, p->id);
		html_raw(b, "/comments\">");
		page_csrf(r);
		html_raw(b, "<label>Your comment <textarea name=\"body\" required "
		    "maxlength=\"2000\"></textarea></label><button type=\"submit\">"
		    "Comment</button></form>");
	}
	html_raw(b, "</section>");
}

/* The post of path argument 0 if the viewer may see it; else answers. */
static int
arg_post(struct req *r, struct post *p)
{
	long long id = req_arg_id(r, 0);
	int rc;

	if (id == 0)
		return resp_error(r, 404, "There is no such post.");
	if ((rc = post_get(&r->app->db, id, p)) != 1)
		return resp_error(r, rc == 0 ? 404 : 500, "There is no such post.");
	if (!post_can_see(p, r->user ? r->sess.user_id : 0)) {
		post_free(p);
		return resp_error(r, 404, "There is no such post.");
	}
	return 0;
}

int
page_post(struct req *r)
{
	struct buf *b = &r->body;
	struct post p;

	if (arg_post(r, &p) == -1)
		return -1;
	page_begin(r, "Post");
	if (r->method == METHOD_GET && POST_VISIBLE(&p))
		post_view(r->app, p.id);
	render_post(r, &p, RENDER_FULL, NULL);
	if (r->user && (p.user_id == r->sess.user_id || r->sess.is_admin) &&
	    !p.is_deleted) {
		html_raw(b, "<p class=\"actions\">");
		if (p.user_id == r->sess.user_id) {
			html_raw(b, "<a href=\"/posts/");
			html_int(b, p.id);
			html_raw(b, "/edit\">Edit</a> ");
		}
		html_raw(b, "<form method=\"post\" class=\"inline\" action=\"/posts/");
		html_int(b, p.id);
		html_raw(b, "/delete\" data-confirm=\"Delete this post?\">");
		page_csrf(r);
		html_raw(b, "<button type=\"submit\" class=\"link\">Delete</button>"
		    "</form></p>");
	}
	comments(r, &p);
	page_end(r);
	post_free(&p);
	return 0;
}

int
page_post_edit_form(struct req *r)
{
	struct buf *b = &r->body;
	struct post p;

	if (arg_post(r, &p) == -1)
		return -1;
	if (p.user_id != r->sess.user_id || p.is_deleted) {
		post_free(&p);
		return resp_error(r, 403, "Only the author edits a post.");
	}
	page_begin(r, "Edit post");
	html_raw(b, "<section class=\"card\"><h1>Edit post</h1>"
	    "<form method=\"post\" class=\"stack\" action=\"/posts/");
	html_int(b, p.id);
	html_raw(b, "/edit\">");
	page_csrf(r);
	html_raw(b, "<label>Text <textarea name=\"body\" required "
	    "maxlength=\"2000\">");
	html_text(b, p.body);
	html_raw(b, "</textarea></label><label>Topic <input name=\"topic\" "
	    "maxlength=\"32\" value=\"");
	html_attr(b, p.slug);
	html_raw(b, "\"></label><label><span><input type=\"checkbox\" "
	    "name=\"publish\" value=\"1\"");
	if (p.status == 1)
		html_raw(b, " checked");
	html_raw(b, " class=\"check\"> Published</span></label>"
	    "<input type=\"hidden\" name=\"publish\" value=\"0\">"
	    "<button type=\"submit\">Save</button></form></section>");
	page_end(r);
	post_free(&p);
	return 0;
}

int
page_post_edit(struct req *r)
{
	const char *body, *slug;
	long long id = req_arg_id(r, 0);
	int publish;

	if (post_fields(r, &body, &slug, &publish) == -1)
		return -1;
	if (post_answer(r, post_edit(r->app, id, r->sess.user_id, body, slug,
	    publish)) == -1)
		return -1;
	return redirect_post(r, id);
}

int
page_post_delete(struct req *r)
{
	if (post_answer(r, post_delete(r->app, req_arg_id(r, 0),
	    r->sess.user_id, r->sess.is_admin)) == -1)
		return -1;
	return resp_redirect(r, "/feed");
}

static int
post_action(struct req *r, int (*fn)(struct app *, long long, long long))
{
	long long id = req_arg_id(r, 0);

	if (post_answer(r, fn(r->app, id, r->sess.user_id)) == -1)
		return -1;
	return redirect_post(r, id);
}

int
page_post_like(struct req *r)
{
	return post_action(r, post_like);
}

int
page_post_unlike(struct req *r)
{
	return post_action(r, post_unlike);
}

int
page_post_repost(struct req *r)
{
	return post_action(r, post_repost);
}

int
page_comment(struct req *r)
{
	const char *body;
	long long id = req_arg_id(r, 0), cid = 0;

	if ((body = req_need(r, "body", VALID_BODY)) == NULL)
		return -1;
	if (post_answer(r, post_comment(r->app, id, r->sess.user_id, body,
	    &cid)) == -1)
		return -1;
	return redirect_post(r, id);
}

int
page_comment_delete(struct req *r)
{
	long long pid = 0;
	int rc;

	rc = post_comment_delete(r->app, req_arg_id(r, 0), r->sess.user_id,
	    r->sess.is_admin, &pid);
	if (rc == POST_NOTFOUND)
		return resp_error(r, 404, "There is no such comment.");
	if (post_answer(r, rc) == -1)
		return -1;
	return redirect_post(r, pid);
}

/* The topic's best authors by rating (likes of their visible posts in
 * it), from the topic's leaderboard. */
static void
best_authors(struct req *r, long long tid)
{
	long long uids[5], vals[5];
	struct buf *b = &r->body;
	sqlite3_stmt *s;
	char *json;
	int n = lb_top(r->app, FAM_UT_RATING, tid, 5, uids, vals), i = 0;

	if (n <= 0 || (s = db_stmt(&r->app->db, STMT_USERS_BY_IDS)) == NULL)
		return;
	html_raw(b, "<section class=\"card\"><h2>Best authors</h2>"
	    "<ol class=\"best\">");
	json = render_ids_json(uids, n);
	sqlite3_bind_text(s, 1, json, -1, SQLITE_TRANSIENT);
	free(json);
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *login = (const char *)sqlite3_column_text(s, 1);

		while (i < n && uids[i] != sqlite3_column_int64(s, 0))
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
	sqlite3_stmt *s;
	long long tid = 0, ids[FEED_PAGE], page = req_page(r);
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
	sqlite3_bind_text(s, 1, slug, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		tid = sqlite3_column_int64(s, 0);
	db_done(s);
	if (tid == 0)
		return resp_error(r, 404, "There is no such topic.");
	if ((s = db_stmt(&r->app->db, STMT_TOPIC_SQL)) == NULL)
		return resp_error(r, 500, "The topic could not be read.");
	sqlite3_bind_int64(s, 1, tid);
	sqlite3_bind_int(s, 2, FEED_PAGE);
	sqlite3_bind_int64(s, 3, (page - 1) * FEED_PAGE);
	while (n < FEED_PAGE && sqlite3_step(s) == SQLITE_ROW)
		ids[n++] = sqlite3_column_int64(s, 0);
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
