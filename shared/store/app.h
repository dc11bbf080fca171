/* app.h -- what one process holds for its whole life: configuration,
 * its SQLite connection and its Redis connection.  Opened after fork(),
 * passed explicitly; no handler keeps file-scope mutable state.
 */
#ifndef TALLY_APP_H
#define TALLY_APP_H

#include "base/cfg.h"
#include "store/db.h"
#include "store/dbq.h"
#include "store/rds.h"

struct app;
struct metrics;

#define APP_AFTER_MAX	32	/* more than a group commit's requests
				   (web/batch.h) queue */
#define APP_COMMIT_MAX	64

/* Work a request leaves for after its response (app_after()). */
struct app_after {
	void		(*fn)(struct app *, char *arg);
	char		 *arg;		/* freed after fn */
};

/* A process's name as owner: "host:pid:start" (ms). */
#define APP_OWNER_MAX	96

struct app {
	const char	*name;
	long long	 pid;		/* whose work this is (a run's owner,
					   runs.h): getpid(), or the worker's
					   for its jobs process */
	char		 owner[APP_OWNER_MAX];	/* the same as the database
					   names it across hosts (the
					   workers' lease, a run's owner):
					   its host, pid and start, so that a
					   pid used again, or the same pid on
					   another host, is someone else */
	struct cfg	 cfg;
	struct db	*db;		/* opaque outside store/ (db_int.h) */
	struct rds	*rds;		/* opaque outside store/ (rds_int.h) */
	struct rds	*replica;	/* reads only, when configured */
	int		 fault_delay_ms; /* TALLY_FAULT_DELAY_MS: tests only */
	int		 fault_take_ms;	/* TALLY_FAULT_TAKE_MS: tests only */
	struct metrics	*metrics;	/* shared request counters, or NULL */
	int		 metrics_idx;	/* this handler's slot */
	int		 in_request;	/* app_after() defers */
	struct app_after after[APP_AFTER_MAX];
	int		 nafter;
	/* what waits for a group commit (app_after_commit()) */
	struct {
		void	(*fn)(struct app *, void **, int);
		void	 *arg;
	}		 oncommit[APP_COMMIT_MAX];
	int		 noncommit;
};

/* Loads the configuration, initialises libsodium, opens SQLite (with
 * migrations) and prepares the Redis connection (connected lazily).
 * Returns 0 or -1 (logged). */
int	app_open(struct app *, const char *name);
void	app_close(struct app *);

/* The Redis connection to read from: the master while it answers, else
 * the replica when one is configured and answers, else the (down)
 * master, whose calls then fail fast.  Never write through it. */
struct rds *app_reader(struct app *);

/* Runs fn(a, arg) once the response of the current request is sent
 * (FCGX_Finish_r: the client has its answer), before the process takes
 * the next request; outside a request (tools, the worker), or with
 * APP_AFTER_MAX already queued, at once -- but never inside a group
 * commit's open transaction (db_group_begin()), which may yet roll back:
 * there it is not run at all, so the work must be one the worker does
 * anyway (a fan-out's note: social/fanout.h).  arg (heap) is freed
 * after. */
void	app_after(struct app *, void (*fn)(struct app *, char *), char *arg);
/* Runs fn(a, &arg, 1) once the write transaction that holds what the
 * caller just committed is durable: at once, except inside a group
 * commit (db_group_begin()), where it waits for app_commit_done() and
 * is dropped if the group rolls back.  There, calls with the same fn in
 * a row are run as one: fn(a, args, n), in the order they came (so that
 * fn can send them in one round trip).  Each arg (heap) is freed after.
 * With APP_COMMIT_MAX waiting, one more is dropped, logged: the caller's
 * work must survive that (the outbox's drain does). */
void	app_after_commit(struct app *, void (*fn)(struct app *, void **,
	    int), void *arg);
/* The group committed (ok) or rolled back (!ok): runs or drops what
 * waited for it. */
void	app_commit_done(struct app *, int ok);
/* Runs what app_after() queued, then app_settle(). */
void	app_run_after(struct app *);
/* Reads and drops the Redis replies a caller left queued (rds_settle()):
 * the end of every request and of every worker round. */
void	app_settle(struct app *);

#endif
