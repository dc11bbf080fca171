/* notify.c -- tally-notify: notifications, notices, the red dot, badges.
 *
 * Routes (mirrored by nginx-conf/tally.conf.in):
 *   GET  /notifications?page=N        newest first, 30 a page; unread ones
 *                                     carry data-unread="1" (login)
 *   POST /notifications/ID/read       303 /notifications | 404 not yours
 *   POST /notifications/ID/delete     303 /notifications | 404 not yours
 *   POST /notifications/read-all      303 /notifications
 *   GET  /notices                     system notices; marks all read
 *   GET  /news                        the red-dot column; clears the dot
 *   GET  /badges                      HTML fragment of the four badges
 *   GET  /badges.json                 {"notifications":N,"notices":N,
 *                                     "followed":N,"red_dot":B}; ETag and
 *                                     If-None-Match (304) | 401 logged out
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/clock.h"
#include "social/badges.h"
#include "social/notify.h"
#include "social/session.h"
#include "web/field.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/render.h"
#include "web/req.h"
#include "web/resp.h"
#include "web/route.h"
#include "web/serve.h"

#define NOTES_PAGE	30

static int page_notifications(struct req *);
static int page_note_read(struct req *);
static int page_note_delete(struct req *);
static int page_read_all(struct req *);
static int page_notices(struct req *);
static int page_news(struct req *);
static int page_badges_html(struct req *);
static int page_badges_json(struct req *);

static const struct route routes[] = {
	{ METHOD_GET, "/notifications", page_notifications, ROUTE_USER },	/* ROUTE_NOTES */
	{ METHOD_POST, "/notifications/read-all", page_read_all, ROUTE_USER },	/* ROUTE_READ_ALL */
	{ METHOD_POST, "/notifications/:id/read", page_note_read, ROUTE_USER },	/* ROUTE_READ */
	{ METHOD_POST, "/notifications/:id/delete", page_note_delete, ROUTE_USER }, /* ROUTE_DELETE */
	{ METHOD_GET, "/notices", page_notices, ROUTE_USER },		/* ROUTE_NOTICES */
	{ METHOD_GET, "/news", page_news, ROUTE_USER },			/* ROUTE_NEWS */
	{ METHOD_GET, "/badges", page_badges_html, ROUTE_USER },	/* ROUTE_BADGES */
	/* Polled by every open page: the session is checked in Redis. */
	{ METHOD_GET, "/badges.json", page_badges_json, ROUTE_OWNAUTH | ROUTE_JSON }, /* ROUTE_BADGES_JSON */
};

int
main(int argc, char *argv[])
{
	return serve_run(argc, argv, "notify", routes,
	    sizeof(routes) / sizeof(routes[0]));
}

static void
note_form(struct req *r, long long id, const char *action, const char *label)
{
	struct buf *b = &r->body;

	html_raw(b, "<form method=\"post\" class=\"inline\" action=\"/notifications/");
	html_int(b, id);
	html_raw(b, "/");
	html_text(b, action);
	html_raw(b, "\">");
	page_csrf(r);
	html_raw(b, "<button type=\"submit\" class=\"link\">");
	html_text(b, label);
	html_raw(b, "</button></form>");
}

static int
page_notifications(struct req *r)
{
	static const struct { const char *kind, *text; } verbs[] = {
		{ "like", " liked your post" }, { "comment", " commented on your post" },
		{ "repost", " reposted your post" }, { "follow", " followed you" },
	};
	long long page = field_page(r), id, post;
	struct buf *b = &r->body;
	struct dbq *s;
	const char *kind;
	int n = 0;
	size_t i;

	if (page == 0)
		return -1;
	if ((s = db_stmt(&r->app->db, STMT_NOTES_PAGE)) == NULL)
		return resp_error(r, 500, "The notifications could not be read.");
	page_begin(r, "Notifications");
	html_raw(b, "<h1>Notifications</h1><form method=\"post\" "
	    "action=\"/notifications/read-all\" class=\"inline\">");
	page_csrf(r);
	html_raw(b, "<button type=\"submit\" class=\"secondary\">Mark all read"
	    "</button></form><ul class=\"people notes\">");
	dbq_bind_i64(s, 1, r->sess.user_id);
	dbq_bind_int(s, 2, NOTES_PAGE);
	dbq_bind_i64(s, 3, (page - 1) * NOTES_PAGE);
	while (dbq_step(s) == DBQ_ROW) {
		id = dbq_i64(s, 0);
		kind = dbq_text(s, 1);
		post = dbq_i64(s, 2);
		html_raw(b, "<li data-notification-id=\"");
		html_int(b, id);
		html_raw(b, "\" data-unread=\"");
		html_int(b, dbq_int(s, 3) == 0);
		html_raw(b, "\"><a href=\"/u/");
		html_url(b, dbq_text(s, 5));
		html_raw(b, "\"><b>");
		html_text(b, dbq_text(s, 6));
		html_raw(b, "</b></a>");
		for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
			if (strcmp(kind, verbs[i].kind) == 0)
				html_text(b, verbs[i].text);
		if (post > 0) {
			html_raw(b, " <a href=\"/posts/");
			html_int(b, post);
			html_raw(b, "\">#");
			html_int(b, post);
			html_raw(b, "</a>");
		}
		html_raw(b, " <span class=\"muted\">");
		render_time(r, dbq_i64(s, 4));
		html_raw(b, "</span> ");
		if (dbq_int(s, 3) == 0)
			note_form(r, id, "read", "Mark read");
		note_form(r, id, "delete", "Delete");
		html_raw(b, "</li>");
		n++;
	}
	db_done(s);
	html_raw(b, "</ul>");
	if (n == 0)
		html_raw(b, "<p class=\"muted\">No notifications.</p>");
	render_pager(r, "/notifications", page, n == NOTES_PAGE);
	page_end(r);
	return 0;
}

/* 404 unless notification ID exists and is the user's (no leak). */
static int
own_note(struct req *r, long long *id)
{
	struct dbq *s = db_stmt(&r->app->db, STMT_NOTE_OWNER);
	long long owner = 0;

	*id = req_arg_id(r, 0);
	if (s == NULL)
		return resp_error(r, 500, "The notification could not be read.");
	dbq_bind_i64(s, 1, *id);
	if (dbq_step(s) == DBQ_ROW)
		owner = dbq_i64(s, 0);
	db_done(s);
	if (owner == 0 || owner != r->sess.user_id)
		return resp_error(r, 404, "There is no such notification.");
	return 0;
}

static int
page_note_read(struct req *r)
{
	long long id;

	if (own_note(r, &id) == -1)
		return -1;
	if (notify_read(r->app, id, r->sess.user_id) == -1)
		return resp_error(r, 500, "The notification could not be saved.");
	return resp_redirect(r, "/notifications");
}

static int
page_note_delete(struct req *r)
{
	struct dbq *s = db_stmt(&r->app->db, STMT_NOTE_OWNER);
	long long id = req_arg_id(r, 0), owner = 0;

	if (s == NULL)
		return resp_error(r, 500, "The notification could not be read.");
	dbq_bind_i64(s, 1, id);
	if (dbq_step(s) == DBQ_ROW)
		owner = dbq_i64(s, 0);
	db_done(s);
	/* Someone else's and missing answer alike (existence does not
	 * leak); a repeated delete of one's own finds it missing: 404,
	 * and nothing changes. */
	if (owner == 0 || owner != r->sess.user_id)
		return resp_error(r, 404, "There is no such notification.");
	if (notify_delete(r->app, id, r->sess.user_id) == -1)
		return resp_error(r, 500, "The notification could not be deleted.");
	return resp_redirect(r, "/notifications");
}

static int
page_read_all(struct req *r)
{
	if (notify_read_all(r->app, r->sess.user_id) == -1)
		return resp_error(r, 500, "The notifications could not be saved.");
	return resp_redirect(r, "/notifications");
}

static int
page_notices(struct req *r)
{
	struct dbq *s = db_stmt(&r->app->db, STMT_NOTICES_PAGE);
	struct buf *b = &r->body;
	long long latest = 0;
	int n = 0;

	if (s == NULL)
		return resp_error(r, 500, "The notices could not be read.");
	dbq_bind_int(s, 1, 50);
	dbq_bind_int(s, 2, 0);
	/* Read first, render after: the header's badge then shows 0. */
	while (dbq_step(s) == DBQ_ROW) {
		if (n++ == 0)
			latest = dbq_i64(s, 0);
	}
	dbq_reset(s);
	if (latest > 0)
		marker_put(r->app, r->sess.user_id, "notices", 0, latest);
	page_begin(r, "Notices");
	html_raw(b, "<h1>System notices</h1>");
	while (dbq_step(s) == DBQ_ROW) {
		html_raw(b, "<article class=\"notice\" data-notice-id=\"");
		html_int(b, dbq_i64(s, 0));
		html_raw(b, "\"><header><b>");
		html_text(b, dbq_text(s, 1));
		html_raw(b, "</b>");
		render_time(r, dbq_i64(s, 3));
		html_raw(b, "</header><div class=\"body\">");
		html_text(b, dbq_text(s, 2));
		html_raw(b, "</div></article>");
	}
	db_done(s);
	if (n == 0)
		html_raw(b, "<p class=\"muted\">No notices yet.</p>");
	page_end(r);
	return 0;
}

static int
page_news(struct req *r)
{
	struct buf *b = &r->body;
	long long lit = db_setting(&r->app->db, "red_dot_at", 0);

	marker_put(r->app, r->sess.user_id, "news", 0,
	    clock_wall_ms() > lit ? clock_wall_ms() : lit);
	page_begin(r, "News");
	html_raw(b, "<h1>What\xe2\x80\x99s new</h1><section class=\"card\">");
	if (lit > 0) {
		html_raw(b, "<p>The editors flagged something new on ");
		render_time(r, lit);
		html_raw(b, ". Catch up on the <a href=\"/notices\">notices</a> "
		    "and your <a href=\"/feed\">feed</a>.</p>");
	} else
		html_raw(b, "<p class=\"muted\">Nothing new yet.</p>");
	html_raw(b, "</section>");
	page_end(r);
	return 0;
}

static int
page_badges_html(struct req *r)
{
	struct badges bd;

	if (badges_get(r->app, r->sess.user_id, &bd) == -1)
		return resp_error(r, 500, "The badges could not be read.");
	page_badges(r, &bd);
	return 0;
}

static int
page_badges_json(struct req *r)
{
	const char *inm = req_param(r, "HTTP_IF_NONE_MATCH");
	const char *sid = req_cookie(r, "sid");
	struct badges bd;
	char etag[96], *s;
	long long uid;
	json_t *o;
	int rc = sid != NULL ? badges_poll(r->app, sid, &uid, &bd) : 0;

	if (rc == 0) {
		/* Not in the cache: SQLite decides, and the cache learns. */
		req_identify(r);
		if (!r->user) {
			resp_text(r, 401, "application/json",
			    "{\"error\":\"login required\"}\n");
			return 0;
		}
		session_cache_put(&r->app->rds, sid, &r->sess);
		rc = badges_get(r->app, r->sess.user_id, &bd) == 0 ? 1 : -1;
	}
	if (rc == -1) {
		resp_text(r, 500, "application/json", "{\"error\":\"database\"}\n");
		return -1;
	}
	badges_etag(&bd, etag, sizeof(etag));
	resp_header(r, "ETag", etag);
	/* nginx's gzip weakens the tag (W/"..."): compare the opaque part. */
	if (inm != NULL && strncmp(inm, "W/", 2) == 0)
		inm += 2;
	if (inm != NULL && strcmp(inm, etag) == 0) {
		resp_text(r, 304, "application/json", "");
		return 0;
	}
	o = json_pack("{s:I,s:I,s:I,s:b}", "notifications",
	    (json_int_t)bd.notifications, "notices", (json_int_t)bd.notices,
	    "followed", (json_int_t)bd.followed, "red_dot", bd.red_dot);
	s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (s == NULL)
		return resp_error(r, 500, "out of memory");
	resp_text(r, 200, "application/json", s);
	free(s);
	return 0;
}
