/* worker.c -- tally-worker: the background jobs of the site.
 *
 * One process, supervised by tally-run (or systemd), and its jobs
 * process.  Each job runs on its own period; a job that fails logs and
 * is tried again next period.  SIGTERM/SIGINT finish the current job and
 * exit.
 *
 * The jobs that take long -- a reconciliation run, the settle of the
 * backlog, timelines rebuilt after an outage, the drift check -- run in
 * a process of their own ("tally-worker jobs", forked and exec'd, its
 * own SQLite and Redis connections), so that the flush, the outbox
 * drain, the fan-out, the checkpoints and the lease never wait for them:
 * a run over a million likes once stopped every flush for its length.
 * The worker drives it: a tick a round (a byte on a pipe) while it holds
 * the lease, so a worker that stopped or lost the lease stops its jobs
 * too; it restarts a jobs process that died, and the jobs process dies
 * with it (PR_SET_PDEATHSIG).  A run's owner is the worker, by its name
 * in the workers' lease (app.owner: host, pid, start) and its pid
 * (app.pid), whichever of the two executes it: a jobs process started
 * again resumes its worker's run at once, and any other process once
 * the run's lease lapsed (count/runs.h).
 *
 * One file: why this file of over 500 lines is one concept --
 * it is one program -- its jobs, the loop that runs the short
 * ones and the process that runs the long ones share the job functions
 * and their schedule, and a reader follows a job from its period to its
 * code without leaving the file.
 *
 * Jobs: the drift check (every TALLY_DRIFT_EVERY seconds, default 60: a
 * few random counters of every family recounted); reconciliation runs
 * (runs.h: queued by the admin page, tallyctl, the schedule
 * TALLY_RECONCILE_EVERY seconds (default 3600, 0 = never), or finding
 * Redis empty -- its generation key {tally}:gen gone; a run a killed
 * worker left resumes from its checkpoint); the counter flush (every
 * second: pending deltas from Redis into SQLite's counters, flush.h;
 * batches a dead flusher left are finished at start and every 10 s;
 * before it, the outbox rows of actions whose process died before Redis
 * took their deltas, outbox.h); the deferred fan-out queue (fanout.h:
 * continuously, jobs of 1000 followers, in slices of 200 ms with the
 * other jobs between; at start, jobs a killed worker left in processing
 * go back to the queue; every second, the timelines of follows whose
 * handler died after the commit, follow.h); expire old sessions (every 10 s, in batches of
 * 1000); checkpoint the WAL (copied into the database every 25 ms,
 * started over past 16 MB every 250 ms, as the handlers never do;
 * truncated with PRAGMA optimize every 5 min).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/valid.h"
#include "count/backlog.h"
#include "count/fbatch.h"
#include "count/flush.h"
#include "count/outbox.h"
#include "count/reconcile.h"
#include "count/recover.h"
#include "count/runs.h"
#include "count/settle.h"
#include "social/bcache.h"
#include "social/fanout.h"
#include "social/follow.h"
#include "social/pcache.h"
#include "social/session.h"
#include "social/timeline.h"
#include "social/tlstale.h"
#include "store/app.h"
#include "store/key.h"
#include "store/lease.h"

/* How often the WAL is checkpointed and started over (job_wal): often
 * enough that each sync of it under the writers' lock stays short. */
#define WAL_EVERY_MS	250
/* ... and started over once it holds this many frames (16 MB of 4 KB
 * pages): each restart stalls the writers for two syncs, so not more
 * often than needed. */
#define WAL_RESTART_FRAMES	4096
/* How often, between checkpoints, what was committed is copied into
 * the database (nap_copying(): a passive checkpoint, which holds the
 * writers' lock while it copies: store/ckpt.c).  A reader whose transaction follows another process's commit
 * reads each page the WAL holds past the last copy with a pread() (a
 * frame the checkpoint copied SQLite reads from the database, which
 * store/dbmap.c maps): with likes among the pages, 3.2 of a reader's 13
 * system calls a request when the copy ran every 250 ms, 1.3 every 25
 * (docs/BENCHMARKS.md). */
#define WAL_COPY_MS	25
/* The worker's nap between two ticks. */
#define NAP_MS		100

static volatile sig_atomic_t stopping;

static void
on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

/* Expired sessions, SESSIONS_ROUND at most a round (a thousand a
 * transaction): 1 when more are left for the next round, else 0.  All of
 * them at once held the loop (no flush, no fan-out, no lease renewal)
 * for as long as a backlog of millions took. */
#define SESSIONS_ROUND	10000
static int
job_sessions(struct app *a)
{
	int n, total = 0;

	while (total < SESSIONS_ROUND && !stopping &&
	    (n = session_expire(a->db, 1000)) > 0)
		total += n;
	if (total > 0)
		log_info("expired %d sessions", total);
	/* flush batches' rows past their use, a thousand at most */
	if ((n = fbatch_prune(a, clock_wall_ms(), 1000)) > 0)
		log_info("forgot %d applied flush batches", n);
	return total >= SESSIONS_ROUND;
}

/* The repairs a run must follow (Redis emptied, the cluster changed
 * hands): a run already active when it happened may have passed the
 * counters it touched, so one more starts once that one is over.  The
 * wish is kept in SQLite (settings deferred_run_<reason>) before what
 * found it is spent (the generation key set, the new signature stored),
 * and taken back only once its run exists: a worker that restarts, or a
 * run that cannot start now (SQLite busy or down a moment), keeps it.
 * (The worker once ran runs itself, one loop after the wish; its jobs
 * process runs them beside it now.) */
static const char *const repair_reasons[] = { "redis-empty",
    "redis-topology" };

static void
deferred_name(const char *reason, char *out, size_t sz)
{
	snprintf(out, sz, "deferred_run_%s", reason);
}

/* The wish for a repair run, kept: 0, or -1 (nothing kept: the caller
 * leaves what found it for its next look). */
static int
repair_wish(struct app *a, const char *reason)
{
	char name[64];

	deferred_name(reason, name, sizeof(name));
	if (dbq_setting_put(a->db, name, 1) == -1) {
		log_err("a reconciliation (%s) is due but cannot be noted "
		    "yet (SQL failed): trying again", reason);
		return -1;
	}
	return 0;
}

/* The run of a kept wish, if it can start: then the wish goes. */
static void
repair_start(struct app *a, const char *reason, int say)
{
	char name[64];
	long long id, active = 0;

	deferred_name(reason, name, sizeof(name));
	if ((id = runs_start(a->db, 0, reason, &active)) > 0) {
		dbq_setting_put(a->db, name, 0);	/* failed: one run more */
		log_info("reconciliation run %lld (%s) queued", id, reason);
	} else if (say && id == 0) {
		log_info("a reconciliation (%s) will follow run %lld", reason,
		    active);
	}
}

static void
job_deferred_runs(struct app *a)
{
	char name[64];
	size_t i;

	for (i = 0; i < sizeof(repair_reasons) / sizeof(repair_reasons[0]);
	    i++) {
		deferred_name(repair_reasons[i], name, sizeof(name));
		if (dbq_setting(a->db, name, 0) != 0)
			repair_start(a, repair_reasons[i], 0);
	}
}

/* What was lost may be in a flush batch on its way to SQL: Redis's epoch
 * moves on first, so that batch is not applied after the run counted it
 * (count/fbatch.h).  0, or -1 (the caller tries again next time). */
static int
repair_fence(struct app *a, const char *reason)
{
	if (fbatch_epoch_move(a->db) == 0)
		return 0;
	log_err("a reconciliation (%s) is due but Redis's epoch cannot be "
	    "moved yet (SQL failed): trying again", reason);
	return -1;
}

/* A Redis that lost its data (restarted without AOF, a new server,
 * FLUSHALL) has no generation key: the flush batches on their way
 * fenced, the repair noted, then the key set, and the run started (or
 * left to job_deferred_runs()). */
static void
job_redis_gen(struct app *a)
{
	rds_reply *rep = rds_cmdv(a->rds, "EXISTS", KEY_GEN, NULL);
	int missing;

	if (rep == NULL)
		return;
	missing = rds_type(rep) == RDS_INTEGER && rds_int(rep) == 0;
	rds_free(rep);
	if (!missing || repair_fence(a, "redis-empty") == -1 ||
	    repair_wish(a, "redis-empty") == -1)
		return;
	if ((rep = rds_cmdv(a->rds, "SET", KEY_GEN, "1", "NX", NULL)) ==
	    NULL)
		return;		/* the wish stands: a run follows anyway */
	if (rds_type(rep) == RDS_STATUS) {
		log_warn("Redis has no generation key: empty or new; "
		    "starting a reconciliation");
		/* Outbox rows applied before the loss lost their marks: they
		 * are applied again now, before the run recounts, which then
		 * settles whatever that doubled. */
		outbox_drain(a, 0);
	}
	rds_free(rep);
	repair_start(a, "redis-empty", 1);
}

/* This machine's boot (its kernel's boot id), hashed; 0 unknown. */
static long long
boot_hash(void)
{
	char id[64] = "";
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	size_t n;

	if (f == NULL)
		return 0;
	if (fgets(id, sizeof(id), f) == NULL)
		id[0] = '\0';
	fclose(f);
	if ((n = strcspn(id, "\n")) == 0)
		return 0;
	return (long long)(rds_key_hash(id, n) & 0x7fffffffffffffffULL);
}

/* Who serves the data -- on a Redis Cluster which slots (and each
 * master's run id), on one server its run id: when that changes -- a
 * replica promoted after its master died, a master restarted -- the
 * writes acknowledged but not passed on may be gone: a flush's take and
 * ack lost bring its deltas back to be flushed again, doubled in SQL.
 * One server restarted from its append-only file lost nothing it
 * acknowledged when only the process died (the file's writes were in the
 * kernel's hands: faults.test.mjs kills it under load, and no run
 * follows); when the machine went down (a new boot since the run id was
 * seen), the last second may be gone.  That boot is this machine's, so
 * it tells only of a server on this machine (a unix socket): one reached
 * over TCP (handler hosts, another machine's Redis) may have lost its
 * last second while this machine stayed up, and its change is repaired
 * as a cluster's always is.  Repair as after an outage:
 * timelines rebuilt, the outbox applied again, a reconciliation run.  The signature's hash is
 * kept in SQLite, so a change while the worker was down is seen too;
 * it is stored only once the repair's wish is. */
static void
job_topology(struct app *a)
{
	char sig[4096];
	unsigned long long h;
	long long was, boot = boot_hash(), was_boot;
	int local = rds_is_local(a->rds);

	/* a failed read is no first look: it would store the new
	 * signature unrepaired */
	if (rds_signature(a->rds, sig, sizeof(sig), &h) == -1 ||
	    dbq_setting_read(a->db, "redis_topology", 0, &was) == -1 ||
	    dbq_setting_read(a->db, "redis_boot", 0, &was_boot) == -1)
		return;
	if ((unsigned long long)was == h)
		return;
	if (was != 0 && (rds_is_cluster(a->rds) || !local ||
	    (was_boot != 0 && was_boot != boot))) {
		if (repair_fence(a, "redis-topology") == -1 ||
		    repair_wish(a, "redis-topology") == -1)
			return;
		log_warn("Redis changed hands or restarted (%s): repairing "
		    "what it may have lost", sig);
		tlstale_mark(a);
		outbox_drain(a, 0);
		repair_start(a, "redis-topology", 1);
	}
	if (local)	/* the server's machine's boot: this one's */
		dbq_setting_put(a->db, "redis_boot", boot);
	dbq_setting_put(a->db, "redis_topology", (long long)h);
}

/* A run that stops on a failure (Redis or SQLite failed in a step: a
 * master failing over, a Redis restarting empty, which are the moments
 * the repair runs follow) is executed again every RUN_AGAIN_S seconds
 * from the step that failed, for RUN_RETRY_S seconds from its first
 * failure; only a failure after that ends it failed.  A repair that an
 * outage of seconds ended would leave the counters it was started for
 * unrepaired until an operator started another. */
#define RUN_AGAIN_S	2
#define RUN_RETRY_S	120

struct run_retry {
	long long	id;		/* the run that stopped, 0 none */
	time_t		since, next;	/* its first failure; its next try */
};

static void
job_reconcile(struct app *a, time_t now, time_t *last, long every,
    struct run_retry *rt)
{
	long long id, active;
	int rc;

	if (every > 0 && now - *last >= every) {
		runs_start(a->db, 0, "schedule", &active);
		*last = now;
	}
	if ((id = runs_active(a->db)) <= 0)
		return;
	if (id == rt->id && now < rt->next)
		return;
	rc = runs_execute(a, id, id != rt->id || now - rt->since <
	    RUN_RETRY_S, NULL);
	if (rc != RUNS_AGAIN) {
		rt->id = 0;
		return;
	}
	if (id != rt->id) {
		rt->id = id;
		rt->since = now;
	}
	rt->next = time(NULL) + RUN_AGAIN_S;
}

/* The continuous drift check: a few random counters of every family,
 * recounted and compared (never repaired here); cumulative totals in
 * Redis {metrics}:drift for the dashboard and /metrics. */
static void
job_drift(struct app *a)
{
	char f1[48], f2[48], n1[24], n2[24];
	long long checked, wrong;
	rds_reply *rep;
	int i, rc;

	for (i = 0; i < FAM__MAX; i++) {
		checked = wrong = 0;
		if (families[i].recount_one == NO_RECOUNT ||
		    (rc = reconcile_sample(a, (enum family)i, 5, &checked,
		    &wrong)) == -1)
			continue;
		if (rc == SETTLE_WAITED)	/* a writer's transaction open: */
			break;			/* the next check, not a wait a family */
		snprintf(f1, sizeof(f1), "%s:checked", families[i].name);
		snprintf(f2, sizeof(f2), "%s:wrong", families[i].name);
		snprintf(n1, sizeof(n1), "%lld", checked);
		snprintf(n2, sizeof(n2), "%lld", wrong);
		if ((rep = rds_cmdv(a->rds, "HINCRBY", KEY_METRICS_DRIFT, f1, n1,
		    NULL)) != NULL)
			rds_free(rep);
		if ((rep = rds_cmdv(a->rds, "HINCRBY", KEY_METRICS_DRIFT, f2, n2,
		    NULL)) != NULL)
			rds_free(rep);
		if (wrong > 0)
			log_warn("drift check: %lld of %lld %s counters wrong",
			    wrong, checked, families[i].name);
	}
}

/* After Redis was down: settle the counters whose deltas waited in the
 * SQLite backlog, let timelines that missed changes be rebuilt, and turn
 * the badges' cache over if it missed a bump. */
static void
job_after_outage(struct app *a)
{
	if (!rds_up(a->rds))
		return;
	tlstale_refresh(a);
	pcache_stale_refresh(a);	/* profile changes Redis missed */
	bcache_replay(a);	/* badge bumps Redis missed */
	while (backlog_settle(a) > 0 && !stopping)
		;
	/* Redis refused writes lately and deltas still wait: its live
	 * values stay behind until they are settled, so the host's readers
	 * keep computing them (rds_refusing()) */
	if (rds_refusing(a->rds) && backlog_waits(a) == 1)
		rds_refusing_renew(a->rds);
}

/* The handlers never checkpoint (db_autocheckpoint_off(), serve.c).  Every
 * WAL_EVERY_MS the WAL is copied into the database and started over
 * (db_checkpoint: the copy in passes the writers go on between, then the
 * last frames and the restart); every five minutes it is also
 * truncated and the planner refreshed; a WAL nobody wrote to since the
 * last pass is truncated then and there (its space back once a load is
 * over).  A passive checkpoint alone never
 * caught up under a steady write load: the WAL grew by about 100 MB a
 * second of likes, and every page lookup in it slowed down.  Once a
 * second, the sync under the lock held writers up to ~100 ms; every
 * 250 ms, past 16 MB, it is short (like p99 ~10 ms instead of 28 ms on
 * a small stack). */
static void
job_wal(struct app *a, int full)
{
	static int kept;

	if (db_checkpoint(a->db, WAL_RESTART_FRAMES, full) != 1)
		kept = 0;
	else if (++kept % (60000 / WAL_EVERY_MS) == 0)	/* each minute */
		log_info("checkpoint: readers have kept the WAL from "
		    "starting over for %d s", kept * WAL_EVERY_MS / 1000);
	if (full)
		db_optimize(a->db);
}

/* job_wal() once WAL_EVERY_MS passed since *last_ms, a full one (the
 * WAL truncated, the planner refreshed) once five minutes passed since
 * *last_full. */
static void
job_wal_due(struct app *a, long long *last_ms, time_t *last_full)
{
	long long now_ms = clock_mono_ms();
	time_t now = time(NULL);
	int full = now - *last_full >= 300;

	if (now_ms - *last_ms < WAL_EVERY_MS)
		return;
	job_wal(a, full);
	if (full)
		*last_full = now;
	*last_ms = now_ms;
}

/* The worker's nap between its ticks, in WAL_COPY_MS slices, each
 * followed by a copy of the WAL (WAL_COPY_MS); the rest of a tick's
 * work (its Redis round trips, the jobs process's tick) stays at one a
 * nap.  Each slice ends at its deadline from the nap's start, so a copy
 * that waited for its syncs does not make the tick later; a copy that
 * failed (logged) leaves the next to the next slice. */
static void
nap_copying(struct app *a, long long nap_ms)
{
	long long t0 = clock_mono_ms(), due, left;

	for (due = WAL_COPY_MS; due <= nap_ms && !stopping;
	    due += WAL_COPY_MS) {
		if ((left = t0 + due - clock_mono_ms()) > 0)
			nanosleep(&(struct timespec){ left / 1000,
			    (left % 1000) * 1000000L }, NULL);
		(void)db_checkpoint_copy(a->db);
	}
}

/* The long jobs, one round per tick of the worker (see the header). */
struct jobs {
	time_t		last_rec, last_drift, last_outage;
	long long	every, drift_every;
	struct run_retry retry;
};

static void
jobs_config(struct jobs *j)
{
	const char *ev = getenv("TALLY_RECONCILE_EVERY");
	const char *de = getenv("TALLY_DRIFT_EVERY");

	memset(j, 0, sizeof(*j));
	j->every = 3600;
	j->drift_every = 60;
	if (ev != NULL && valid_int(ev, 0, 86400 * 365, &j->every) == -1)
		j->every = 3600;
	if (de != NULL && valid_int(de, 1, 86400, &j->drift_every) == -1)
		j->drift_every = 60;
	j->last_rec = j->last_drift = time(NULL);
}

static void
jobs_round(struct app *a, struct jobs *j)
{
	time_t now = time(NULL);

	/* every two seconds: what a run could not settle waits there */
	if (now - j->last_outage >= 2) {
		job_after_outage(a);
		j->last_outage = now;
	}
	job_reconcile(a, now, &j->last_rec, (long)j->every, &j->retry);
	if (now - j->last_drift >= j->drift_every) {
		job_drift(a);
		j->last_drift = now;
	}
	app_settle(a);
}

/* "tally-worker jobs OWNER": a round per byte read on standard input;
 * ends when the worker closes it (or dies: PR_SET_PDEATHSIG).  OWNER is
 * the worker's name (app.owner), whose runs these are. */
static int
jobs_main(const char *owner)
{
	struct app a;
	struct jobs j;
	struct pollfd pf = { STDIN_FILENO, POLLIN, 0 };
	char buf[64];
	ssize_t n;

	signal(SIGPIPE, SIG_IGN);
	if (app_open(&a, "worker") == -1)
		return 1;
	a.pid = (long long)getppid();	/* the worker's: runs.h's owner */
	if (owner != NULL)
		snprintf(a.owner, sizeof(a.owner), "%s", owner);
	db_autocheckpoint_off(a.db);
	a.metrics = metrics_open(&a.cfg);
	db_lock_metrics(a.db, a.metrics, METRICS_LOCK_WORKER);
	jobs_config(&j);
	for (;;) {
		if (poll(&pf, 1, 1000) <= 0)
			continue;	/* no tick: the worker is idle or stopped */
		if ((n = read(STDIN_FILENO, buf, sizeof(buf))) == 0)
			break;		/* the worker is gone */
		if (n < 0)
			continue;
		jobs_round(&a, &j);
	}
	app_close(&a);
	return 0;
}

/* Starts the jobs process of the worker named owner; its pid (the tick
 * pipe's end in *tick), or -1. */
static pid_t
jobs_start(const char *owner, int *tick)
{
	pid_t parent = getpid(), pid;
	int p[2];

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		if (dup2(p[0], STDIN_FILENO) == -1)
			_exit(127);
		execl("/proc/self/exe", "tally-worker", "jobs", owner,
		    (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	*tick = p[1];
	return pid;
}

/* Ends the jobs process (it may be in the middle of a run: a kill is as
 * safe as kill -9, which every job survives). */
static void
jobs_stop(pid_t *pid, int *tick)
{
	if (*tick >= 0)
		close(*tick);
	*tick = -1;
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		while (waitpid(*pid, NULL, 0) == -1 && errno == EINTR)
			;
	}
	*pid = -1;
}

int
main(int argc, char **argv)
{
	struct app a;
	time_t now, last_sessions = 0, last_wal = time(NULL), last_recover = 0;
	long long last_flush_ms = 0, last_ckpt_ms = 0, now_ms;
	long long jobs_at_ms = 0;
	struct timespec standby = { 0, 200 * 1000 * 1000 };
	long long lease_next_ms = 0, held_at_ms = 0;
	const char *owner;
	int recovered, busy, held = -1, was = -1, tick = -1;
	pid_t jobs = -1;
	time_t last_gen = 0, last_topo = 0;

	if (argc > 1 && strcmp(argv[1], "jobs") == 0)
		return jobs_main(argc > 2 ? argv[2] : NULL);
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	signal(SIGPIPE, SIG_IGN);
	if (app_open(&a, "worker") == -1)
		return 1;
	/* Checkpoints come from job_wal() and nap_copying() only, outside
	 * any transaction: an automatic one would run inside a flush's
	 * commit, with the writers' lock held (db.h), and every like would
	 * wait for its fsync. */
	db_autocheckpoint_off(a.db);
	/* its holds of the writers' lock (flushes, the drain, runs) and
	 * the checkpoints' in /metrics */
	a.metrics = metrics_open(&a.cfg);
	db_lock_metrics(a.db, a.metrics, METRICS_LOCK_WORKER);
	owner = a.owner;	/* host, pid, start (app.h) */
	log_info("worker started (%s)", owner);
	recovered = 0;
	while (!stopping) {
		/* One worker of the site runs the jobs (store/lease.h). */
		now_ms = clock_mono_ms();
		if (now_ms >= lease_next_ms) {
			held = lease_hold(a.db, owner, clock_wall_ms());
			if (held == 1 && was != 1) {
				log_info("worker: holds the lease, runs the jobs");
				recovered = 0;	/* what a dead one left */
			} else if (held == 1 && now_ms - held_at_ms > LEASE_MS) {
				/* stalled past the lease: another worker may
				 * have held it meanwhile and died with a job
				 * in processing, which nothing else takes */
				log_info("worker: held the lease again after "
				    "%lld ms; recovering what another left",
				    now_ms - held_at_ms);
				recovered = 0;
			} else if (held == 0 && was != 0)
				log_info("worker: another worker runs the jobs; "
				    "standing by");
			was = held;
			if (held == 1)
				held_at_ms = now_ms;
			lease_next_ms = now_ms + 1000;
		}
		/* the jobs process: reaped when it died, started (at most
		 * once a second) while the lease is ours, else stopped */
		if (jobs > 0 && waitpid(jobs, NULL, WNOHANG) == jobs) {
			log_warn("worker: the jobs process ended; starting "
			    "another");
			close(tick);
			tick = -1;
			jobs = -1;
		}
		if (held != 1) {
			if (jobs > 0)
				jobs_stop(&jobs, &tick);
			nanosleep(&standby, NULL);
			continue;
		}
		if (jobs < 0 && now_ms - jobs_at_ms >= 1000) {
			jobs_at_ms = now_ms;
			if ((jobs = jobs_start(owner, &tick)) == -1)
				log_err("worker: cannot start its jobs process");
		}
		if (tick >= 0 && write(tick, "t", 1) == -1 && errno != EAGAIN)
			log_warn("worker: its jobs process does not listen");
		if (!recovered)
			recovered = fanout_recover(&a) >= 0;
		/* A slice of the fan-out a round, then whatever else is due:
		 * a celebrity's fan-out (minutes of jobs) holds the flush,
		 * the outbox's drain and the checkpoints off no longer than a
		 * slice (FANOUT_SLICE_MS); only the nap waits for it. */
		busy = 0;
		if (recovered) {
			int ran;

			fanout_reclaim(&a, FANOUT_INLINE_GRACE_MS);
			ran = fanout_work(&a, 20, FANOUT_SLICE_MS);
			busy = ran > 0;	/* more may be waiting */
			if (ran < 0)	/* a job may sit in processing */
				recovered = 0;
		}
		app_settle(&a);
		now = time(NULL);
		now_ms = clock_mono_ms();
		if (now - last_recover >= 10) {
			recover_batches(&a);
			last_recover = now;
		}
		if (now_ms - last_flush_ms >= 1000) {
			follow_reclaim(&a, FOLLOW_NOTE_GRACE_MS);
			outbox_drain(&a, OUTBOX_AGE_MS);
			flush_all(&a, 50, 0, NULL);
			last_flush_ms = now_ms;
		}
		if (now - last_gen >= 5) {
			job_redis_gen(&a);
			last_gen = now;
		}
		if (now != last_topo) {
			job_topology(&a);
			job_deferred_runs(&a);
			last_topo = now;
		}
		/* more left: again next loop, after the flush's second */
		if (now - last_sessions >= 10 && !job_sessions(&a))
			last_sessions = now;
		job_wal_due(&a, &last_ckpt_ms, &last_wal);
		if (!busy)
			nap_copying(&a, NAP_MS);
	}
	jobs_stop(&jobs, &tick);
	if (held == 1)
		lease_drop(a.db, owner);
	log_info("worker stopping");
	app_close(&a);
	return 0;
}
