/* notify.c -- tally-notify: notifications, notices, the red dot, badges.
 *
 * Routes (mirrored by nginx-conf/tally.conf.in):
 *   GET  /notifications?page=N        groups (social/notify.h), the one
 *                                     with the newest first, 30 a page;
 *                                     data-group-size="N", data-unread="K";
 *                                     page 1 marks what it shows as read
 *   POST /notifications/ID/read       the whole group of ID; 303
 *                                     /notifications | 404 not yours
 *   POST /notifications/ID/delete     the same
 *   POST /notifications/read-all      303 /notifications
 *   GET  /notices                     system notices; marks all read
 *   GET  /news                        the red-dot column; clears the dot
 *   GET  /badges                      HTML fragment of the four badges
 * Actions answer 303 to `back` or, asked for JSON, the badges (act.h);
 * GETs move read markers on the user's own requests only (req_own).
 *   GET  /badges.json                 {"notifications":N,"notices":N,
 *                                     "followed":N,"red_dot":B}; ETag and
 *                                     If-None-Match (304) | 401 logged out
 *   GET  /badges/live                 the same object as a live stream:
 *                                     the session checked here, the
 *                                     badges now published to the user's
 *                                     channel, the stream handed to nginx
 *                                     (nchan: X-Accel-Redirect), which
 *                                     holds it | 401 logged out | 406
 *                                     without Accept: text/event-stream |
 *                                     503 when Redis is down (the page
 *                                     polls)
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/clock.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/metrics.h"
#include "social/badges.h"
#include "social/live.h"
#include "social/noteview.h"
#include "social/notify.h"
#include "social/sesscache.h"
#include "social/session.h"
#include "store/liveq.h"
#include "store/pubsub.h"
#include "web/act.h"
#include "web/batch.h"
#include "web/bjson.h"
#include "web/field.h"
#include "web/layout.h"
#include "web/req.h"
#include "web/resp.h"
#include "web/route.h"
#include "web/serve.h"
#include "web/view_notes.h"

#define NOTES_PAGE	30

static const struct page page_notifications, page_notices, page_news,
	    page_badges_html, page_badges_json, page_badges_live,
	    page_live_check;
static int act_note_with(struct req *, const struct route *);
static int act_notify_read_all(struct req *, const struct route *);

static const struct route routes[] = {
	{ METHOD_GET, "/notifications", .page = &page_notifications,
	    .flags = ROUTE_USER },
	{ METHOD_POST, "/notifications/read-all", .act = act_notify_read_all,
	    .flags = ROUTE_USER },
	{ METHOD_POST, "/notifications/:id/read", .act = act_note_with,
	    .call.note = notify_read, .flags = ROUTE_USER },
	{ METHOD_POST, "/notifications/:id/delete", .act = act_note_with,
	    .call.note = notify_delete, .flags = ROUTE_USER },
	{ METHOD_GET, "/notices", .page = &page_notices, .flags = ROUTE_USER },
	{ METHOD_GET, "/news", .page = &page_news, .flags = ROUTE_USER },
	{ METHOD_GET, "/badges", .page = &page_badges_html,
	    .flags = ROUTE_USER | ROUTE_PART },
	/* Polled by every open page: the session is checked in Redis. */
	{ METHOD_GET, "/badges.json", .page = &page_badges_json,
	    .flags = ROUTE_OWNAUTH | ROUTE_JSON | ROUTE_TOGETHER },
	{ METHOD_GET, "/badges/live", .page = &page_badges_live,
	    .flags = ROUTE_USER | ROUTE_JSON },
	/* nginx's own, once it holds a stream (nginx-conf/tally.conf.in) */
	{ METHOD_GET, "/internal/badges-check/:id", .page = &page_live_check,
	    .flags = ROUTE_JSON },
};

/* The polls taken together: their badges read in one round trip. */
static void
polls_taken(struct slot *s, int n)
{
	const char *sid[READ_MAX] = { NULL };
	long long uid[READ_MAX];
	struct badges bd[READ_MAX];
	int rc[READ_MAX], i;

	for (i = 0; i < n; i++)
		sid[i] = req_cookie(&s[i].r, "sid");
	badges_poll_many(s[0].r.app, sid, n, uid, bd, rc);
	for (i = 0; i < n; i++) {
		s[i].r.polled = 1;
		s[i].r.poll_rc = rc[i];
		s[i].r.poll_uid = uid[i];
		s[i].r.badges = bd[i];
	}
}

int
main(int argc, char *argv[])
{
	serve_together(polls_taken, NULL);
	return serve_run(argc, argv, "notify", routes,
	    sizeof(routes) / sizeof(routes[0]));
}

/* What the page's "Mark all read" reads up to (noteview.h): page 1's
 * own newest, or what the Older link that led here carried from it.
 * 0, or -1 after answering 400. */
static int
notes_seen(struct req *r, struct notes *ns)
{
	const char *snap;

	if (ns->page == 1) {
		ns->seen_upto = ns->newest;
		ns->seen_at = ns->newest_at;
		memcpy(ns->seen_snap, ns->snap, sizeof(ns->seen_snap));
		return 0;
	}
	if ((ns->seen_upto = field_int(r, "upto", VALID_ID, 0)) == -1 ||
	    (ns->seen_at = field_int(r, "at", VALID_ID, 0)) == -1)
		return -1;
	if (!field_has(r, "snap"))
		return 0;
	if ((snap = field_need(r, "snap", VALID_SNAPSHOT)) == NULL)
		return -1;
	snprintf(ns->seen_snap, sizeof(ns->seen_snap), "%s", snap);
	return 0;
}

static enum page_load
notes_page_load(struct req *r, void *vm)
{
	struct notes *ns = vm;
	long long page = field_page(r), at[3];
	struct note_mark before;
	int n;

	if (page == 0 || (n = field_ids(r, "before", at, 3)) == -1)
		return PAGE_ANSWERED;
	/* ?before=AT.ID: the page after the group (AT, ID), as "Older"
	 * links it (noteview.h); not page 1, which marks the list seen (an
	 * empty one is no page 1 either: refused) */
	if ((n == 0 && field_has(r, "before")) || (n != 0 && n != 2)) {
		resp_error(r, 400, "before: a time and an id, \"AT.ID\".");
		return PAGE_ANSWERED;
	}
	before = (struct note_mark){ at[0], at[1] };
	if (noteview_load(r->app, r->sess.user_id, page, n == 2 ? &before :
	    NULL, NOTES_PAGE, ns) == -1) {
		resp_error(r, 500, "The notifications could not be read.");
		return PAGE_ANSWERED;
	}
	if (notes_seen(r, ns) == -1)
		return PAGE_ANSWERED;	/* 400 */
	/* Opening the list marks what it shows as seen, up to its newest
	 * (one that arrives meanwhile stays unread); the page still shows
	 * which were unread when it was built. */
	if (ns->page == 1 && ns->n > 0 && req_own(r) &&
	    notify_read_all(r->app, r->sess.user_id, ns->newest,
	    ns->newest_at, ns->snap[0] != '\0' ? ns->snap : NULL) == -1) {
		resp_error(r, 500, "The notifications could not be saved.");
		return PAGE_ANSWERED;
	}
	layout_load(r);
	return PAGE_RENDER;
}

static void
notes_done(void *vm)
{
	noteview_free(vm);
}

static const struct page page_notifications = {
	sizeof(struct notes), notes_page_load, view_notes, notes_done
};

/* How a notification action answers: the badges after it as JSON, or
 * 303 back to the page (default /notifications). */
static int
note_answer(struct req *r)
{
	struct badges bd;

	if (!req_wants_json(r))
		return act_redirect(r, "/notifications", 0);
	if (badges_get(r->app, r->sess.user_id, &bd) == -1)
		return resp_error(r, 503, "The badges could not be read.");
	return act_json(r, bjson_object(&bd));
}

/* A read or a delete (route.h: call.note, notify_read or notify_delete)
 * of notification ID: 404 unless it exists and is the user's (someone
 * else's and a missing one answer alike: existence does not leak; a
 * repeated delete of one's own finds it missing: 404, nothing changes),
 * and, when the form says its time (at), is still the one the page
 * showed: SQLite gives a deleted newest id to the next notification, and
 * the form of one withdrawn since acted on that newcomer's group. */
static int
act_note_with(struct req *r, const struct route *rt)
{
	long long id = req_arg_id(r, 0), owner, at, shown;

	if ((shown = field_int(r, "at", VALID_ID, 0)) == -1)
		return 0;	/* answered: 400 */
	if (noteview_owner(r->app, id, &owner, &at) == -1)
		return resp_error(r, 500, "The notification could not be read.");
	if (owner == 0 || owner != r->sess.user_id ||
	    (shown > 0 && at != shown))
		return resp_error(r, 404, "There is no such notification.");
	if (rt->call.note(r->app, id, r->sess.user_id) == -1)
		return resp_error(r, 500, "The notification could not be saved.");
	return note_answer(r);
}

/* POST /notifications/read-all: every notification up to upto, the
 * newest the page showed, and up to at, the latest time it showed, that
 * the page's snapshot saw (snap, on PostgreSQL; its form sends them: one
 * that arrived after the page was built stays unread, even under a
 * shown id SQLite gave again, or under an id a PostgreSQL writer took
 * before the page and committed after it); without them, every one. */
static int
act_notify_read_all(struct req *r, const struct route *rt)
{
	long long upto, at;
	const char *snap = NULL;

	(void)rt;
	if ((upto = field_int(r, "upto", VALID_ID, NOTE_ALL)) == -1 ||
	    (at = field_int(r, "at", VALID_ID, NOTE_ALL)) == -1 ||
	    (field_has(r, "snap") &&
	    (snap = field_need(r, "snap", VALID_SNAPSHOT)) == NULL))
		return 0;	/* answered: 400 */
	if (notify_read_all(r->app, r->sess.user_id, upto, at, snap) == -1)
		return resp_error(r, 500, "The notifications could not be saved.");
	return note_answer(r);
}

static enum page_load
notices_page_load(struct req *r, void *vm)
{
	struct notices *ns = vm;

	if (noteview_notices_load(r->app, 50, ns) == -1) {
		resp_error(r, 500, "The notices could not be read.");
		return PAGE_ANSWERED;
	}
	/* Marked read before the badges load: the header then shows 0. */
	if (ns->n > 0 && req_own(r))
		notify_marker_put(r->app, r->sess.user_id, "notices", 0, ns->v[0].id);
	layout_load(r);
	return PAGE_RENDER;
}

static void
notices_done(void *vm)
{
	noteview_notices_free(vm);
}

static const struct page page_notices = {
	sizeof(struct notices), notices_page_load, view_notices, notices_done
};

static enum page_load
news_load(struct req *r, void *vm)
{
	struct news_model *m = vm;

	/* The visit marks the light it saw, not its clock: a light stamped
	 * before it waited for the writers' lock, and committed after this
	 * read, is older than the clock, and was hidden (lights only grow:
	 * badges_light()). */
	/* a failed read is no "nothing new", and marks nothing (the
	 * contract: a failed read is never shown as a 0) */
	if (dbq_setting_read(r->app->db, "red_dot_at", 0, &m->lit) == -1 ||
	    (req_own(r) && notify_marker_put(r->app, r->sess.user_id, "news",
	    0, m->lit) == -1)) {
		resp_error(r, 503, "The news could not be read.");
		return PAGE_ANSWERED;
	}
	layout_load(r);
	return PAGE_RENDER;
}

static const struct page page_news = {
	sizeof(struct news_model), news_load, view_news, NULL
};

static enum page_load
badges_html_load(struct req *r, void *vm)
{
	if (badges_get(r->app, r->sess.user_id, vm) == -1) {
		resp_error(r, 500, "The badges could not be read.");
		return PAGE_ANSWERED;
	}
	return PAGE_RENDER;
}

static const struct page page_badges_html = {
	sizeof(struct badges), badges_html_load, view_badges, NULL
};

static enum page_load
badges_json_load(struct req *r, void *vm)
{
	struct badges_json_model *m = vm;
	const char *inm = req_param(r, "HTTP_IF_NONE_MATCH");
	const char *sid = req_cookie(r, "sid");
	struct badges bd = r->badges;
	long long uid = r->poll_uid, gen;
	int rc = r->polled ? r->poll_rc :
	    badges_poll(r->app, sid, &uid, &bd);

	if (rc == 0) {
		/* Not in the cache: SQLite decides, and the cache learns
		 * (unless a logout came in between: sesscache.h). */
		gen = sesscache_gen(r->app->rds, uid);
		req_identify(r);
		if (!r->user && r->unsure) {	/* not a logout: ask again */
			resp_header(r, "Retry-After", "1");
			resp_text(r, 503, "application/json",
			    "{\"error\":\"session could not be checked\"}\n");
			return PAGE_ANSWERED;
		}
		if (!r->user) {
			resp_text(r, 401, "application/json",
			    "{\"error\":\"login required\"}\n");
			return PAGE_ANSWERED;
		}
		sesscache_put(r->app->rds, sid, &r->sess, gen);
		rc = badges_get(r->app, r->sess.user_id, &bd) == 0 ? 1 : -1;
	}
	if (rc == -1) {
		resp_text(r, 500, "application/json", "{\"error\":\"database\"}\n");
		return PAGE_ANSWERED;
	}
	if (bjson_get(&bd, &m->json, &m->etag) == -1) {
		resp_error(r, 500, "out of memory");
		return PAGE_ANSWERED;
	}
	/* nginx's gzip weakens the tag (W/"..."): compare the opaque part. */
	if (inm != NULL && strncmp(inm, "W/", 2) == 0)
		inm += 2;
	if (inm != NULL && strcmp(inm, m->etag) == 0) {
		resp_header(r, "ETag", m->etag);
		resp_text(r, 304, "application/json", "");
		return PAGE_ANSWERED;
	}
	return PAGE_RENDER;
}

static const struct page page_badges_json = {
	sizeof(struct badges_json_model), badges_json_load, view_badges_json,
	NULL
};

static enum page_load
badges_live_load(struct req *r, void *vm)
{
	struct app *a = r->app;
	struct badges bd;
	struct pubsub *pub;
	const char *json, *etag;
	char channel[32], where[64];
	long long uid = r->sess.user_id;

	(void)vm;
	/* nginx's module serves EventSource only (as a browser asks) */
	if (req_param(r, "HTTP_ACCEPT") == NULL ||
	    strstr(req_param(r, "HTTP_ACCEPT"), "text/event-stream") == NULL) {
		resp_text(r, 406, "application/json", "{\"error\":\"an "
		    "EventSource stream: send Accept: text/event-stream\"}\n");
		return PAGE_ANSWERED;
	}
	/* Registered first: a change from now on is told to this stream;
	 * without Redis there is nothing to tell it, and the page polls. */
	if (live_join(a, uid, clock_wall_ms() + LIVEQ_STREAM_MS) == -1) {
		resp_header(r, "Retry-After", "5");
		resp_text(r, 503, "application/json",
		    "{\"error\":\"live badges unavailable\"}\n");
		return PAGE_ANSWERED;
	}
	pub = live_publisher(a);
	/* The first event is the badges now: published, so the channel's
	 * last message (which nginx sends a new subscriber first) is it. */
	snprintf(channel, sizeof(channel), "u%lld", uid);
	if (badges_get(a, uid, &bd) == -1 ||
	    bjson_get(&bd, &json, &etag) == -1 || pub == NULL ||
	    pubsub_publish(pub, channel, json, strlen(json)) == -1) {
		metrics_live(a->metrics, METRICS_LIVE_FAILED);
		resp_header(r, "Retry-After", "5");
		resp_text(r, 503, "application/json",
		    "{\"error\":\"live badges unavailable\"}\n");
		return PAGE_ANSWERED;
	}
	metrics_live(a->metrics, METRICS_LIVE_PUBLISHED);
	metrics_live(a->metrics, METRICS_LIVE_OPENED);
	/* tally-live may have published a newer value while this one was
	 * read and sent, and nginx keeps the last to arrive: it has the
	 * last word (its next event reads the badges then) */
	live_user(a, uid);
	fault_point("live-open");	/* checked, not yet held by nginx */
	snprintf(where, sizeof(where), "/internal/badges/%lld", uid);
	resp_header(r, "X-Accel-Redirect", where);
	resp_header(r, "X-Accel-Buffering", "no");
	resp_text(r, 200, "text/plain", "");
	return PAGE_ANSWERED;
}

static const struct page page_badges_live = {
	0, badges_live_load, NULL, NULL
};

#define LIVE_CLOSE_AGAIN_MS	300

/* live_check_load()'s close once more, after the answer: nginx's workers
 * learn of a new subscriber apart, and a channel deleted before the
 * channel's own worker had this one on it was made again by it. */
static void
close_again(struct app *a, char *uid)
{
	usleep(LIVE_CLOSE_AGAIN_MS * 1000);
	live_close(a, strtoll(uid, NULL, 10));
}

/* nginx holds user id's new stream now (nchan_subscribe_request: the
 * browser's cookies come along): a session that ended between the open's
 * check and now (a logout, a new password) had its streams closed before
 * this one was there, and this one would hear the badges for up to ten
 * minutes -- closed now.  Either the end is seen here, or the end's
 * close came after the stream was on the channel. */
static enum page_load
live_check_load(struct req *r, void *vm)
{
	long long uid = req_arg_id(r, 0);
	char id[24];

	(void)vm;
	/* a session that could not be checked (the database failing) may
	 * be alive: its streams stay, and the next check decides */
	if (uid > 0 && !r->unsure && r->sess.user_id != uid) {
		log_info("a live stream of user %lld outlived its session: "
		    "closed", uid);
		live_close(r->app, uid);
		snprintf(id, sizeof(id), "%lld", uid);
		app_after(r->app, close_again, xstrdup(id));
	}
	resp_text(r, 204, "text/plain", "");
	return PAGE_ANSWERED;
}

static const struct page page_live_check = {
	0, live_check_load, NULL, NULL
};
