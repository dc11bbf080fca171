/* admin_pages.c -- leaderboards and reconciliation pages; the logic lives
 * in shared/ (count/lb.c, count/runs.c, count/reconcile.c, web/chart.c). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_pages.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/metrics.h"
#include "count/counters.h"
#include "count/cstore.h"
#include "count/flush.h"
#include "count/lb.h"
#include "count/runs.h"
#include "social/fanout.h"
#include "store/keys.h"
#include "web/chart.h"
#include "web/field.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/render.h"
#include "web/resp.h"

#define RUNS_SHOWN	20

long long
admin_flush_lag(struct app *a)
{
	struct dbq *s = db_stmt(&a->db, STMT_LAST_FLUSH);
	long long at = 0;

	if (s == NULL)
		return -1;
	if (dbq_step(s) == DBQ_ROW)
		at = dbq_i64(s, 0);
	db_done(s);
	return at > 0 ? (clock_wall_ms() - at) / 1000 : -1;
}

long long
admin_drift_get(rds_reply *h, const char *name, const char *what)
{
	char f[64];
	size_t i;

	snprintf(f, sizeof(f), "%s:%s", name, what);
	for (i = 0; h != NULL && h->type == RDS_ARRAY &&
	    i + 1 < h->elements; i += 2)
		if (strcmp(h->element[i]->str, f) == 0)
			return strtoll(h->element[i + 1]->str, NULL, 10);
	return 0;
}

void
admin_drift_table(struct req *r)
{
	rds_reply *h = rds_cmdv(&r->app->rds, "HGETALL", KEY_METRICS_DRIFT, NULL);
	struct buf *b = &r->body;
	long long c, w;
	int i;

	html_raw(b, "<h2>Continuous drift check</h2><table><tr><th>family</th>"
	    "<th class=\"num\">sampled</th><th class=\"num\">wrong</th>"
	    "<th class=\"num\">rate</th></tr>");
	for (i = 0; i < FAM__MAX; i++) {
		if (families[i].recount_one == NULL)
			continue;
		c = admin_drift_get(h, families[i].name, "checked");
		w = admin_drift_get(h, families[i].name, "wrong");
		html_raw(b, "<tr data-drift-family=\"");
		html_attr(b, families[i].name);
		html_raw(b, "\"><td>");
		html_text(b, families[i].name);
		html_raw(b, "</td><td class=\"num\">");
		html_int(b, c);
		html_raw(b, "</td><td class=\"num\">");
		html_int(b, w);
		html_raw(b, "</td><td class=\"num\">");
		if (c > 0) {
			char pct[32];

			snprintf(pct, sizeof(pct), "%.2f%%", 100.0 * (double)w /
			    (double)c);
			html_text(b, pct);
		} else
			html_raw(b, "\xe2\x80\x94");
		html_raw(b, "</td></tr>");
	}
	html_raw(b, "</table>");
	if (h != NULL)
		rds_free(h);
}

static void
run_row(struct req *r, const struct run *run)
{
	struct buf *b = &r->body;

	html_raw(b, "<tr data-run-id=\"");
	html_int(b, run->id);
	/* The page's marks: running|done|failed; a queued run is about to
	 * run (its text below still says "queued"). */
	html_raw(b, "\" data-state=\"");
	html_attr(b, strcmp(run->state, "queued") == 0 ? "running" : run->state);
	html_raw(b, "\" data-progress=\"");
	html_int(b, run->progress);
	html_raw(b, "\"><td><a href=\"/admin/reconcile/");
	html_int(b, run->id);
	html_raw(b, "\">#");
	html_int(b, run->id);
	html_raw(b, "</a></td><td>");
	html_text(b, run->state);
	if (run->dry)
		html_raw(b, " (dry run)");
	html_raw(b, "</td><td>");
	html_text(b, run->reason);
	html_raw(b, "</td><td><progress max=\"100\" value=\"");
	html_int(b, run->progress);
	html_raw(b, "\">");
	html_int(b, run->progress);
	html_raw(b, "%</progress> ");
	html_int(b, run->progress);
	html_raw(b, "%</td><td class=\"num\">");
	html_int(b, rec_report_wrong(&run->report));
	html_raw(b, "</td><td>");
	render_time(r, run->created_at);
	html_raw(b, "</td></tr>");
}

static void
runs_table_head(struct req *r)
{
	html_raw(&r->body, "<table class=\"runs\"><tr><th>run</th><th>state</th>"
	    "<th>why</th><th>progress</th><th class=\"num\">wrong</th>"
	    "<th>started</th></tr>");
}

void
admin_last_run(struct req *r)
{
	struct run *runs = xcalloc(1, sizeof(*runs));
	int n = runs_list(&r->app->db, runs, 1);

	html_raw(&r->body, "<section class=\"card\"><h2>Reconciliation</h2>");
	if (n > 0) {
		runs_table_head(r);
		run_row(r, &runs[0]);
		html_raw(&r->body, "</table>");
	} else
		html_raw(&r->body, "<p class=\"muted\">No run yet.</p>");
	html_raw(&r->body, "<p><a href=\"/admin/reconcile\">Runs and drift "
	    "reports</a></p></section>");
	free(runs);
}

int
page_top(struct req *r)
{
	const struct kv *byk = kv_get(&r->query, "by"), *nk = kv_get(&r->query, "n");
	long long uids[LB_MAX], vals[LB_MAX], n = 10;
	struct delta ds[4 * LB_MAX];
	struct buf *b = &r->body;
	struct dbq *s;
	enum family fam;
	char *json;
	int k, i, j;

	if (byk == NULL || (fam = lb_family(byk->val)) == FAM__MAX)
		return resp_error(r, 400, "The field \xe2\x80\x9c" "by\xe2\x80\x9d "
		    "must be posts, followers, following, likes or rating.");
	if (nk != NULL && valid_int(nk->val, 1, LB_MAX, &n) == -1)
		return resp_error(r, 400, "The field \xe2\x80\x9cn\xe2\x80\x9d "
		    "must be a number from 1 to 100.");
	if ((k = lb_top(r->app, fam, 0, (int)n, uids, vals)) < 0)
		return resp_error(r, 503, "The leaderboards need Redis, which "
		    "is not answering.");
	memset(ds, 0, sizeof(ds));
	for (i = 0; i < k; i++) {
		ds[4 * i].fam = FAM_USER_POSTS;
		ds[4 * i + 1].fam = FAM_USER_FOLLOWERS;
		ds[4 * i + 2].fam = FAM_USER_FOLLOWING;
		ds[4 * i + 3].fam = FAM_USER_LIKES;
		for (j = 0; j < 4; j++)
			ds[4 * i + j].k1 = uids[i];
	}
	cstore_get(r->app, ds, 4 * k);
	page_begin(r, "Leaderboard");
	html_raw(b, "<h1>Top ");
	html_int(b, n);
	html_raw(b, " by ");
	html_text(b, byk->val);
	html_raw(b, "</h1><table class=\"top\"><tr><th>#</th><th>user</th>"
	    "<th class=\"num\">");
	html_text(b, byk->val);
	html_raw(b, "</th><th class=\"num\">posts</th><th class=\"num\">"
	    "followers</th><th class=\"num\">following</th><th class=\"num\">"
	    "likes</th></tr>");
	json = render_ids_json(uids, k);
	if ((s = db_stmt(&r->app->db, STMT_USERS_BY_IDS)) != NULL) {
		dbq_bind_text_copy(s, 1, json, -1);
		i = 0;
		while (dbq_step(s) == DBQ_ROW) {
			const char *login = dbq_text(s, 1);

			while (i < k && uids[i] != dbq_i64(s, 0))
				i++;
			if (i == k)
				break;
			html_raw(b, "<tr data-rank=\"");
			html_int(b, i + 1);
			html_raw(b, "\" data-login=\"");
			html_attr(b, login);
			html_raw(b, "\" data-value=\"");
			html_int(b, vals[i]);
			html_raw(b, "\"><td>");
			html_int(b, i + 1);
			html_raw(b, "</td><td><a href=\"/u/");
			html_url(b, login);
			html_raw(b, "\">@");
			html_text(b, login);
			html_raw(b, "</a></td><td class=\"num\">");
			html_int(b, vals[i]);
			html_raw(b, "</td>");
			for (j = 0; j < 4; j++) {
				html_raw(b, "<td class=\"num\">");
				html_int(b, ds[4 * i + j].d);
				html_raw(b, "</td>");
			}
			html_raw(b, "</tr>");
			i++;
		}
		db_done(s);
	}
	free(json);
	html_raw(b, "</table><p class=\"muted\">Equal values: the newer account "
	    "ranks first.</p>");
	page_end(r);
	return 0;
}

/* Drift per finished run, oldest first, as an SVG bar chart. */
static void
runs_chart(struct req *r, const struct run *runs, int n)
{
	long long vals[RUNS_SHOWN], labels[RUNS_SHOWN];
	int i, k = 0;

	html_raw(&r->body, "<section class=\"card\"><h2>Drift per run</h2>");
	for (i = n - 1; i >= 0; i--)
		if (strcmp(runs[i].state, "done") == 0 && k < RUNS_SHOWN) {
			vals[k] = rec_report_wrong(&runs[i].report);
			labels[k++] = runs[i].id;
		}
	chart_bars(&r->body, "Counters found wrong per reconciliation run",
	    vals, labels, k);
	html_raw(&r->body, "</section>");
}

int
page_runs(struct req *r)
{
	struct run *runs = xcalloc(RUNS_SHOWN, sizeof(*runs));
	struct buf *b = &r->body;
	int n, i;

	if ((n = runs_list(&r->app->db, runs, RUNS_SHOWN)) < 0) {
		free(runs);
		return resp_error(r, 500, "The runs could not be read.");
	}
	page_begin(r, "Reconciliation");
	html_raw(b, "<h1>Reconciliation</h1><section class=\"card\">"
	    "<form method=\"post\" action=\"/admin/reconcile\" class=\"inline\">");
	page_csrf(r);
	html_raw(b, "<label><span><input type=\"checkbox\" name=\"dry_run\" "
	    "value=\"1\" class=\"check\"> Dry run (report only)</span></label> "
	    "<button type=\"submit\">Start a run</button></form></section>"
	    "<section class=\"card\">");
	runs_table_head(r);
	for (i = 0; i < n; i++)
		run_row(r, &runs[i]);
	html_raw(b, "</table>");
	if (n == 0)
		html_raw(b, "<p class=\"muted\">No run yet.</p>");
	html_raw(b, "</section>");
	runs_chart(r, runs, n);
	page_end(r);
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
	struct buf *b = &r->body;
	int i, j, rc;

	if ((rc = runs_get(&r->app->db, req_arg_id(r, 0), run)) != 1) {
		free(run);
		return resp_error(r, rc == 0 ? 404 : 500, "There is no such run.");
	}
	page_begin(r, "Drift report");
	html_raw(b, "<h1>Run #");
	html_int(b, run->id);
	html_raw(b, "</h1><section class=\"card\">");
	runs_table_head(r);
	run_row(r, run);
	html_raw(b, "</table>");
	if (run->error[0]) {
		html_raw(b, "<p class=\"flash error\">");
		html_text(b, run->error);
		html_raw(b, "</p>");
	}
	html_raw(b, "</section><section class=\"card\"><h2>Drift report</h2>"
	    "<table class=\"report\"><tr><th>family</th><th class=\"num\">checked"
	    "</th><th class=\"num\">wrong</th><th class=\"num\">fixed</th>"
	    "<th class=\"num\">largest error</th><th>examples</th></tr>");
	for (i = 0; i < REC_FAMILIES; i++) {
		const struct rec_family *f = &run->report.fam[i];

		html_raw(b, "<tr data-family=\"");
		html_attr(b, f->name);
		html_raw(b, "\" data-checked=\"");
		html_int(b, f->checked);
		html_raw(b, "\" data-wrong=\"");
		html_int(b, f->wrong);
		html_raw(b, "\" data-fixed=\"");
		html_int(b, f->fixed);
		html_raw(b, "\" data-max-error=\"");
		html_int(b, f->max_err);
		html_raw(b, "\"><td>");
		html_text(b, f->name);
		html_raw(b, "</td><td class=\"num\">");
		html_int(b, f->checked);
		html_raw(b, "</td><td class=\"num\">");
		html_int(b, f->wrong);
		html_raw(b, "</td><td class=\"num\">");
		html_int(b, f->fixed);
		html_raw(b, "</td><td class=\"num\">");
		html_int(b, f->max_err);
		html_raw(b, "</td><td>");
		for (j = 0; j < f->nex; j++) {
			if (j)
				html_raw(b, ", ");
			html_text(b, f->ex[j]);
		}
		if (f->unsettled > 0) {
			html_raw(b, " (");
			html_int(b, f->unsettled);
			html_raw(b, " kept moving; left to the next run)");
		}
		html_raw(b, "</td></tr>");
	}
	html_raw(b, "</table></section>");
	{
		struct run *all = xcalloc(RUNS_SHOWN, sizeof(*all));
		int n = runs_list(&r->app->db, all, RUNS_SHOWN);

		runs_chart(r, all, n > 0 ? n : 0);
		free(all);
	}
	page_end(r);
	free(run);
	return 0;
}
