/* pg.h -- the PostgreSQL engine behind db.h and dbq.h (store/ only).
 *
 * A database named by a libpq connection string ("postgresql://...",
 * "postgres://..." or "key=value ...") is opened here instead of a
 * SQLite file; db.c and dbq.c send every call on to these functions
 * when db_is_pg().  The statement table is the same (sql.c), with the
 * PostgreSQL text of the statements whose dialects differ (sql_pg.c);
 * the rest is translated: "?N" and "?" become "$N", "INDEXED BY name"
 * (a SQLite planner hint) goes.
 *
 * A statement is prepared on its connection the first time it runs,
 * with the types of the values bound then (an integer as int8, text as
 * unknown so that the column decides, a blob as bytea), and kept for the
 * life of the connection.  A run fetches its whole result, but for the
 * statements the table marks to stream (sql_stream, sql.h: the scans of
 * whole tables), whose rows come PG_FETCH_ROWS at a time through a
 * cursor: what is prepared is "DECLARE ... CURSOR FOR" the statement,
 * and each step past the rows at hand is one FETCH.  A cursor lives in
 * the caller's transaction, or else in a read-only one of its own,
 * which ends with the last stream open in it (at its last row, or when
 * the statement is handed back); meanwhile the caller may read (other
 * statements, other streams) but not begin a transaction (refused,
 * logged) nor write (PostgreSQL refuses).  Columns come back as text.
 *
 * Writers: db_begin() opens a READ COMMITTED transaction and takes its
 * transaction id at once (before any outbox id: count/outbox.h), both
 * sent with the transaction's first statement in one round trip
 * (libpq's pipeline mode): a write is a round trip a statement and its
 * COMMIT.  A COMMIT or ROLLBACK with no statement before sends nothing;
 * anything else sends the BEGIN alone first.  Write
 * transactions run concurrently, across every process and host; two
 * that touch one row wait on its lock, and what a read-modify-write
 * needs alone it locks itself (dbq_lock_key(), dbq.h).  A bare "BEGIN"
 * (a read snapshot: cstore.c, settle.c) is
 * REPEATABLE READ.
 */
#ifndef TALLY_PG_H
#define TALLY_PG_H

#include <stddef.h>

struct pgdb;
struct pg_conn;		/* libpq's PGconn */
struct pg_result;	/* and its PGresult */
struct dbq;
struct dbq_engine;

/* A step's answer: the values of dbq.h's DBQ_ROW, DBQ_DONE and DBQ_ERR
 * (dbq.c checks), named here so that the engine needs nothing of the
 * layer that calls it. */
#define PGQ_ROW		1
#define PGQ_DONE	0
#define PGQ_ERR		(-1)

/* Rows a cursor fetches a round trip (pg_set_fetch()). */
#define PG_FETCH_ROWS	1000

/* PostgreSQL's statements as dbq.h's (dbq_int.h): what pg_stmt() and
 * pg_prepare_once() answer runs through it. */
extern const struct dbq_engine pg_engine;

/* Runs sql on connection c (any connection: pg_create_database()'s too);
 * 0, or -1 with the error in err.  A COMMIT that answered ROLLBACK is
 * an error: pg_answered(), which judges r, the answer to sql, so. */
int		 pg_answered(struct pg_result *r, const char *sql, char *err,
		    size_t errsz);
/* Brings connection c's database to the schema's last version
 * (schema_pg.c), one migrator at a time across processes and hosts;
 * 0, or -1 with the error in err.  pg_open() runs it. */
int		 pg_migrate_on(struct pg_conn *c, char *err, size_t errsz);
int		 pg_run_on(struct pg_conn *c, const char *sql, char *err,
		    size_t errsz);

/* 1 when conninfo names a PostgreSQL database rather than a file. */
int		 pg_is_url(const char *conninfo);

/* The connection (migrated to the schema's version), or NULL (logged).
 * nstmt: counted up at every statement run. */
struct pgdb	*pg_open(const char *conninfo, unsigned long long *nstmt);
void		 pg_close(struct pgdb *);
/* Runs SQL without results; PRAGMAs are SQLite's and do nothing here. */
int		 pg_exec(struct pgdb *, const char *sql);
int		 pg_begin(struct pgdb *);	/* BEGIN, its transaction id */
int		 pg_in_txn(struct pgdb *);
/* The next statement of the transaction carries its COMMIT (one round
 * trip); pg_exec("COMMIT") then only says how it went, and a statement
 * that failed leaves the transaction for pg_exec("ROLLBACK"). */
void		 pg_commit_next(struct pgdb *);
/* A savepoint in the open transaction, for one action of a group
 * commit: sent with the next statement, as BEGIN is.
 * pg_savepoint_rollback() undoes what was done since the last one, and
 * clears an error it left (nothing is sent when the savepoint was not);
 * -1 (logged) when it cannot, the savepoint never made included: each
 * has a name of its own, so a rollback never reaches an earlier
 * action's.  Kept savepoints are not released (a round trip each): the
 * group's COMMIT takes them all. */
void		 pg_savepoint(struct pgdb *);
int		 pg_savepoint_rollback(struct pgdb *);
/* 1 when the last transaction failed on a deadlock or a serialization
 * failure (run again whole, it may pass). */
int		 pg_retryable(struct pgdb *);
/* 1 when the statement that failed last waited for a lock past
 * lock_timeout (SQLSTATE 55P03). */
int		 pg_busy(struct pgdb *);
/* Forgets the last failure's SQLSTATE (a request's start: its
 * pg_busy() and pg_retryable() then speak of its own). */
void		 pg_forget_failure(struct pgdb *);
const char	*pg_errmsg(struct pgdb *);
int		 pg_changes(struct pgdb *);
/* Makes database dbname if missing, over conninfo (a superuser's).  With
 * owner: a new database belongs to that role (made when missing: it may
 * log in, and is no superuser, cannot create roles or databases), and
 * *owned tells whether dbname belongs to owner (a database made before
 * owner existed stays its maker's).  0, or -1 (logged). */
int		 pg_create_database(const char *conninfo, const char *dbname,
		    const char *owner, int *owned);

/* The translated text of sql: "$N" parameters, no SQLite hints
 * (malloc'ed). */
char		*pg_translate(const char *sql);

/* Statement id (sql), prepared once a connection and kept, read
 * through a cursor when stream (sql_stream, sql.h); or sql for one use
 * (dbq_finalize()).  Their engine is pg_engine. */
struct dbq	*pg_stmt(struct pgdb *, int id, const char *sql, int stream);
struct dbq	*pg_prepare_once(struct pgdb *, const char *sql);
/* Statement q, bound, sent ahead in the connection's pipeline with a
 * reader group's others (pg_ahead.h says how they are read): a ticket
 * (> 0), or 0 when it cannot go ahead (in a transaction, a stream,
 * PG_AHEAD_MAX sent: its page runs it).  Its bindings may then be
 * cleared (dbq_done()). */
int		 pg_ahead_send(struct dbq *);
/* Round trips to the server so far (a request's cost, /metrics). */
unsigned long long pg_ntrips(const struct pgdb *);
/* Rows a cursor fetches a round trip from now on (<= 0: PG_FETCH_ROWS). */
void		 pg_set_fetch(struct pgdb *, int rows);
/* The most rows one result held at once since the connection opened
 * or the last reset (a whole result's, or one fetch's of a stream). */
long		 pg_rows_held(struct pgdb *, int reset);

#endif
