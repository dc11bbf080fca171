/* pg_int.h -- what pg.c and pg_stmt.c share (nothing outside them). */
#ifndef TALLY_PG_INT_H
#define TALLY_PG_INT_H

#include <libpq-fe.h>

#include "store/sql.h"

struct pgdb {
	PGconn		*c;
	struct pgq	*st[STMT__MAX];	/* the table's, prepared on use */
	char		 err[256];	/* the last error */
	char		 state[6];	/* its SQLSTATE ("" none) */
	int		 changes;	/* rows the last write changed */
	unsigned	 epoch;		/* bumped when the connection is new */
	unsigned	 seq;		/* names of once-statements */
	unsigned long long *nstmt;	/* the db's statement count */
};

struct pgq {
	struct pgdb	*p;
	char		*sql;		/* translated */
	char		 name[16];
	int		 prepared;
	unsigned	 epoch;		/* of the connection it was prepared on */
	int		 once;		/* deallocated by pgq_finalize() */
	int		 n;		/* parameters */
	const char	**val;
	int		*len, *fmt;
	char		*kind;		/* 'i', 't', 'b', 'n'; 0 unbound */
	char		**own;		/* copies to free */
	char		(*num)[24];	/* integers as text */
	PGresult	*res;
	int		 row, nrows, ran;
};

void	pg_check_conn(struct pgdb *);
void	pgq_free(struct pgq *);

#endif
