/* admin_pages.c -- leaderboards and reconciliation pages: each loads its
 * model (social/topview.c, count/runs.c); web/view_admin.c and
 * web/view_report.c render it. */
#include <assert.h>
#include <stdlib.h>

#include "admin_pages.h"
#include "base/buf.h"
#include "count/lb.h"
#include "count/runs.h"
#include "social/topview.h"
#include "web/act.h"
#include "web/field.h"
#include "web/layout.h"
#include "web/resp.h"
#include "web/view_admin.h"

static enum page_load
top_load(struct req *r, void *vm)
{
	struct top_model *m = vm;
	const char *by = "followers";
	long long n;
	enum family fam;
	int rc;

	/* no board named: the followers' (the README's link has none); a
	 * field sent empty is refused, not taken as absent */
	if ((field_has(r, "by") && (by = field_need(r, "by", VALID_BOARD))
	    == NULL) || (n = field_int(r, "n", VALID_TOP_N, 10)) == -1)
		return PAGE_ANSWERED;
	fam = lb_family(by);
	assert(fam != FAM__MAX);	/* VALID_BOARD names lb's boards */
	m->by = by;
	m->n = (int)n;
	if ((rc = topview_load(r->app, fam, (int)n, &m->v)) == -1) {
		resp_error(r, 503, "The leaderboards need Redis, which is not "
		    "answering.");
		return PAGE_ANSWERED;
	}
	if (rc == -2) {
		resp_error(r, 500, "The leaderboard could not be read.");
		return PAGE_ANSWERED;
	}
	layout_load(r);
	return PAGE_RENDER;
}

static void
top_done(void *vm)
{
	topview_free(&((struct top_model *)vm)->v);
}

const struct page page_top = {
	sizeof(struct top_model), top_load, view_top, top_done
};

static enum page_load
runs_load(struct req *r, void *vm)
{
	struct runs_model *m = vm;

	if ((m->n = runs_list(r->app->db, m->runs, VIEW_RUNS_MAX)) < 0) {
		resp_error(r, 500, "The runs could not be read.");
		return PAGE_ANSWERED;
	}
	layout_load(r);
	return PAGE_RENDER;
}

const struct page page_runs = {
	sizeof(struct runs_model), runs_load, view_runs, NULL
};

int
act_runs_start(struct req *r, const struct route *rt)
{
	const char *dry = field_opt(r, "dry_run", VALID_BOOL, "0");
	long long id, active;

	(void)rt;
	if (dry == NULL)
		return -1;
	id = runs_start(r->app->db, dry[0] == '1', "admin", &active);
	if (id < 0)
		return resp_error(r, 500, "The run could not be started.");
	/* A second start while one runs starts nothing: the list shows it. */
	return act_redirect(r, "/admin/reconcile", 0);
}

static enum page_load
run_load(struct req *r, void *vm)
{
	struct run_model *m = vm;
	int rc;

	if ((rc = runs_get(r->app->db, req_arg_id(r, 0), &m->run)) != 1 ||
	    (m->nall = runs_list(r->app->db, m->all, VIEW_RUNS_MAX)) < 0) {
		resp_error(r, rc == 0 ? 404 : 500, rc == 0 ?
		    "There is no such run." : "The run could not be read.");
		return PAGE_ANSWERED;
	}
	runnames_load(r->app, &m->run.report, &m->names);	/* -1: raw keys */
	layout_load(r);
	return PAGE_RENDER;
}

const struct page page_run = {
	sizeof(struct run_model), run_load, view_run, NULL
};
