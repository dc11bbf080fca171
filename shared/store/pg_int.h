/* pg_int.h -- the PostgreSQL engine's connection and statement, from
 * inside store/ (pg.c, pg_ahead.c, pg_state.c): what the statements
 * sent ahead of a reader group's pages need of them, and what the
 * statements left to ask; pg.h is the engine's face. */
#ifndef TALLY_PG_INT_H
#define TALLY_PG_INT_H

#include <libpq-fe.h>

#include "store/dbq_int.h"
#include "store/sql.h"

/* Statements a group may send ahead (pg_ahead.h). */
#define PG_AHEAD_MAX	16

struct pgdb {
	PGconn		*c;
	struct pgq	*st[STMT__MAX];	/* the table's, prepared on use */
	char		 err[256];	/* the last error */
	char		 state[6];	/* its SQLSTATE ("" none) */
	int		 changes;	/* rows the last write changed */
	unsigned	 epoch;		/* bumped when the connection is new */
	unsigned	 seq;		/* names of once-statements */
	unsigned long long *nstmt;	/* the db's statement count */
	int		 fetch;		/* rows a cursor fetches a round trip */
	int		 streams;	/* cursors open in the read-only
					   transaction of their own */
	unsigned	 txns;		/* bumped when a transaction begins or
					   ends: a cursor ends with its own */
	long		 held;		/* the most rows one result held */
	unsigned long long trips;	/* round trips to the server */
	int		 begin_due;	/* pg_begin() called, BEGIN not yet
					   sent: it goes with the first
					   statement (pipelined()) */
	int		 commit_due;	/* COMMIT with the next statement */
	int		 save_due;	/* SAVEPOINT a<saves> before it */
	unsigned	 saves;		/* names the savepoints: each its own,
					   so that rolling back to one that
					   was never made fails */
	int		 committed;	/* how that went: 1, -1 (err); 0 */
	/* statements sent ahead (pg_ahead_send()): their results, in the
	 * order sent, kept for pg_ahead_take() until the next group */
	PGresult	*ahead[PG_AHEAD_MAX];
	struct pgq	*ahead_q[PG_AHEAD_MAX];	/* the statement of each */
	int		 nahead;	/* sent (results kept once read) */
	int		 ahead_open;	/* in pipeline mode, results not read */
	unsigned	 ahead_gen;	/* a ticket's group */
	unsigned long long taken;	/* results taken (pg_ahead_taken()) */
	int		 broken;	/* the pipeline could not be read or
					   left: pg_check_conn() connects
					   again before the next statement */
	int		 open;		/* the caller's transaction: begun,
					   not yet ended through pg_exec() */
	int		 lost;		/* its connection was lost (and made
					   again): every statement refused
					   until the caller ends it */
};

struct pgq {
	struct dbq	 q;		/* first: its engine is pg_engine */
	struct pgdb	*p;
	char		*sql;		/* translated */
	char		 name[16];
	int		 prepared;
	unsigned	 epoch;		/* of the connection it was prepared on */
	int		 once;		/* deallocated by pq_finalize() */
	int		 n;		/* parameters */
	const char	**val;
	int		*len, *fmt;
	char		*kind;		/* 'i', 't', 'b', 'n'; 0 unbound */
	char		**own;		/* copies to free */
	char		(*num)[24];	/* integers as text */
	PGresult	*res;
	int		 row, nrows, ran;
	int		 stream;	/* read through a cursor (sql_stream) */
	int		 cursor;	/* its cursor is open, */
	int		 own_txn;	/* in the streams' own transaction, */
	unsigned	 txn;		/* in transaction p->txns then */
	int		 last;		/* and its last rows are fetched */
};

/* A struct pgq as the struct dbq that begins it, and back. */
#define PQ(d)	((struct pgq *)(void *)(d))

#endif
