/* runs.h -- reconciliation runs: at most one active, each with live
 * progress, a checkpoint to resume from, and its drift report (JSON).
 * A run is created queued (by the admin page, tallyctl, the schedule or
 * the Redis-empty check) and executed by the worker, or by tallyctl in
 * its own process; a run left "running" by a killed worker resumes from
 * its checkpoint when the worker comes back. */
#ifndef TALLY_RUNS_H
#define TALLY_RUNS_H

#include "count/reconcile.h"
#include "store/app.h"

struct run {
	long long		id;
	char			state[12];	/* queued running done failed */
	int			dry;
	char			reason[32];
	int			progress;	/* 0..100 */
	int			checkpoint;	/* next step */
	char			error[128];
	long long		created_at, started_at, finished_at;
	long long		owner;		/* pid running it, 0 none */
	struct rec_report	report;
};

/* A new queued run: its id; 0 when a run is already active (its id goes
 * in *active); -1 on error. */
long long	runs_start(struct db *, int dry, const char *reason,
		    long long *active);
/* The active (queued or running) run's id, 0 when none, -1 on error. */
long long	runs_active(struct db *);
int		runs_get(struct db *, long long id, struct run *);
/* The newest finished run: 1, 0 when none, -1. */
int		runs_last_done(struct db *, struct run *);
/* The newest runs, newest first; how many, or -1. */
int		runs_list(struct db *, struct run *out, int max);
/* Executes run id from its checkpoint to the end (or failure), keeping
 * progress and report up to date.  line, if not NULL, gets each
 * percentage.  A run that a live process (another pid) is executing is
 * left alone; one whose owner died is taken over.  1 done, 0 not ours,
 * -1 failed (recorded in the run). */
int		runs_execute(struct app *, long long id,
		    void (*line)(int pct, const char *step));

#endif
