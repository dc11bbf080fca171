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
#include "web/act.h"
#include "web/field.h"
#include "web/flash.h"
#include "web/layout.h"
#include "web/req.h"
#include "web/resp.h"
#include "web/route.h"
#include "web/serve.h"
#include "web/view_admin.h"

static const struct page page_admin;
static int act_badges_notice(struct req *, const struct route *);
static int act_badges_light(struct req *, const struct route *);

static const struct route routes[] = {
	{ METHOD_GET, "/admin", .page = &page_admin, .flags = ROUTE_ADMIN },
	{ METHOD_POST, "/admin/notices", .act = act_badges_notice,
	    .flags = ROUTE_ADMIN },
	{ METHOD_POST, "/admin/red-dot", .act = act_badges_light,
	    .flags = ROUTE_ADMIN },
	{ METHOD_GET, "/admin/top", .page = &page_top, .flags = ROUTE_ADMIN },
	{ METHOD_GET, "/admin/reconcile", .page = &page_runs,
	    .flags = ROUTE_ADMIN },
	{ METHOD_POST, "/admin/reconcile", .act = act_runs_start,
	    .flags = ROUTE_ADMIN },
	{ METHOD_GET, "/admin/reconcile/:id", .page = &page_run,
	    .flags = ROUTE_ADMIN },
	{ METHOD_GET, "/metrics", .page = &page_metrics },
};

int
main(int argc, char *argv[])
{
	return serve_run(argc, argv, "admin", routes,
	    sizeof(routes) / sizeof(routes[0]));
}

static enum page_load
admin_load(struct req *r, void *vm)
{
	opsview_load(r->app, OPS_DASHBOARD, vm);
	layout_load(r);
	return PAGE_RENDER;
}

static const struct page page_admin = {
	sizeof(struct ops_view), admin_load, view_admin, NULL
};

static int
act_badges_notice(struct req *r, const struct route *rt)
{
	const char *title, *body;
	long long id;

	(void)rt;
	if ((title = field_need(r, "title", VALID_TITLE)) == NULL ||
	    (body = field_need(r, "body", VALID_BODY)) == NULL)
		return -1;
	if (badges_notice(r->app, title, body, &id) == -1)
		return resp_error(r, 500, "The notice could not be saved.");
	resp_flash(r, FLASH_NOTICE_SENT);
	return act_redirect(r, "/admin", 0);
}

static int
act_badges_light(struct req *r, const struct route *rt)
{
	(void)rt;
	if (badges_light(r->app) == -1)
		return resp_error(r, 500, "The red dot could not be lit.");
	resp_flash(r, FLASH_RED_DOT);
	return act_redirect(r, "/admin", 0);
}
