/* dbq_int.h -- a statement's engine, from inside store/.
 *
 * A struct dbq begins every engine's statement and names its engine: a
 * table of the engine's functions (SQLite's in dbq.c, PostgreSQL's in
 * pg.c: pg_engine).  dbq.h's calls go through it, so the engine is the
 * handle's, chosen when the connection opened, and a process could hold
 * one of each.
 */
#ifndef TALLY_DBQ_INT_H
#define TALLY_DBQ_INT_H

#include <stddef.h>

struct dbq;

struct dbq_engine {
	void		 (*done)(struct dbq *);		/* reset, unbind */
	void		 (*reset)(struct dbq *);	/* values stay */
	void		 (*finalize)(struct dbq *);
	/* kind: 'i' (a long long at p), 't' (text, len or -1), 'b' (a
	 * blob), 'n' (NULL); copy: p need not outlive the bind */
	void		 (*bind)(struct dbq *, int i, int kind, const void *p,
			    int len, int copy);
	int		 (*step)(struct dbq *);		/* DBQ_ROW, ... */
	long long	 (*i64)(struct dbq *, int col);
	const char	*(*text)(struct dbq *, int col);	/* or NULL */
	int		 (*is_null)(struct dbq *, int col);
	char		   ids[3];	/* an id list's brackets ("[]": JSON) */
};

struct dbq {
	const struct dbq_engine *engine;
};

#endif
