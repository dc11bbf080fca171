/* admin.c -- tally-admin: the administrators' pages.
 *
 * Routes (mirrored by nginx-conf/tally.conf.in), all 403 for non-admins:
 *   GET  /admin              the dashboard
 *   POST /admin/notices      fields title, body: a notice to every user
 *                            (no per-user write) -> 303 /admin | 400
 *   POST /admin/red-dot      lights the red dot for every user -> 303 /admin
 *   GET  /admin/top?by=K&n=N leaderboard, K posts|followers|following|likes|
 *                            rating, N 1..100 (10) -> 200 | 400
 *   GET  /admin/reconcile    runs, live progress, drift chart, start form
 *   POST /admin/reconcile    field dry_run (0/1): starts a run unless one is
 *                            active -> 303 /admin/reconcile
 *   GET  /admin/reconcile/ID one run's drift report -> 200 | 404
 *   GET  /metrics            Prometheus text (nginx: 127.0.0.1 only; no login)
 */
#include <stdlib.h>
#include <string.h>

#include "admin_pages.h"
#include "count/flush.h"
#include "social/badges.h"
#include "social/fanout.h"
#include "web/field.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/req.h"
#include "web/resp.h"
#include "web/route.h"
#include "web/serve.h"

static int page_admin(struct req *);
static int page_notice(struct req *);
static int page_red_dot(struct req *);

static const struct route routes[] = {
	{ METHOD_GET, "/admin", page_admin, ROUTE_ADMIN },		/* ROUTE_ADMIN_HOME */
	{ METHOD_POST, "/admin/notices", page_notice, ROUTE_ADMIN },	/* ROUTE_NOTICE */
	{ METHOD_POST, "/admin/red-dot", page_red_dot, ROUTE_ADMIN },	/* ROUTE_RED_DOT */
	{ METHOD_GET, "/admin/top", page_top, ROUTE_ADMIN },		/* ROUTE_TOP */
	{ METHOD_GET, "/admin/reconcile", page_runs, ROUTE_ADMIN },	/* ROUTE_RUNS */
	{ METHOD_POST, "/admin/reconcile", page_run_start, ROUTE_ADMIN }, /* ROUTE_RUN_START */
	{ METHOD_GET, "/admin/reconcile/:id", page_run, ROUTE_ADMIN },	/* ROUTE_RUN */
	{ METHOD_GET, "/metrics", page_metrics, 0 },			/* ROUTE_METRICS */
};

int
main(int argc, char *argv[])
{
	return serve_run(argc, argv, "admin", routes,
	    sizeof(routes) / sizeof(routes[0]));
}

static void
stat_row(struct req *r, const char *label, const char *name, long long v)
{
	struct buf *b = &r->body;

	html_raw(b, "<tr><th>");
	html_text(b, label);
	html_raw(b, "</th><td class=\"num\" data-stat=\"");
	html_attr(b, name);
	html_raw(b, "\">");
	html_int(b, v);
	html_raw(b, "</td></tr>");
}

static int
page_admin(struct req *r)
{
	struct buf *b = &r->body;

	page_begin(r, "Admin");
	html_raw(b, "<h1>Admin</h1><section class=\"card\"><h2>Right now</h2>"
	    "<table>");
	stat_row(r, "Counters with pending deltas", "pending-deltas",
	    flush_pending(r->app));
	stat_row(r, "Deferred fan-out jobs", "fanout-jobs",
	    fanout_pending(r->app));
	stat_row(r, "Seconds since the last flush batch", "flush-lag",
	    admin_flush_lag(r->app));
	html_raw(b, "</table>");
	admin_drift_table(r);
	html_raw(b, "</section>");
	admin_last_run(r);
	html_raw(b, "<section class=\"card\"><h2>Leaderboards</h2><p>"
	    "<a href=\"/admin/top?by=posts\">posts</a> \xc2\xb7 "
	    "<a href=\"/admin/top?by=followers\">followers</a> \xc2\xb7 "
	    "<a href=\"/admin/top?by=following&amp;n=100\">following</a> \xc2\xb7 "
	    "<a href=\"/admin/top?by=likes\">likes</a> \xc2\xb7 "
	    "<a href=\"/admin/top?by=rating\">rating</a></p></section>");
	html_raw(b, "<section class=\"card\"><h2>Send a notice "
	    "to everyone</h2><form method=\"post\" action=\"/admin/notices\" "
	    "class=\"stack\">");
	page_csrf(r);
	html_raw(b, "<label>Title <input name=\"title\" required maxlength=\"120\">"
	    "</label><label>Text <textarea name=\"body\" required maxlength=\"2000\">"
	    "</textarea></label><button type=\"submit\">Send notice</button></form>"
	    "</section><section class=\"card\"><h2>Red dot</h2><p>Lights the dot on "
	    "everyone\xe2\x80\x99s News badge until they open /news.</p>"
	    "<form method=\"post\" action=\"/admin/red-dot\">");
	page_csrf(r);
	html_raw(b, "<button type=\"submit\">Light the red dot</button></form>"
	    "</section>");
	page_end(r);
	return 0;
}

static int
page_notice(struct req *r)
{
	const char *title, *body;
	long long id;

	if ((title = field_need(r, "title", VALID_TITLE)) == NULL ||
	    (body = field_need(r, "body", VALID_BODY)) == NULL)
		return -1;
	if (badges_notice(r->app, title, body, &id) == -1)
		return resp_error(r, 500, "The notice could not be saved.");
	return resp_redirect(r, "/admin");
}

static int
page_red_dot(struct req *r)
{
	if (badges_light(r->app) == -1)
		return resp_error(r, 500, "The red dot could not be lit.");
	return resp_redirect(r, "/admin");
}
