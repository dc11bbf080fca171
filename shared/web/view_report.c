/* view_report.c -- one reconciliation run's page: its row, its drift
 * report per family and the drift chart; see view_admin.h. */
#include <stdio.h>

#include "count/counters.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/render.h"
#include "web/view_admin.h"

/* One example of a report: the user, post or topic its key names. */
static void
example(struct req *r, const struct rec_family *f, const char *ex,
    const struct run_names *names)
{
	struct buf *b = &r->body;
	enum family fam = counters_family(f->name);
	long long k1 = 0, k2 = 0;
	const char *user, *topic;

	if (fam == FAM__MAX || sscanf(ex, "%lld:%lld", &k1, &k2) < 1) {
		html_text(b, ex);
		return;
	}
	user = runnames_get(names, k1, 0);
	topic = runnames_get(names, families[fam].obj == OBJ_TOPIC ? k1 : k2, 1);
	switch (families[fam].obj) {
	case OBJ_POST:
		html_raw(b, "<a href=\"/posts/");
		html_int(b, k1);
		html_raw(b, "\">post #");
		html_int(b, k1);
		html_raw(b, "</a>");
		return;
	case OBJ_TOPIC:
		break;
	case OBJ_USER:
	case OBJ_USER_TOPIC:
		if (user != NULL)
			render_at_login(r, user);
		else
			html_text(b, ex);
		if (families[fam].obj == OBJ_USER || topic == NULL)
			return;
		html_raw(b, " in ");
		break;
	}
	if (topic == NULL) {
		html_text(b, ex);
		return;
	}
	html_raw(b, "<a href=\"/t/");
	html_url(b, topic);
	html_raw(b, "\">#");
	html_text(b, topic);
	html_raw(b, "</a>");
}

void
view_run(struct req *r, const void *vm)
{
	const struct run_model *m = vm;
	const struct run *run = &m->run, *all = m->all;
	const struct run_names *names = &m->names;
	int nall = m->nall;
	struct buf *b = &r->body;
	char host[APP_OWNER_MAX];
	int i, j;

	layout_begin(r, "Drift report");
	html_raw(b, "<h1>Run #");
	html_int(b, run->id);
	html_raw(b, "</h1><section class=\"card\">");
	view_runs_head(r);
	view_run_row(r, run);
	html_raw(b, "</table></div>");
	/* who executes it (or did last): a host and a process there, which
	 * holds the run by a lease (count/runs.h) */
	if (run->owner_name[0] != '\0') {
		runs_owner_host(run, host, sizeof(host));
		html_raw(b, "<p class=\"muted\" data-owner-host=\"");
		html_attr(b, host);
		html_raw(b, "\">Run by ");
		html_text(b, host);
		html_raw(b, ", process ");
		html_int(b, run->owner);
		html_raw(b, "</p>");
	}
	if (run->error[0]) {
		html_raw(b, "<p class=\"flash error\">");
		html_text(b, run->error);
		html_raw(b, "</p>");
	}
	/* Six columns are wider than a phone: the table scrolls sideways in
	 * its own region (focusable, so a keyboard scrolls it too), never
	 * the page. */
	html_raw(b, "</section><section class=\"card\"><h2 id=\"drift\">Drift "
	    "report</h2><div class=\"wide\" role=\"region\" tabindex=\"0\" "
	    "aria-labelledby=\"drift\"><table class=\"report\"><tr>"
	    "<th>family</th><th class=\"num\">checked</th>"
	    "<th class=\"num\">wrong</th><th class=\"num\">fixed</th>"
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
			example(r, f, f->ex[j], names);
		}
		if (f->queued > 0) {
			html_raw(b, " (");
			html_int(b, f->queued);
			html_raw(b, " not settled during the run: queued, settled by the worker within seconds)");
		}
		html_raw(b, "</td></tr>");
	}
	html_raw(b, "</table></div></section>");
	view_runs_chart(r, all, nall);
	layout_end(r);
}
