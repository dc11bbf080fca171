/* admin_pages.c -- leaderboards and reconciliation pages: each loads its
 * model (social/topview.c, count/runs.c), then renders it
 * (web/view_admin.c, web/view_report.c). */
#include <stdlib.h>

#include "admin_pages.h"
#include "base/buf.h"
#include "count/lb.h"
#include "count/runs.h"
#include "social/topview.h"
#include "web/field.h"
#include "web/layout.h"
#include "web/resp.h"
#include "web/view_admin.h"

int
page_top(struct req *r)
{
	const struct kv *byk = kv_get(&r->query, "by"), *nk = kv_get(&r->query, "n");
	struct top_view v;
	long long n = 10;
	enum family fam;
	int rc;

	if (byk == NULL || (fam = lb_family(byk->val)) == FAM__MAX)
		return resp_error(r, 400, "The field \xe2\x80\x9c" "by\xe2\x80\x9d "
		    "must be posts, followers, following, likes or rating.");
	if (nk != NULL && valid_int(nk->val, 1, LB_MAX, &n) == -1)
		return resp_error(r, 400, "The field \xe2\x80\x9cn\xe2\x80\x9d "
		    "must be a number from 1 to 100.");
	if ((rc = top_view_load(r->app, fam, (int)n, &v)) == -1)
		return resp_error(r, 503, "The leaderboards need Redis, which "
		    "is not answering.");
	if (rc == -2)
		return resp_error(r, 500, "The leaderboard could not be read.");
	page_load(r);
	view_top(r, byk->val, (int)n, &v);
	top_view_free(&v);
	return 0;
}

int
page_runs(struct req *r)
{
	struct run *runs = xcalloc(VIEW_RUNS_MAX, sizeof(*runs));
	int n;

	if ((n = runs_list(&r->app->db, runs, VIEW_RUNS_MAX)) < 0) {
		free(runs);
		return resp_error(r, 500, "The runs could not be read.");
	}
	page_load(r);
	view_runs(r, runs, n);
	free(runs);
	return 0;
}

int
page_run_start(struct req *r)
{
	const char *dry = field_opt(r, "dry_run", VALID_BOOL, "0");
	long long id, active;

	if (dry == NULL)
		return -1;
	id = runs_start(&r->app->db, dry[0] == '1', "admin", &active);
	if (id < 0)
		return resp_error(r, 500, "The run could not be started.");
	/* A second start while one runs starts nothing: the list shows it. */
	return resp_redirect(r, "/admin/reconcile");
}

int
page_run(struct req *r)
{
	struct run *run = xcalloc(1, sizeof(*run));
	struct run *all = xcalloc(VIEW_RUNS_MAX, sizeof(*all));
	struct run_names *names;
	int rc, n;

	if ((rc = runs_get(&r->app->db, req_arg_id(r, 0), run)) != 1 ||
	    (n = runs_list(&r->app->db, all, VIEW_RUNS_MAX)) < 0) {
		free(run);
		free(all);
		return resp_error(r, rc == 0 ? 404 : 500, rc == 0 ?
		    "There is no such run." : "The run could not be read.");
	}
	names = xcalloc(1, sizeof(*names));
	run_names_load(r->app, &run->report, names);	/* -1: raw keys */
	page_load(r);
	view_run(r, run, names, all, n);
	free(names);
	free(all);
	free(run);
	return 0;
}
