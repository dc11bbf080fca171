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

/* The pages: each renders its model (page.h), given as void *. */

/* /admin: the gauges, the drift check, the latest run, the forms. */
void	view_admin(struct req *, const void *ops_view);
/* /admin/top?by=BY&n=N */
struct top_model {
	const char		*by;
	int			 n;
	struct top_view		 v;
};
void	view_top(struct req *, const void *top_model);
/* /admin/reconcile: the newest runs (at most VIEW_RUNS_MAX). */
struct runs_model {
	struct run		 runs[VIEW_RUNS_MAX];
	int			 n;
};
void	view_runs(struct req *, const void *runs_model);
/* /admin/reconcile/ID: run, and all for the chart. */
struct run_model {
	struct run		 run;
	struct run_names	 names;
	struct run		 all[VIEW_RUNS_MAX];
	int			 nall;
};
void	view_run(struct req *, const void *run_model);
/* Pieces shared by the two: a table of runs, and drift per run.  The
 * head opens the table inside its own sideways-scrolling region (a phone
 * is narrower than its seven columns): the caller closes both,
 * "</table></div>". */
void	view_runs_head(struct req *);
void	view_run_row(struct req *, const struct run *);
void	view_runs_chart(struct req *, const struct run *runs, int n);

/* /metrics in Prometheus's text format, and as a page: the process's
 * own counter mapping with the gauges. */
void	view_metrics(struct buf *, const struct metrics *,
	    const struct ops_view *);
struct metrics_model {
	const struct metrics	*m;
	struct ops_view		 v;
};
void	view_metrics_page(struct req *, const void *metrics_model);
/* /healthz: "ok", or 503 naming what does not answer: the database by
 * its engine's name (db_name; NULL: "sqlite"), "redis". */
struct health {
	int		 db_ok;
	int		 redis_ok;
	const char	*db_name;
};
void	view_healthz(struct req *, const void *health);

#endif
