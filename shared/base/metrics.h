/* metrics.h -- request metrics shared by every process of the site.
 *
 * A file-backed mmap ($RUN_DIR/metrics.bin) of atomic counters: per
 * handler, requests by status class, a latency histogram, and the SQLite
 * statements (also by their number in the table), Redis commands and
 * Redis round trips the requests made; and per holder (each handler, the worker, the checkpoint) how long SQLite's
 * writers' lock was waited for and held, which is what sets a like's tail
 * (the one writer queues every like behind any long hold).  Each
 * pre-forked child adds to it with relaxed atomics (no lock, no syscall
 * per request); /metrics reads it.  The file is recreated when its size
 * does not match this build's layout.
 */
#ifndef TALLY_METRICS_H
#define TALLY_METRICS_H

#include <stdint.h>

#include "base/cfg.h"

#define METRICS_HANDLERS	8
#define METRICS_STMTS		256	/* SQL statement numbers counted (at
					   least store/sql.h's STMT__MAX) */
#define METRICS_BUCKETS		9	/* le 1 5 10 25 50 100 250 1000 +Inf ms */

/* Holders of the writers' lock: the handlers' slots, then these two. */
#define METRICS_LOCK_WORKER	METRICS_HANDLERS
#define METRICS_LOCK_CKPT	(METRICS_HANDLERS + 1)
#define METRICS_LOCKERS		(METRICS_HANDLERS + 2)
#define METRICS_LOCK_BUCKETS	10	/* le 0.1 0.25 0.5 1 2.5 5 10 25 100
					   +Inf ms */

extern const char *const metrics_handlers[METRICS_HANDLERS];
extern const double metrics_bounds_ms[METRICS_BUCKETS - 1];
extern const double metrics_lock_bounds_ms[METRICS_LOCK_BUCKETS - 1];

/* A holder's name (a handler's, "worker", "checkpoint"; "" unused). */
const char	*metrics_locker(int);

struct metrics_slot {
	uint64_t	by_class[6];	/* 0: other, 1xx..5xx */
	uint64_t	bucket[METRICS_BUCKETS];
	uint64_t	sum_us;
	uint64_t	sqlite_stmts;	/* statements SQLite ran */
	uint64_t	sql_trips;	/* PostgreSQL round trips */
	uint64_t	sql_commits;	/* write transactions committed */
	uint64_t	redis_cmds;	/* commands sent to Redis */
	uint64_t	redis_trips;	/* Redis round trips */
	uint64_t	kept_whole;	/* pages sent as kept (web/keep.h) */
	uint64_t	counts_kept;	/* counts read as kept (count/ckeep.h) */
	uint64_t	pages_ahead;	/* first round trips read with others'
					   (web/batch.h) */
	uint64_t	sql_ahead;	/* PostgreSQL results read with others'
					   (store/pg.h: pg_ahead_take()) */
};

/* What one request cost, beside its time. */
struct metrics_cost {
	unsigned long long	stmts, sqltrips, commits, cmds, trips, kept,
				ckept, ahead, sqlahead;
};

/* The writers' lock: how long each taking waited, and held it. */
struct metrics_lock {
	uint64_t	wait[METRICS_LOCK_BUCKETS];
	uint64_t	hold[METRICS_LOCK_BUCKETS];
	uint64_t	wait_us;
	uint64_t	hold_us;
};

/* The live badges (social/live.h): events published to nginx, those
 * that failed, and streams opened, from tally's side. */
enum metrics_live {
	METRICS_LIVE_PUBLISHED,
	METRICS_LIVE_FAILED,
	METRICS_LIVE_OPENED,
	METRICS_LIVE__MAX
};

struct metrics {
	struct metrics_slot	slot[METRICS_HANDLERS];
	struct metrics_lock	lock[METRICS_LOCKERS];
	uint64_t		live[METRICS_LIVE__MAX];
	/* Per handler, the runs of each statement of the table by its
	 * number (store/sql.h): which statements a request's count is. */
	uint64_t		stmt_runs[METRICS_HANDLERS][METRICS_STMTS];
};

/* Maps the shared file; NULL (metrics off) on failure, logged. */
struct metrics	*metrics_open(const struct cfg *);
/* Index of a handler name, or -1. */
int		 metrics_handler(const char *name);
void		 metrics_observe(struct metrics *, int handler, int status,
		    long long us, const struct metrics_cost *);
/* One more of what (enum metrics_live); m may be NULL. */
void		 metrics_live(struct metrics *, int what);
/* One taking of the writers' lock by holder `who`. */
void		 metrics_lock(struct metrics *, int who, long long wait_us,
		    long long hold_us);

#endif
