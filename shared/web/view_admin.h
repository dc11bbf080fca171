/* view_admin.h -- the operators' pages, rendered from models loaded
 * before (social/opsview.h, social/topview.h, count/runs.h); no I/O. */
#ifndef TALLY_VIEW_ADMIN_H
#define TALLY_VIEW_ADMIN_H

#include "base/metrics.h"
#include "social/opsview.h"
#include "social/runnames.h"
#include "social/topview.h"
#include "web/req.h"

#define VIEW_RUNS_MAX	20	/* runs a list or chart shows */

/* /admin: the gauges, the drift check, the latest run, the forms. */
void	view_admin(struct req *, const struct ops_view *);
/* /admin/top?by=BY&n=N */
void	view_top(struct req *, const char *by, int n, const struct top_view *);
/* /admin/reconcile: the newest runs (at most VIEW_RUNS_MAX). */
void	view_runs(struct req *, const struct run *runs, int n);
/* /admin/reconcile/ID: run, and all for the chart. */
void	view_run(struct req *, const struct run *run,
	    const struct run_names *names, const struct run *all, int nall);
/* Pieces shared by the two: a table of runs, and drift per run.  The
 * head opens the table inside its own sideways-scrolling region (a phone
 * is narrower than its seven columns): the caller closes both,
 * "</table></div>". */
void	view_runs_head(struct req *);
void	view_run_row(struct req *, const struct run *);
void	view_runs_chart(struct req *, const struct run *runs, int n);

/* /metrics in Prometheus's text format. */
void	view_metrics(struct buf *, const struct metrics *,
	    const struct ops_view *);

#endif
