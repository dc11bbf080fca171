/* opsview.h -- what the operators' pages show (/admin, /metrics): the
 * flusher's and fan-out's backlog, the drift check, the profile cache and
 * the reconciliation runs, loaded before rendering (web/view_admin.h). */
#ifndef TALLY_OPSVIEW_H
#define TALLY_OPSVIEW_H

#include "count/counters.h"
#include "count/runs.h"
#include "store/app.h"

struct drift_row {
	const char	*family;
	long long	 checked;	/* sampled by the drift check */
	long long	 wrong;		/* differed from their recount */
};

struct ops_view {
	long long		pending;	/* counters with unflushed deltas */
	long long		fanout_jobs;	/* deferred, waiting or running */
	long long		flush_lag;	/* s since the last batch; -1 none */
	struct drift_row	drift[FAM__MAX];
	int			ndrift;
	long long		cache_rebuilds, cache_sql;
	struct run		latest;		/* the newest run ... */
	int			have_latest;	/* ... when there is one */
	struct run		last_done;	/* the newest finished run ... */
	int			have_last_done;
};

/* Loads everything above; a part that cannot be read is left at 0 (the
 * Redis-side gauges) or absent (the runs). */
void	ops_view_load(struct app *, struct ops_view *);
/* Seconds since the last applied flush batch; -1 none yet or an error. */
long long ops_flush_lag(struct app *);

#endif
