/* runs.c -- reconciliation runs in SQLite; see runs.h. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "count/flush.h"
#include "count/lb.h"
#include "count/recover.h"
#include "count/runs.h"
#include "store/dbq.h"

/* A new run, queued for anyone (owner NULL) or claimed at once by
 * owner: in one transaction, so no other process can claim it between
 * its creation and its owner's claim. */
static long long
start(struct db *d, int dry, const char *reason, const char *owner,
    long long pid, long long *active)
{
	struct dbq *s;
	long long id = 0, now = clock_wall_ms();
	int rc;

	*active = 0;
	if (db_begin(d) == -1 || (s = dbq_stmt(d, STMT_RUN_CREATE)) == NULL) {
		db_rollback(d);
		return -1;
	}
	dbq_bind_int(s, 1, dry ? 1 : 0);
	dbq_bind_text(s, 2, reason, -1);
	dbq_bind_i64(s, 3, now);
	rc = dbq_step(s);
	if (rc == DBQ_ROW)
		id = dbq_i64(s, 0);
	dbq_done(s);
	if (rc == DBQ_ERR) {	/* not "one is active": nothing was asked */
		db_rollback(d);
		return -1;
	}
	if (id == 0)
		*active = runs_active(d);
	else if (owner != NULL && runs_claim(d, id, owner, pid, now) != 1) {
		db_rollback(d);
		return -1;
	}
	if (db_commit(d) == -1)
		return -1;
	return id;
}

long long
runs_start(struct db *d, int dry, const char *reason, long long *active)
{
	return start(d, dry, reason, NULL, 0, active);
}

long long
runs_start_mine(struct app *a, int dry, const char *reason,
    long long *active)
{
	return start(a->db, dry, reason, a->owner, a->pid, active);
}

long long
runs_active(struct db *d)
{
	struct dbq *s = dbq_stmt(d, STMT_RUN_ACTIVE);
	long long id = 0;
	int rc;

	if (s == NULL)
		return -1;
	rc = dbq_step(s);
	if (rc == DBQ_ROW)
		id = dbq_i64(s, 0);
	dbq_done(s);
	return rc == DBQ_ROW || rc == DBQ_DONE ? id : -1;
}

static void
copy(char *dst, size_t sz, struct dbq *s, int col)
{
	snprintf(dst, sz, "%s", dbq_text(s, col));
}

static void
run_from_row(struct dbq *s, struct run *r)
{
	memset(r, 0, sizeof(*r));
	r->id = dbq_i64(s, 0);
	copy(r->state, sizeof(r->state), s, 1);
	r->dry = dbq_int(s, 2);
	copy(r->reason, sizeof(r->reason), s, 3);
	r->progress = dbq_int(s, 4);
	r->checkpoint = dbq_int(s, 5);
	recreport_parse(dbq_text(s, 6), &r->report);
	copy(r->error, sizeof(r->error), s, 7);
	r->created_at = dbq_i64(s, 8);
	r->started_at = dbq_i64(s, 9);
	r->finished_at = dbq_i64(s, 10);
	r->owner = dbq_i64(s, 11);
	copy(r->owner_name, sizeof(r->owner_name), s, 12);
	r->lease_until = dbq_i64(s, 13);
}

void
runs_owner_host(const struct run *r, char *out, size_t sz)
{
	snprintf(out, sz, "%.*s", (int)strcspn(r->owner_name, ":"),
	    r->owner_name);
}

int
runs_get(struct db *d, long long id, struct run *r)
{
	struct dbq *s = dbq_stmt(d, STMT_RUN_GET);
	int rc;

	memset(r, 0, sizeof(*r));	/* no garbage for a caller to print */
	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, id);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		run_from_row(s, r);
	dbq_done(s);
	return rc == DBQ_ROW ? 1 : rc == DBQ_DONE ? 0 : -1;
}

int
runs_last_done(struct db *d, struct run *r)
{
	struct dbq *s = dbq_stmt(d, STMT_RUN_LAST_DONE);
	int rc;

	if (s == NULL)
		return -1;
	if ((rc = dbq_step(s)) == DBQ_ROW)
		run_from_row(s, r);
	dbq_done(s);
	return rc == DBQ_ROW ? 1 : rc == DBQ_DONE ? 0 : -1;
}

int
runs_list(struct db *d, struct run *out, int max)
{
	struct dbq *s = dbq_stmt(d, STMT_RUN_LIST);
	int n = 0, rc = DBQ_DONE;

	if (s == NULL)
		return -1;
	dbq_bind_int(s, 1, max);
	while (n < max && (rc = dbq_step(s)) == DBQ_ROW)
		run_from_row(s, &out[n++]);
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : n;
}

/* Runs an UPDATE of a run's row that the owner may make only while the
 * run is its own: 1 it did, 0 it matched no row, -1 on an error. */
static int
owned_write(struct db *d, struct dbq *s)
{
	int rc = dbq_step(s);

	dbq_done(s);
	if (rc != DBQ_DONE)
		return -1;
	return dbq_changes(d) == 1;
}

int
runs_claim(struct db *d, long long id, const char *owner, long long pid,
    long long now_ms)
{
	struct dbq *s = dbq_stmt(d, STMT_RUN_CLAIM);

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, id);
	dbq_bind_i64(s, 2, now_ms);
	dbq_bind_i64(s, 3, pid);
	dbq_bind_text(s, 4, owner, -1);
	dbq_bind_i64(s, 5, now_ms + RUNS_LEASE_MS);
	return owned_write(d, s);
}

int
runs_renew(struct db *d, long long id, const char *owner, long long now_ms)
{
	struct dbq *s = dbq_stmt(d, STMT_RUN_RENEW);

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, id);
	dbq_bind_text(s, 2, owner, -1);
	dbq_bind_i64(s, 3, now_ms + RUNS_LEASE_MS);
	return owned_write(d, s);
}

/*
 * The lease's renewer: a thread with a connection of its own, which
 * renews the run's lease every RUNS_RENEW_MS while the run goes on,
 * whatever its step is doing (a recount of a whole family is one
 * statement).  It stops when told, or once the run was taken (lost).
 * It takes no signal: the process's go to its other threads (db_begin()'s
 * SIGALRM among them).
 */
struct renewer {
	struct app	*a;
	long long	 id;
	struct db	*db;		/* its own connection */
	pthread_t	 th;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	int		 stop;		/* under mu */
	int		 lost;		/* atomic: the run is not ours now */
	int		 running;
};

static void *
renew_loop(void *arg)
{
	struct renewer *w = arg;
	struct timespec at;
	int rc;

	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		clock_gettime(CLOCK_MONOTONIC, &at);
		at.tv_sec += RUNS_RENEW_MS / 1000;
		at.tv_nsec += (RUNS_RENEW_MS % 1000) * 1000000L;
		if (at.tv_nsec >= 1000000000L) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000L;
		}
		while (!w->stop &&
		    pthread_cond_timedwait(&w->cv, &w->mu, &at) != ETIMEDOUT)
			;
		if (w->stop)
			break;
		pthread_mutex_unlock(&w->mu);
		rc = runs_renew(w->db, w->id, w->a->owner, clock_wall_ms());
		if (rc == -1)
			log_warn("reconciliation %lld: its lease could not be "
			    "renewed: %s", w->id, dbq_errmsg(w->db));
		pthread_mutex_lock(&w->mu);
		if (rc == 0) {
			__atomic_store_n(&w->lost, 1, __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Starts w's thread; without a connection or a thread, the lease is
 * renewed at the run's steps only (logged). */
static void
renew_start(struct renewer *w, struct app *a, long long id)
{
	pthread_condattr_t ca;
	sigset_t all, old;

	memset(w, 0, sizeof(*w));
	w->a = a;
	w->id = id;
	if ((w->db = db_new(a->cfg.db_path)) == NULL) {
		log_warn("reconciliation %lld: no connection of its own to "
		    "renew its lease on: renewed at its steps only", id);
		return;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&w->mu, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	w->running = pthread_create(&w->th, NULL, renew_loop, w) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!w->running) {
		log_warn("reconciliation %lld: no thread to renew its lease: "
		    "renewed at its steps only", id);
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		db_free(w->db);
	}
}

/* Stops w's thread; 1 when it found the run taken, else 0. */
static int
renew_stop(struct renewer *w)
{
	if (!w->running)
		return 0;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	db_free(w->db);
	w->running = 0;
	return __atomic_load_n(&w->lost, __ATOMIC_ACQUIRE);
}

struct exec_ctx {
	struct app	*a;
	long long	 id;
	void		(*line)(int, const char *);
	struct renewer	*w;
	int		 lost;		/* the run was taken from us */
	int		 next;		/* the step it is at */
};

/* After each step: its progress and checkpoint, with the lease renewed,
 * while the run is still ours; -1 stops the run (lost, or an error). */
static int
on_progress(void *arg, int pct, int next, const struct rec_report *rep)
{
	struct exec_ctx *x = arg;
	struct dbq *s = dbq_stmt(x->a->db, STMT_RUN_PROGRESS);
	char *js = recreport_json(rep);
	int rc;

	if (s == NULL || js == NULL) {
		free(js);
		return -1;
	}
	dbq_bind_i64(s, 1, x->id);
	dbq_bind_int(s, 2, pct >= 100 ? 99 : pct);
	dbq_bind_int(s, 3, next);
	dbq_bind_text_copy(s, 4, js, -1);
	dbq_bind_text(s, 5, x->a->owner, -1);
	dbq_bind_i64(s, 6, clock_wall_ms() + RUNS_LEASE_MS);
	rc = owned_write(x->a->db, s);
	free(js);
	if (rc == 0 || __atomic_load_n(&x->w->lost, __ATOMIC_ACQUIRE))
		x->lost = 1;
	if (rc != 1 || x->lost)
		return -1;
	x->next = next;
	if (x->line != NULL)
		x->line(pct, next < REC_FAMILIES ? rep->fam[next].name : "done");
	return 0;
}

/* Ends run id as state (with err), if it is still owner's: 1, 0 when it
 * is not, -1 on an error. */
static int
finish(struct db *d, long long id, const char *owner, const char *state,
    const char *err)
{
	struct dbq *s = dbq_stmt(d, STMT_RUN_FINISH);

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, id);
	dbq_bind_text(s, 2, state, -1);
	if (err != NULL)
		dbq_bind_text(s, 3, err, -1);
	else
		dbq_bind_null(s, 3);
	dbq_bind_i64(s, 4, clock_wall_ms());
	dbq_bind_text(s, 5, owner, -1);
	return owned_write(d, s);
}

/* Says on a running run's page that its step failed and is tried
 * again (cleared by the next step done, or the end). */
static void
note(struct db *d, long long id, const char *owner, const char *step)
{
	struct dbq *s = dbq_stmt(d, STMT_RUN_NOTE);
	char text[128];

	if (s == NULL)
		return;
	snprintf(text, sizeof(text), "Redis or SQLite failed in step %s: "
	    "it runs again from there in a few seconds", step);
	dbq_bind_i64(s, 1, id);
	dbq_bind_text_copy(s, 2, text, -1);
	dbq_bind_text(s, 3, owner, -1);
	(void)owned_write(d, s);
}

int
runs_execute(struct app *a, long long id, int keep,
    void (*line)(int, const char *))
{
	struct renewer w;
	struct exec_ctx x = { a, id, line, &w, 0, 0 };
	struct run r;
	long long now = clock_wall_ms();
	long held;
	int rc, mine, fin;

	if (runs_get(a->db, id, &r) != 1)
		return -1;
	mine = strcmp(r.owner_name, a->owner) == 0;
	if (r.owner_name[0] != '\0' && !mine && r.lease_until >= now)
		return 0;		/* its owner's lease holds */
	if ((rc = runs_claim(a->db, id, a->owner, a->pid, now)) != 1)
		return rc;		/* over, or another claimed it first */
	if (r.owner_name[0] != '\0' && !mine)
		log_info("reconciliation %lld: the lease of %s lapsed %lld ms "
		    "ago; taken over", id, r.owner_name, now - r.lease_until);
	/* where it stands now that it is ours (its last owner may have
	 * written a step since the read above) */
	if (runs_get(a->db, id, &r) != 1)
		return -1;
	renew_start(&w, a, id);
	x.next = r.checkpoint;
	if (r.checkpoint > 0)
		log_info("reconciliation %lld resumes at step %d", id,
		    r.checkpoint);
	else
		recreport_init(&r.report);
	/* Fold what is pending first: fewer keys to settle. */
	recover_batches(a);
	flush_all(a, 1000, 0, NULL);
	dbq_rows_held(a->db, 1);
	rc = reconcile(a, r.dry, r.checkpoint, &r.report, on_progress, &x);
	held = dbq_rows_held(a->db, 0);
	if (rc == 0 && !r.dry) {	/* counters moved: fold, rebuild boards */
		flush_all(a, 1000, 0, NULL);
		lb_invalidate(a);
	}
	/* the renewer first: it would find the run over, not ours */
	if (renew_stop(&w))
		x.lost = 1;
	if (!x.lost && rc == -1 && keep) {
		log_warn("reconciliation %lld stopped on a failure; it stays "
		    "active and resumes at its checkpoint", id);
		note(a->db, id, a->owner, x.next < REC_FAMILIES ?
		    r.report.fam[x.next].name : "");
		return RUNS_AGAIN;
	}
	if (!x.lost) {
		fin = finish(a->db, id, a->owner, rc == 0 ? "done" :
		    "failed", rc == 0 ? NULL : "Redis or SQLite failed; start "
		    "a new run");
		if (fin == -1) {	/* still running: not done yet */
			log_warn("reconciliation %lld could not be marked %s; "
			    "it stays active and ends at its next claim", id,
			    rc == 0 ? "done" : "failed");
			return keep ? RUNS_AGAIN : -1;
		}
		x.lost = fin == 0;
	}
	if (x.lost) {
		log_warn("reconciliation %lld: taken by another process while "
		    "this one stalled past its lease; left to it", id);
		return 0;
	}
	if (rc == -1)
		return -1;
	if (held >= 0)
		log_info("reconciliation %lld done: %lld counters were wrong "
		    "(a result held %ld rows at most)", id,
		    recreport_wrong(&r.report), held);
	else
		log_info("reconciliation %lld done: %lld counters were wrong",
		    id, recreport_wrong(&r.report));
	return 1;
}
