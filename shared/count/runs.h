/* runs.h -- reconciliation runs: at most one active, each with live
 * progress, a checkpoint to resume from, and its drift report (JSON).
 * A run is created queued (by the admin page, the schedule or the
 * Redis-empty check) and executed by the worker that runs the site's
 * jobs (store/lease.h), or created already claimed by tallyctl, which
 * runs it in its own process.
 *
 * Ownership, on one machine or many hosts over one PostgreSQL: a run's
 * row names its owner as app.h's owner ("host:pid:start"), and the
 * owner holds it by a lease of RUNS_LEASE_MS, renewed every
 * RUNS_RENEW_MS by a thread of the owner's with a connection of its own
 * (so a step as long as a whole family's recount never outlasts it), and
 * at every step.  Another process takes the run only once the lease
 * lapsed, by a compare-and-set UPDATE (runs_claim()), and resumes it from
 * its checkpoint: a run left by a host that died is resumed within
 * seconds by the worker that then runs the jobs, on any host.  Whether
 * the owner's pid is alive is never asked: a pid names a process on one
 * machine only.  An owner that stalled past its lease (stopped, cut off)
 * and wakes finds the run taken at its next renewal or step, writes
 * nothing more to it and stops; what it did meanwhile is what two
 * settlers may always do (count/settle.h).  Expiry is by wall clock, as
 * the workers' lease: hosts keep their clocks in step. */
#ifndef TALLY_RUNS_H
#define TALLY_RUNS_H

#include <stddef.h>

#include "count/reconcile.h"
#include "store/app.h"
#include "store/lease.h"

#define RUNS_LEASE_MS	LEASE_MS	/* a run's lease, as the workers' */
#define RUNS_RENEW_MS	1000		/* renewed this often */

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
	char			owner_name[APP_OWNER_MAX]; /* app.h's
					   owner, "" none */
	long long		lease_until;	/* wall ms: its lease ends */
	struct rec_report	report;
};

/* The host part of r's owner_name ("" none), into out. */
void		runs_owner_host(const struct run *, char *out, size_t sz);

/* A new queued run: its id; 0 when a run is already active (its id goes
 * in *active); -1 on error. */
long long	runs_start(struct db *, int dry, const char *reason,
		    long long *active);
/* The same, claimed by a->owner in the transaction that creates it (as
 * runs_claim()): for a process that runs it itself (tallyctl), so the
 * worker, which looks for queued runs each second, cannot take it
 * first; another takes it only once a->owner's lease lapsed. */
long long	runs_start_mine(struct app *, int dry, const char *reason,
		    long long *active);
/* The active (queued or running) run's id, 0 when none, -1 on error. */
long long	runs_active(struct db *);
int		runs_get(struct db *, long long id, struct run *);
/* The newest finished run: 1, 0 when none, -1. */
int		runs_last_done(struct db *, struct run *);
/* The newest runs, newest first; how many, or -1. */
int		runs_list(struct db *, struct run *out, int max);
/* Claims run id for owner (app.h's owner; pid for the pages) at now_ms
 * (wall): a queued run, one of owner's own, or one whose lease lapsed.
 * 1 claimed, its lease held to now_ms + RUNS_LEASE_MS; 0 not (another's
 * lease holds, or the run is over); -1 on a database error. */
int		runs_claim(struct db *, long long id, const char *owner,
		    long long pid, long long now_ms);
/* Renews owner's lease of run id to now_ms + RUNS_LEASE_MS: 1, 0 when
 * the run is owner's no more (taken after the lease lapsed, or over),
 * -1 on a database error. */
int		runs_renew(struct db *, long long id, const char *owner,
		    long long now_ms);
/* Executes run id from its checkpoint to the end (or failure), as
 * a->owner, keeping progress and report up to date.  line, if not NULL,
 * gets each percentage.  A run whose owner's lease holds is left alone;
 * one whose lease lapsed is taken over (see above).  1 done, 0 not ours
 * (or taken from us meanwhile), -1 failed (recorded in the run).
 * With keep, a run that fails (Redis or SQLite failed in a step: a
 * master failing over, a Redis restarting) is not ended: it stays
 * active and the caller's until its lease lapses, and RUNS_AGAIN says
 * so; executed again, it resumes at the step that failed. */
#define RUNS_AGAIN	2
int		runs_execute(struct app *, long long id, int keep,
		    void (*line)(int pct, const char *step));

#endif
