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
	long long		live_streams;	/* registered open streams (live.h) */
	struct drift_row	drift[FAM__MAX];
	int			ndrift;
	long long		cache_rebuilds, cache_sql;
	struct run		latest;		/* the newest run ... */
	int			have_latest;	/* ... when there is one */
	struct run		last_done;	/* the newest finished run ... */
	int			have_last_done;
};

/* What a page needs beyond the gauges and the drift check. */
#define OPS_DASHBOARD	0x01	/* the newest run (/admin) */
#define OPS_METRICS	0x02	/* the cache counters and the newest
				 * finished run (/metrics) */

/* Loads the gauges, the drift check and the parts named; a part that
 * cannot be read is left at 0 (the Redis-side gauges) or absent (the
 * runs). */
void	opsview_load(struct app *, unsigned parts, struct ops_view *);

#endif
