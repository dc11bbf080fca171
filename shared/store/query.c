/* query.c -- statements through an opaque handle; see query.h. */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "base/buf.h"
#include "base/log.h"
#include "store/db.h"
#include "store/pg.h"
#include "store/query.h"

/* struct dbq is never defined: a struct dbq * is the sqlite3_stmt *, or
 * in a process on PostgreSQL (pg_engine: one engine a process) the
 * struct pgq *. */
#define S(q)	((sqlite3_stmt *)(void *)(q))
#define Q(s)	((struct dbq *)(void *)(s))
#define P(q)	((struct pgq *)(void *)(q))

struct dbq *
db_stmt(struct db *d, enum stmt id)
{
	db_check_owner(d);
	if (d->pg != NULL)
		return Q(pg_stmt(d->pg, (int)id, sql_pg_text[id] != NULL ?
		    sql_pg_text[id] : sql_text[id], sql_stream[id]));
	if (d->st[id] != NULL)
		return Q(d->st[id]);
	if (sqlite3_prepare_v3(d->h, sql_text[id], -1,
	    SQLITE_PREPARE_PERSISTENT, &d->st[id], NULL) != SQLITE_OK) {
		log_err("sqlite prepare %d: %s", (int)id, sqlite3_errmsg(d->h));
		d->st[id] = NULL;
		return NULL;
	}
	return Q(d->st[id]);
}

void
db_done(struct dbq *q)
{
	if (q != NULL && pg_engine)
		pgq_done(P(q));
	else if (q != NULL) {
		sqlite3_reset(S(q));
		sqlite3_clear_bindings(S(q));
	}
}

struct dbq *
db_prepare_once(struct db *d, const char *sql)
{
	sqlite3_stmt *s = NULL;

	if (d->pg != NULL)
		return Q(pg_prepare_once(d->pg, sql));
	if (sqlite3_prepare_v2(d->h, sql, -1, &s, NULL) != SQLITE_OK) {
		log_err("sqlite prepare: %s", sqlite3_errmsg(d->h));
		sqlite3_finalize(s);
		return NULL;
	}
	return Q(s);
}

void
dbq_finalize(struct dbq *q)
{
	if (pg_engine)
		pgq_finalize(P(q));
	else
		sqlite3_finalize(S(q));
}

void
dbq_reset(struct dbq *q)
{
	if (pg_engine)
		pgq_reset(P(q));
	else
		sqlite3_reset(S(q));
}

void
dbq_bind_i64(struct dbq *q, int i, long long v)
{
	if (pg_engine)
		pgq_bind(P(q), i, 'i', &v, 0, 0);
	else
		sqlite3_bind_int64(S(q), i, v);
}

void
dbq_bind_int(struct dbq *q, int i, int v)
{
	dbq_bind_i64(q, i, v);
}

void
dbq_bind_null(struct dbq *q, int i)
{
	if (pg_engine)
		pgq_bind(P(q), i, 'n', NULL, 0, 0);
	else
		sqlite3_bind_null(S(q), i);
}

void
dbq_bind_text(struct dbq *q, int i, const char *s, int len)
{
	if (pg_engine)
		pgq_bind(P(q), i, 't', s, len, 0);
	else
		sqlite3_bind_text(S(q), i, s, len, SQLITE_STATIC);
}

void
dbq_bind_text_copy(struct dbq *q, int i, const char *s, int len)
{
	if (pg_engine)
		pgq_bind(P(q), i, 't', s, len, 1);
	else
		sqlite3_bind_text(S(q), i, s, len, SQLITE_TRANSIENT);
}

void
dbq_bind_ids(struct dbq *q, int i, const long long *ids, int n)
{
	struct buf b = { 0 };
	int k;

	/* JSON for SQLite's json_each(), an array literal for PostgreSQL */
	buf_putc(&b, pg_engine ? '{' : '[');
	for (k = 0; k < n; k++) {
		if (k > 0)
			buf_putc(&b, ',');
		buf_put_ll(&b, ids[k]);
	}
	buf_putc(&b, pg_engine ? '}' : ']');
	k = (int)b.len;
	if (pg_engine) {
		pgq_bind(P(q), i, 't', b.p, k, 1);
		buf_free(&b);
	} else
		sqlite3_bind_text(S(q), i, buf_take(&b), k, free);
}

void
dbq_bind_blob(struct dbq *q, int i, const void *p, int len)
{
	if (pg_engine)
		pgq_bind(P(q), i, 'b', p, len, 0);
	else
		sqlite3_bind_blob(S(q), i, p, len, SQLITE_STATIC);
}

void
dbq_bind_blob_copy(struct dbq *q, int i, const void *p, int len)
{
	if (pg_engine)
		pgq_bind(P(q), i, 'b', p, len, 1);
	else
		sqlite3_bind_blob(S(q), i, p, len, SQLITE_TRANSIENT);
}

/* pgq_step()'s answers are dbq_step()'s, as they are. */
_Static_assert(PGQ_ROW == DBQ_ROW && PGQ_DONE == DBQ_DONE &&
    PGQ_ERR == DBQ_ERR, "pg.h's PGQ_* are query.h's DBQ_*");

int
dbq_step(struct dbq *q)
{
	if (pg_engine)
		return pgq_step(P(q));
	switch (sqlite3_step(S(q))) {
	case SQLITE_ROW:
		return DBQ_ROW;
	case SQLITE_DONE:
		return DBQ_DONE;
	default:
		return DBQ_ERR;
	}
}

long long
dbq_i64(struct dbq *q, int col)
{
	const char *v;

	if (!pg_engine)
		return sqlite3_column_int64(S(q), col);
	if ((v = pgq_value(P(q), col)) == NULL)
		return 0;
	if (v[0] == 't' || v[0] == 'f')		/* a boolean */
		return v[0] == 't';
	return strtoll(v, NULL, 10);
}

int
dbq_int(struct dbq *q, int col)
{
	if (!pg_engine)
		return sqlite3_column_int(S(q), col);
	return (int)dbq_i64(q, col);
}

const char *
dbq_text(struct dbq *q, int col)
{
	const unsigned char *v;

	if (pg_engine) {
		const char *t = pgq_value(P(q), col);

		return t != NULL ? t : "";
	}
	v = sqlite3_column_text(S(q), col);
	return v != NULL ? (const char *)v : "";
}

int
dbq_is_null(struct dbq *q, int col)
{
	if (pg_engine)
		return pgq_value(P(q), col) == NULL;
	return sqlite3_column_type(S(q), col) == SQLITE_NULL;
}

void
db_col_text(struct dbq *q, int col, char *dst, size_t sz)
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
db_errmsg(struct db *d)
{
	if (d->pg != NULL)
		return pg_errmsg(d->pg);
	return sqlite3_errmsg(d->h);
}

int
db_insert_id(struct db *d, struct dbq *q, long long *id)
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
db_cheap_returning(struct db *d)
{
	return d->pg != NULL;
}

int
db_changes(struct db *d)
{
	if (d->pg != NULL)
		return pg_changes(d->pg);
	return sqlite3_changes(d->h);
}

void
db_fetch_rows(struct db *d, int rows)
{
	if (d->pg != NULL)
		pg_set_fetch(d->pg, rows);
}

long
db_rows_held(struct db *d, int reset)
{
	return d->pg != NULL ? pg_rows_held(d->pg, reset) : -1;
}

int
db_in_txn(struct db *d)
{
	if (d->pg != NULL)
		return pg_in_txn(d->pg);
	return !sqlite3_get_autocommit(d->h);
}

int
db_i64_by_id(struct db *d, enum stmt st, long long id, long long *v)
{
	struct dbq *s = db_stmt(d, st);
	int rc;

	*v = 0;
	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, id);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		*v = dbq_i64(s, 0);
	db_done(s);
	return rc == DBQ_ERR ? -1 : 0;
}

int
db_lock_key(struct db *d, const char *name)
{
	struct dbq *s;
	int rc;

	if (d->pg == NULL)	/* SQLite: the writer is alone already */
		return 0;
	if ((s = db_stmt(d, STMT_LOCK_KEY)) == NULL)
		return -1;
	dbq_bind_text_copy(s, 1, name, -1);
	while ((rc = dbq_step(s)) == DBQ_ROW)
		;
	db_done(s);
	return rc == DBQ_DONE ? 0 : -1;
}

long long
db_setting(struct db *d, const char *name, long long dflt)
{
	struct dbq *s = db_stmt(d, STMT_SETTING_GET);
	long long v = dflt;

	if (s == NULL)
		return dflt;
	dbq_bind_text(s, 1, name, -1);
	if (dbq_step(s) == DBQ_ROW)
		v = dbq_i64(s, 0);
	db_done(s);
	return v;
}

int
db_setting_put(struct db *d, const char *name, long long value)
{
	struct dbq *s = db_stmt(d, STMT_SETTING_PUT);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_text(s, 1, name, -1);
	dbq_bind_i64(s, 2, value);
	rc = dbq_step(s);
	db_done(s);
	return rc == DBQ_DONE ? 0 : -1;
}

int
db_batch_applied(struct db *d, const char *id)
{
	struct dbq *s = db_stmt(d, STMT_FLUSH_APPLIED);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_text_copy(s, 1, id, -1);
	rc = dbq_step(s);
	db_done(s);
	return rc == DBQ_ROW ? 1 : rc == DBQ_DONE ? 0 : -1;
}
