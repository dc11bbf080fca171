/* view_admin.c -- the operators' HTML pages: the dashboard, a
 * leaderboard, the reconciliation runs and one run's drift report; see
 * view_admin.h.  No I/O: the models are loaded before. */
#include <stdio.h>
#include <string.h>

#include "web/chart.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/render.h"
#include "web/view_admin.h"

void
view_run_row(struct req *r, const struct run *run)
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
	/* the bar and its figure on one line (span.bar: no wrap) */
	html_raw(b, "</td><td><span class=\"bar\"><progress max=\"100\" "
	    "value=\"");
	html_int(b, run->progress);
	html_raw(b, "\">");
	html_int(b, run->progress);
	html_raw(b, "%</progress> <span class=\"pct\">");
	html_int(b, run->progress);
	html_raw(b, "%</span></span></td><td class=\"num\">");
	html_int(b, recreport_wrong(&run->report));
	html_raw(b, "</td><td class=\"num\" data-fixed>");
	html_int(b, recreport_fixed(&run->report));
	html_raw(b, "</td><td>");
	render_time(r, run->created_at);
	html_raw(b, "</td></tr>");
}

void
view_runs_head(struct req *r)
{
	html_raw(&r->body, "<div class=\"wide\" role=\"region\" tabindex=\"0\" "
	    "aria-label=\"Reconciliation runs\"><table class=\"runs\"><tr>"
	    "<th>run</th><th>state</th><th>why</th><th>progress</th>"
	    "<th class=\"num\">wrong</th><th class=\"num\">fixed</th>"
	    "<th>started</th></tr>");
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

static void
drift_table(struct req *r, const struct ops_view *v)
{
	struct buf *b = &r->body;
	char pct[32];
	int i;

	html_raw(b, "<h2>Continuous drift check</h2><table><tr><th>family</th>"
	    "<th class=\"num\">sampled</th><th class=\"num\">wrong</th>"
	    "<th class=\"num\">rate</th></tr>");
	for (i = 0; i < v->ndrift; i++) {
		const struct drift_row *d = &v->drift[i];

		html_raw(b, "<tr data-drift-family=\"");
		html_attr(b, d->family);
		html_raw(b, "\"><td>");
		html_text(b, d->family);
		html_raw(b, "</td><td class=\"num\">");
		html_int(b, d->checked);
		html_raw(b, "</td><td class=\"num\">");
		html_int(b, d->wrong);
		html_raw(b, "</td><td class=\"num\">");
		if (d->checked > 0) {
			snprintf(pct, sizeof(pct), "%.2f%%", 100.0 *
			    (double)d->wrong / (double)d->checked);
			html_text(b, pct);
		} else
			html_raw(b, "\xe2\x80\x94");
		html_raw(b, "</td></tr>");
	}
	html_raw(b, "</table>");
}

void
view_admin(struct req *r, const void *vm)
{
	const struct ops_view *v = vm;
	struct buf *b = &r->body;

	layout_begin(r, "Admin");
	html_raw(b, "<h1>Admin</h1><section class=\"card\"><h2>Right now</h2>"
	    "<table>");
	stat_row(r, "Counters with pending deltas", "pending-deltas",
	    v->pending);
	stat_row(r, "Deferred fan-out jobs", "fanout-jobs", v->fanout_jobs);
	stat_row(r, "Seconds since the last flush batch", "flush-lag",
	    v->flush_lag);
	html_raw(b, "</table>");
	drift_table(r, v);
	html_raw(b, "</section><section class=\"card\"><h2>Reconciliation</h2>");
	if (v->have_latest) {
		view_runs_head(r);
		view_run_row(r, &v->latest);
		html_raw(b, "</table></div>");
	} else
		html_raw(b, "<p class=\"muted\">No run yet.</p>");
	html_raw(b, "<p><a href=\"/admin/reconcile\">Runs and drift "
	    "reports</a></p></section>");
	html_raw(b, "<section class=\"card\"><h2>Leaderboards</h2><p>"
	    "<a href=\"/admin/top?by=posts\">posts</a> \xc2\xb7 "
	    "<a href=\"/admin/top?by=followers\">followers</a> \xc2\xb7 "
	    "<a href=\"/admin/top?by=following&amp;n=100\">following</a> \xc2\xb7 "
	    "<a href=\"/admin/top?by=likes\">likes</a></p><p class=\"muted\">"
	    "Rating is per topic: the likes of an author\xe2\x80\x99s posts "
	    "in that topic, ranked on each <a href=\"/topics\">topic\xe2\x80"
	    "\x99s page</a>.</p></section>");
	html_raw(b, "<section class=\"card\"><h2>Send a notice "
	    "to everyone</h2><form method=\"post\" action=\"/admin/notices\" "
	    "class=\"stack\">");
	layout_csrf(r);
	html_raw(b, "<label>Title <input name=\"title\" required maxlength=\"120\">"
	    "</label><label>Text <textarea name=\"body\" required maxlength=\"2000\">"
	    "</textarea></label><button type=\"submit\">Send notice</button></form>"
	    "</section><section class=\"card\"><h2>Red dot</h2><p>Lights the dot on "
	    "everyone\xe2\x80\x99s News badge until they open /news.</p>"
	    "<form method=\"post\" action=\"/admin/red-dot\">");
	layout_csrf(r);
	html_raw(b, "<button type=\"submit\">Light the red dot</button></form>"
	    "</section>");
	layout_end(r);
}

void
view_top(struct req *r, const void *vm)
{
	const struct top_model *m = vm;
	const struct top_view *v = &m->v;
	const char *by = m->by;
	int n = m->n;
	static const char *const names[PROFILE_NCOUNTS] = {
		[PROFILE_POSTS] = "posts", [PROFILE_FOLLOWERS] = "followers",
		[PROFILE_FOLLOWING] = "following", [PROFILE_LIKES] = "likes",
	};
	struct buf *b = &r->body;
	int i, j;

	layout_begin(r, "Leaderboard");
	html_raw(b, "<h1>Top ");
	html_int(b, n);
	html_raw(b, " by ");
	html_text(b, by);
	html_raw(b, "</h1><table class=\"top\"><tr><th>#</th><th>user</th>"
	    "<th class=\"num\" aria-sort=\"descending\">");
	html_text(b, by);
	html_raw(b, "</th>");
	for (j = 0; j < PROFILE_NCOUNTS; j++)
		if (strcmp(names[j], by) != 0) {
			html_raw(b, "<th class=\"num\">");
			html_text(b, names[j]);
			html_raw(b, "</th>");
		}
	html_raw(b, "</tr>");
	for (i = 0; i < v->rows.n; i++) {
		const struct person *p = &v->rows.v[i];

		html_raw(b, "<tr data-rank=\"");
		html_int(b, i + 1);
		html_raw(b, "\" data-login=\"");
		html_attr(b, p->login);
		html_raw(b, "\" data-value=\"");
		html_int(b, p->num);
		html_raw(b, "\"><td>");
		html_int(b, i + 1);
		html_raw(b, "</td><td>");
		render_at_login(r, p->login);
		html_raw(b, "</td><td class=\"num\">");
		html_int(b, p->num);
		html_raw(b, "</td>");
		for (j = 0; j < PROFILE_NCOUNTS; j++) {
			if (strcmp(names[j], by) == 0)
				continue;	/* it is the value column */
			html_raw(b, "<td class=\"num\">");
			if (v->counts[i][j].ok)
				html_int(b, v->counts[i][j].v);
			else
				html_raw(b, "?");
			html_raw(b, "</td>");
		}
		html_raw(b, "</tr>");
	}
	html_raw(b, "</table><p class=\"muted\">Equal values: the newer account "
	    "ranks first.</p>");
	/* by=rating stays an address (docs/INTERFACE.md), but over every
	 * topic at once a rating is the likes count (count/counters.c:
	 * user_topic_rating counts the likes of an author's published posts
	 * per topic, user_likes the same likes over all topics): say so
	 * rather than show a second likes board unexplained */
	if (strcmp(by, "rating") == 0)
		html_raw(b, "<p class=\"muted\" data-note=\"rating\">Rating is "
		    "kept per topic: the likes of an author\xe2\x80\x99s "
		    "published posts in that topic (each topic\xe2\x80\x99s page "
		    "ranks its best authors by it).  Over every topic together "
		    "it is the likes count, so this board is the "
		    "<a href=\"/admin/top?by=likes\">likes board</a>.</p>");
	layout_end(r);
}

/* Drift per finished run, oldest first, as an SVG bar chart. */
void
view_runs_chart(struct req *r, const struct run *runs, int n)
{
	long long vals[VIEW_RUNS_MAX], labels[VIEW_RUNS_MAX];
	int i, k = 0;

	html_raw(&r->body, "<section class=\"card\"><h2>Drift per run</h2>");
	for (i = n - 1; i >= 0; i--)
		if (strcmp(runs[i].state, "done") == 0 && k < VIEW_RUNS_MAX) {
			vals[k] = recreport_wrong(&runs[i].report);
			labels[k++] = runs[i].id;
		}
	chart_bars(&r->body, "Counters found wrong per reconciliation run",
	    vals, labels, k);
	html_raw(&r->body, "</section>");
}

void
view_runs(struct req *r, const void *vm)
{
	const struct run *runs = ((const struct runs_model *)vm)->runs;
	int n = ((const struct runs_model *)vm)->n;
	struct buf *b = &r->body;
	int i;

	layout_begin(r, "Reconciliation");
	html_raw(b, "<h1>Reconciliation</h1><section class=\"card\">"
	    "<form method=\"post\" action=\"/admin/reconcile\" class=\"row\">");
	layout_csrf(r);
	html_raw(b, "<label class=\"check\"><input type=\"checkbox\" "
	    "name=\"dry_run\" value=\"1\"> Dry run (report only)</label> "
	    "<button type=\"submit\">Start a run</button></form></section>"
	    "<section class=\"card\">");
	view_runs_head(r);
	for (i = 0; i < n; i++)
		view_run_row(r, &runs[i]);
	html_raw(b, "</table></div>");
	if (n == 0)
		html_raw(b, "<p class=\"muted\">No run yet.</p>");
	html_raw(b, "</section>");
	view_runs_chart(r, runs, n);
	layout_end(r);
}
