/* dbq.h -- a statement of the table (sql.h) as the layers above store/
 * see it: bind values, step through rows, read columns.
 *
 * struct dbq is opaque: no engine type or call leaves store/ (make lint
 * checks it), so the code that counts, posts and renders is the same
 * whatever engine runs the statement.  A statement from dbq_stmt() is
 * cached for the life of the connection and handed back with dbq_done()
 * on every path (reset + bindings cleared), or it keeps its read
 * snapshot.  Columns and parameters are numbered as in SQL: parameters
 * from 1, columns from 0.
 *
 * Text bound with dbq_bind_text() must stay valid until the statement is
 * stepped to its end or handed back; dbq_bind_text_copy() copies it.  A
 * column's text is valid until the next step or dbq_done() (NULL: "").
 */
#ifndef TALLY_QUERY_H
#define TALLY_QUERY_H

#include <stddef.h>

#include "store/sql.h"

struct db;
struct dbq;

/* dbq_step(): a row, the end, or an error (logged by the caller, with
 * dbq_errmsg(), when it matters). */
#define DBQ_ROW		1
#define DBQ_DONE	0
#define DBQ_ERR		(-1)

/* The cached statement, or NULL if it cannot be prepared (logged); each
 * call is counted as a run of id where the db counts them (db.h). */
struct dbq	*dbq_stmt(struct db *, enum stmt);
void		 dbq_done(struct dbq *);

/* A statement that is not in the table, for tests' own SQL: the
 * program's are all the table's (make lint); the caller releases it
 * with dbq_finalize().  NULL on error (logged). */
struct dbq	*dbq_prepare_once(struct db *, const char *sql);
void		 dbq_finalize(struct dbq *);
/* Back to its start, bindings kept (a statement run once per item). */
void		 dbq_reset(struct dbq *);

void		 dbq_bind_i64(struct dbq *, int i, long long v);
void		 dbq_bind_int(struct dbq *, int i, int v);
void		 dbq_bind_null(struct dbq *, int i);
void		 dbq_bind_text(struct dbq *, int i, const char *s, int len);
void		 dbq_bind_text_copy(struct dbq *, int i, const char *s,
		    int len);
void		 dbq_bind_blob(struct dbq *, int i, const void *p, int len);
/* Binds n ids as one JSON array text ("[1,2,3]"), for json_each(). */
void		 dbq_bind_ids(struct dbq *, int i, const long long *ids,
		    int n);
void		 dbq_bind_blob_copy(struct dbq *, int i, const void *p,
		    int len);

int		 dbq_step(struct dbq *);

long long	 dbq_i64(struct dbq *, int col);
int		 dbq_int(struct dbq *, int col);
const char	*dbq_text(struct dbq *, int col);
int		 dbq_is_null(struct dbq *, int col);
/* Copies text column col into dst (truncated, NUL-terminated; "" for
 * NULL). */
void		 dbq_col_text(struct dbq *, int col, char *dst, size_t sz);

/* Steps an INSERT of at most one row to its end: 1 with the new row's id
 * in *id, 0 when it inserted nothing (a conflict it ignores), -1 on an
 * error (*id 0 unless 1).  For a table whose id is its INTEGER PRIMARY KEY, and a text
 * with no RETURNING on SQLite (its last insert rowid: a RETURNING clause
 * costs SQLite a temporary table, opened and closed, every run) and
 * "RETURNING id" on PostgreSQL (sql_pg.c).  The caller hands the
 * statement back with dbq_done(). */
int		 dbq_insert_id(struct db *, struct dbq *, long long *id);
/* 1 when a statement's RETURNING clause is the cheap way to what it
 * changed (PostgreSQL: one round trip instead of two), 0 on SQLite,
 * where it costs a temporary table every run and a SELECT of the row
 * first, in the same transaction, costs a B-tree seek.  For the deletes
 * of sql.h that name their SELECT. */
int		 dbq_cheap_returning(struct db *);
/* 1 when the engine runs an action's statements as one call of a
 * function of its own (STMT_LIKE_ON_SERVER, STMT_UNLIKE_ON_SERVER:
 * PostgreSQL, where each statement is a round trip to the server), 0
 * when the caller runs them (SQLite, in process: a statement costs no
 * trip). */
int		 dbq_server_actions(struct db *);

/* About the connection's last statement: its error message, and the
 * rows the last INSERT, UPDATE or DELETE changed. */
const char	*dbq_errmsg(struct db *);
int		 dbq_changes(struct db *);
/* Steps a write to its end and hands s back (dbq_done()): the rows it
 * changed, or -1. */
int		 dbq_write(struct db *, struct dbq *s);
/* 1 inside a transaction (BEGIN not yet committed), else 0 (the
 * read-only transaction a PostgreSQL stream opened for itself is none:
 * pg.h). */
int		 dbq_in_txn(struct db *);
/* How a statement's rows reach the process.  SQLite steps each statement
 * a row at a time.  PostgreSQL sends a statement's whole result at once,
 * but for the statements the table marks to stream (sql_stream, sql.h),
 * whose rows come through a cursor, rows at a time: dbq_fetch_rows() sets
 * how many a round trip (<= 0: pg.h's PG_FETCH_ROWS); dbq_rows_held()
 * answers the most rows one result held at once since the connection
 * opened or the last reset, and -1 on SQLite. */
void		 dbq_fetch_rows(struct db *, int rows);
long		 dbq_rows_held(struct db *, int reset);

/* Statements sent ahead, for a reader's group (web/batch.h): on
 * PostgreSQL, dbq_ahead_send() sends statement q, bound, in the
 * connection's pipeline and hands it back (dbq_done()): a ticket (> 0),
 * or 0 when it cannot go ahead.  dbq_ahead_wait() reads the results of
 * every statement sent, in one wait: a round trip for the lot, not one
 * a page.  dbq_ahead_take() answers statement st holding ticket's
 * result, to step as if it ran and hand back with dbq_done() (NULL:
 * none kept, run it).  SQLite sends nothing ahead (0): its statement
 * runs in the process, no trip to save: dbq_ahead_ok() answers 0, and
 * a caller builds nothing to send. */
int		 dbq_ahead_ok(struct db *);
int		 dbq_ahead_send(struct db *, struct dbq *q);
void		 dbq_ahead_wait(struct db *);
struct dbq	*dbq_ahead_take(struct db *, enum stmt st, int ticket);

/* Whether flush batch id (decimal text) is recorded as applied:
 * 1 yes, 0 no, -1 error. */
int		 dbq_batch_applied(struct db *, const char *id);


/* The first column of statement st's first row, its ?1 bound to id,
 * into *v (0 when there is no row).  0, or -1 on an error. */
int		 dbq_i64_by_id(struct db *, enum stmt st, long long id,
		    long long *v);

/* In a write transaction: waits until no other transaction holds the
 * lock named name, and holds it to the end of this one.  For what a
 * read-modify-write needs alone that no row lock covers (a setting read
 * then written, a group found or else made).  When shared, it waits only
 * for a holder that is not, and any number of transactions hold it
 * shared at once.  PostgreSQL's writers run at once (pg.h); SQLite's
 * writer is alone, and the call costs nothing.  0, or -1 on an error. */
int		 dbq_lock_key(struct db *, const char *name, int shared);
/* Runs statement st with two integers bound (?1, ?2) to its end, its
 * rows unread: the locks a locking SELECT takes, a change of a range.
 * 0, or -1 on an error. */
int		 dbq_run_ll2(struct db *, enum stmt st, long long a, long long b);

/* Integer setting by name; dflt when absent or on error. */
long long	 dbq_setting(struct db *, const char *name, long long dflt);
/* The same into *v, telling an error from an absent setting: 0 or -1. */
int		 dbq_setting_read(struct db *, const char *name, long long dflt,
		    long long *v);
int		 dbq_setting_put(struct db *, const char *name, long long value);

#endif
