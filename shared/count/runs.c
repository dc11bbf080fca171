/* runs.c -- reconciliation runs in SQLite; see runs.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "count/flush.h"
#include "count/lb.h"
#include "count/recover.h"
#include "count/runs.h"
#include "store/dbq.h"

long long
runs_start(struct db *d, int dry, const char *reason, long long *active)
{
	struct dbq *s;
	long long id = 0;
	int rc;

	*active = 0;
	if (db_begin(d) == -1 || (s = dbq_stmt(d, STMT_RUN_CREATE)) == NULL) {
		db_rollback(d);
		return -1;
	}
	dbq_bind_int(s, 1, dry ? 1 : 0);
	dbq_bind_text(s, 2, reason, -1);
	dbq_bind_i64(s, 3, clock_wall_ms());
	rc = dbq_step(s);
	if (rc == DBQ_ROW)
		id = dbq_i64(s, 0);
	dbq_done(s);
	if (id == 0)
		*active = runs_active(d);
	if (db_commit(d) == -1)
		return -1;
	return id;
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

struct exec_ctx {
	struct app	*a;
	long long	 id;
	void		(*line)(int, const char *);
};

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
	rc = dbq_step(s);
	dbq_done(s);
	free(js);
	if (x->line != NULL)
		x->line(pct, next < REC_FAMILIES ? rep->fam[next].name : "done");
	return rc == DBQ_DONE ? 0 : -1;
}

static void
finish(struct db *d, long long id, const char *state, const char *err)
{
	struct dbq *s = dbq_stmt(d, STMT_RUN_FINISH);

	if (s == NULL)
		return;
	dbq_bind_i64(s, 1, id);
	dbq_bind_text(s, 2, state, -1);
	if (err != NULL)
		dbq_bind_text(s, 3, err, -1);
	else
		dbq_bind_null(s, 3);
	dbq_bind_i64(s, 4, clock_wall_ms());
	dbq_step(s);
	dbq_done(s);
}

int
runs_execute(struct app *a, long long id, void (*line)(int, const char *))
{
	struct exec_ctx x = { a, id, line };
	struct dbq *s;
	struct run r;
	int rc;

	if (runs_get(a->db, id, &r) != 1)
		return -1;
	if (r.owner != 0 && r.owner != a->pid &&
	    (kill((pid_t)r.owner, 0) == 0 || errno == EPERM))
		return 0;		/* someone alive is on it */
	if ((s = dbq_stmt(a->db, STMT_RUN_CLAIM)) == NULL)
		return -1;
	dbq_bind_i64(s, 1, id);
	dbq_bind_i64(s, 2, clock_wall_ms());
	dbq_bind_i64(s, 3, a->pid);
	dbq_bind_i64(s, 4, r.owner);
	rc = dbq_step(s);
	dbq_done(s);
	if (rc != DBQ_DONE)
		return -1;
	if (dbq_changes(a->db) != 1)
		return 0;		/* another process claimed it first */
	if (r.checkpoint > 0)
		log_info("reconciliation %lld resumes at step %d", id,
		    r.checkpoint);
	else
		recreport_init(&r.report);
	/* Fold what is pending first: fewer keys to settle. */
	recover_batches(a);
	flush_all(a, 1000, 0, NULL);
	if (reconcile(a, r.dry, r.checkpoint, &r.report, on_progress, &x) == -1) {
		finish(a->db, id, "failed", "Redis or SQLite failed; "
		    "start a new run");
		return -1;
	}
	if (!r.dry) {		/* counters moved: fold, then rebuild boards */
		flush_all(a, 1000, 0, NULL);
		lb_invalidate(a);
	}
	finish(a->db, id, "done", NULL);
	log_info("reconciliation %lld done: %lld counters were wrong", id,
	    recreport_wrong(&r.report));
	return 1;
}
