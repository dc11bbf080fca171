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
#include "base/buf.h"
#include "social/badges.h"
#include "social/opsview.h"
#include "web/field.h"
#include "web/layout.h"
#include "web/req.h"
#include "web/resp.h"
#include "web/route.h"
#include "web/serve.h"
#include "web/view_admin.h"

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

static int
page_admin(struct req *r)
{
	struct ops_view *v = xcalloc(1, sizeof(*v));

	ops_view_load(r->app, OPS_DASHBOARD, v);
	page_load(r);
	view_admin(r, v);
	free(v);
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
