/* dbq.c -- statements through an opaque handle; see dbq.h. */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "base/buf.h"
#include "base/log.h"
#include "base/metrics.h"
#include "store/db_int.h"
#include "store/dbq.h"
#include "store/dbq_int.h"
#include "store/pg.h"
#include "store/pg_ahead.h"

_Static_assert(STMT__MAX <= METRICS_STMTS, "metrics.h counts fewer statements");

/* PostgreSQL's step answers what SQLite's does. */
_Static_assert(PGQ_ROW == DBQ_ROW && PGQ_DONE == DBQ_DONE &&
    PGQ_ERR == DBQ_ERR, "pg.h's PGQ_* are dbq.h's DBQ_*");

/* SQLite's statements: the engine's functions below. */
struct sq {
	struct dbq	 q;
	sqlite3_stmt	*s;
	struct db	*d;		/* its connection */
};

#define S(q)	(((struct sq *)(void *)(q))->s)

static void
sq_reset(struct dbq *q)
{
	sqlite3_reset(S(q));
	db_write_alone_end(((struct sq *)(void *)q)->d, q);
}

static void
sq_done(struct dbq *q)
{
	sq_reset(q);
	sqlite3_clear_bindings(S(q));
}

static void
sq_finalize(struct dbq *q)
{
	sqlite3_finalize(S(q));
	db_write_alone_end(((struct sq *)(void *)q)->d, q);
	free(q);
}

static void
sq_bind(struct dbq *q, int i, int kind, const void *p, int len, int copy)
{
	switch (kind) {
	case 'i':
		sqlite3_bind_int64(S(q), i, *(const long long *)p);
		break;
	case 't':
		sqlite3_bind_text(S(q), i, p, len,
		    copy ? SQLITE_TRANSIENT : SQLITE_STATIC);
		break;
	case 'b':
		sqlite3_bind_blob(S(q), i, p, len,
		    copy ? SQLITE_TRANSIENT : SQLITE_STATIC);
		break;
	default:
		sqlite3_bind_null(S(q), i);
	}
}

/* A statement's first step opens db_reads_together()'s transaction when
 * it only reads, and ends it when it may write (db.h); a write outside a
 * transaction holds the writers' lock till it ends (db_write_alone()). */
static int
sq_step(struct dbq *q)
{
	struct sq *sq = (struct sq *)(void *)q;
	int rc;

	if (!sqlite3_stmt_busy(sq->s)) {
		if (!sqlite3_stmt_readonly(sq->s)) {
			db_reads_close(sq->d);
			if (db_write_alone(sq->d, q) == -1)
				return DBQ_ERR;
		} else if (sq->d->reads_on)
			db_reads_open(sq->d);
	}
	if ((rc = sqlite3_step(S(q))) == SQLITE_ROW)
		return DBQ_ROW;
	db_write_alone_end(sq->d, q);	/* it ended */
	return rc == SQLITE_DONE ? DBQ_DONE : DBQ_ERR;
}

static long long
sq_i64(struct dbq *q, int col)
{
	return sqlite3_column_int64(S(q), col);
}

static const char *
sq_text(struct dbq *q, int col)
{
	return (const char *)sqlite3_column_text(S(q), col);
}

static int
sq_is_null(struct dbq *q, int col)
{
	return sqlite3_column_type(S(q), col) == SQLITE_NULL;
}

static const struct dbq_engine sq_engine = {
	sq_done, sq_reset, sq_finalize, sq_bind, sq_step, sq_i64, sq_text,
	sq_is_null, "[]"
};

static struct dbq *
sq_new(struct db *d, int id, const char *sql, unsigned int flags)
{
	struct sq *q = xcalloc(1, sizeof(*q));

	q->q.engine = &sq_engine;
	q->d = d;
	if (sqlite3_prepare_v3(d->h, sql, -1, flags, &q->s, NULL) != SQLITE_OK) {
		log_err("sqlite prepare %d: %s", id, sqlite3_errmsg(d->h));
		sqlite3_finalize(q->s);
		free(q);
		return NULL;
	}
	return &q->q;
}

struct dbq *
dbq_stmt(struct db *d, enum stmt id)
{
	db_check_owner(d);
	if (d->stmt_runs != NULL)
		__atomic_fetch_add(&d->stmt_runs[id], 1, __ATOMIC_RELAXED);
	if (d->pg != NULL)
		return pg_stmt(d->pg, (int)id, sql_pg_text[id] != NULL ?
		    sql_pg_text[id] : sql_text[id], sql_stream[id]);
	if (d->st[id] == NULL)
		d->st[id] = sq_new(d, (int)id, sql_text[id],
		    SQLITE_PREPARE_PERSISTENT);
	return d->st[id];
}

int
dbq_ahead_ok(struct db *d)
{
	return d->pg != NULL;
}

int
dbq_ahead_send(struct db *d, struct dbq *q)
{
	int ticket = 0;

	if (q == NULL)
		return 0;
	if (d->pg != NULL)
		ticket = pg_ahead_send(q);
	dbq_done(q);
	return ticket;
}

void
dbq_ahead_wait(struct db *d)
{
	if (d->pg != NULL)
		pg_ahead_wait(d->pg);
}

struct dbq *
dbq_ahead_take(struct db *d, enum stmt st, int ticket)
{
	db_check_owner(d);
	return d->pg != NULL ? pg_ahead_take(d->pg, (int)st, ticket) : NULL;
}

struct dbq *
dbq_prepare_once(struct db *d, const char *sql)
{
	return d->pg != NULL ? pg_prepare_once(d->pg, sql) :
	    sq_new(d, -1, sql, 0);
}

void
dbq_done(struct dbq *q)
{
	if (q != NULL)
		q->engine->done(q);
}

void
dbq_finalize(struct dbq *q)
{
	if (q != NULL)
		q->engine->finalize(q);
}

void
dbq_reset(struct dbq *q)
{
	q->engine->reset(q);
}

void
dbq_bind_i64(struct dbq *q, int i, long long v)
{
	q->engine->bind(q, i, 'i', &v, 0, 1);
}

void
dbq_bind_int(struct dbq *q, int i, int v)
{
	dbq_bind_i64(q, i, v);
}

void
dbq_bind_null(struct dbq *q, int i)
{
	q->engine->bind(q, i, 'n', NULL, 0, 0);
}

void
dbq_bind_text(struct dbq *q, int i, const char *s, int len)
{
	q->engine->bind(q, i, 't', s, len, 0);
}

void
dbq_bind_text_copy(struct dbq *q, int i, const char *s, int len)
{
	q->engine->bind(q, i, 't', s, len, 1);
}

void
dbq_bind_ids(struct dbq *q, int i, const long long *ids, int n)
{
	struct buf b = { 0 };
	int k;

	/* JSON for SQLite's json_each(), an array literal for PostgreSQL */
	buf_putc(&b, q->engine->ids[0]);
	for (k = 0; k < n; k++) {
		if (k > 0)
			buf_putc(&b, ',');
		buf_put_ll(&b, ids[k]);
	}
	buf_putc(&b, q->engine->ids[1]);
	q->engine->bind(q, i, 't', b.p, (int)b.len, 1);
	buf_free(&b);
}

void
dbq_bind_blob(struct dbq *q, int i, const void *p, int len)
{
	q->engine->bind(q, i, 'b', p, len, 0);
}

void
dbq_bind_blob_copy(struct dbq *q, int i, const void *p, int len)
{
	q->engine->bind(q, i, 'b', p, len, 1);
}

int
dbq_step(struct dbq *q)
{
	return q->engine->step(q);
}

long long
dbq_i64(struct dbq *q, int col)
{
	return q->engine->i64(q, col);
}

int
dbq_int(struct dbq *q, int col)
{
	return (int)q->engine->i64(q, col);
}

const char *
dbq_text(struct dbq *q, int col)
{
	const char *v = q->engine->text(q, col);

	return v != NULL ? v : "";
}

int
dbq_is_null(struct dbq *q, int col)
{
	return q->engine->is_null(q, col);
}

void
dbq_col_text(struct dbq *q, int col, char *dst, size_t sz)
{
	const char *v = dbq_text(q, col);
	size_t n = strlen(v);

	if (n >= sz)
		n = sz - 1;
	if (n > 0)
		memcpy(dst, v, n);
	dst[n] = '\0';
}

const char *
dbq_errmsg(struct db *d)
{
	if (d->pg != NULL)
		return pg_errmsg(d->pg);
	return sqlite3_errmsg(d->h);
}

int
dbq_insert_id(struct db *d, struct dbq *q, long long *id)
{
	int rc = dbq_step(q), n;

	*id = 0;
	if (d->pg != NULL) {
		if (rc == DBQ_ROW)
			*id = dbq_i64(q, 0);
		while (rc == DBQ_ROW)
			rc = dbq_step(q);
		if (rc != DBQ_DONE)
			*id = 0;	/* an error: no id, as on SQLite */
		return rc != DBQ_DONE ? -1 : *id > 0;
	}
	if (rc != DBQ_DONE)
		return -1;
	if ((n = sqlite3_changes(d->h)) > 0)
		*id = sqlite3_last_insert_rowid(d->h);
	return n > 0;
}

int
dbq_cheap_returning(struct db *d)
{
	return d->pg != NULL;
}

int
dbq_server_actions(struct db *d)
{
	return d->pg != NULL;
}

int
dbq_write(struct db *d, struct dbq *s)
{
	int rc = dbq_step(s), n = dbq_changes(d);

	dbq_done(s);
	return rc == DBQ_DONE ? n : -1;
}

int
dbq_changes(struct db *d)
{
	if (d->pg != NULL)
		return pg_changes(d->pg);
	return sqlite3_changes(d->h);
}

void
dbq_fetch_rows(struct db *d, int rows)
{
	if (d->pg != NULL)
		pg_set_fetch(d->pg, rows);
}

long
dbq_rows_held(struct db *d, int reset)
{
	return d->pg != NULL ? pg_rows_held(d->pg, reset) : -1;
}

int
dbq_in_txn(struct db *d)
{
	if (d->pg != NULL)
		return pg_in_txn(d->pg);
	/* db_reads_together()'s is no transaction of the caller's: one it
	 * opens ends it (db.h) */
	return !sqlite3_get_autocommit(d->h) && !db_reads_is_open(d);
}

int
dbq_i64_by_id(struct db *d, enum stmt st, long long id, long long *v)
{
	struct dbq *s = dbq_stmt(d, st);
	int rc;

	*v = 0;
	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, id);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		*v = dbq_i64(s, 0);
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : 0;
}

int
dbq_lock_key(struct db *d, const char *name, int shared)
{
	struct dbq *s;
	int rc;

	if (d->pg == NULL)	/* SQLite: the writer is alone already */
		return 0;
	if ((s = dbq_stmt(d, shared ? STMT_LOCK_KEY_SHARED : STMT_LOCK_KEY)) ==
	    NULL)
		return -1;
	dbq_bind_text_copy(s, 1, name, -1);
	while ((rc = dbq_step(s)) == DBQ_ROW)
		;
	dbq_done(s);
	return rc == DBQ_DONE ? 0 : -1;
}

int
dbq_run_ll2(struct db *d, enum stmt st, long long a, long long b)
{
	struct dbq *s = dbq_stmt(d, st);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, a);
	dbq_bind_i64(s, 2, b);
	while ((rc = dbq_step(s)) == DBQ_ROW)
		;
	dbq_done(s);
	return rc == DBQ_DONE ? 0 : -1;
}

int
dbq_setting_read(struct db *d, const char *name, long long dflt,
    long long *v)
{
	struct dbq *s = dbq_stmt(d, STMT_SETTING_GET);
	int rc;

	*v = dflt;
	if (s == NULL)
		return -1;
	dbq_bind_text(s, 1, name, -1);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		*v = dbq_i64(s, 0);
	dbq_done(s);
	return rc == DBQ_ROW || rc == DBQ_DONE ? 0 : -1;
}

long long
dbq_setting(struct db *d, const char *name, long long dflt)
{
	long long v;

	dbq_setting_read(d, name, dflt, &v);
	return v;
}

int
dbq_setting_put(struct db *d, const char *name, long long value)
{
	struct dbq *s = dbq_stmt(d, STMT_SETTING_PUT);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_text(s, 1, name, -1);
	dbq_bind_i64(s, 2, value);
	rc = dbq_step(s);
	dbq_done(s);
	return rc == DBQ_DONE ? 0 : -1;
}

int
dbq_batch_applied(struct db *d, const char *id)
{
	struct dbq *s = dbq_stmt(d, STMT_FLUSH_APPLIED);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_text_copy(s, 1, id, -1);
	rc = dbq_step(s);
	dbq_done(s);
	return rc == DBQ_ROW ? 1 : rc == DBQ_DONE ? 0 : -1;
}
