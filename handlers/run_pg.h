/* run_pg.h -- tally-run's local PostgreSQL server (DB=postgres). */
#ifndef TALLY_RUN_PG_H
#define TALLY_RUN_PG_H

#include <sys/types.h>

#include "base/cfg.h"
#include "base/supervise.h"

/* 1 when make run asked for DB=postgres. */
int	run_pg_wanted(void);

/* Makes the server's cluster under $RUN_DIR/pg once (initdb), starts the
 * server as service s (supervise_init() done), waits until it answers,
 * makes the database, writes $RUN_DIR/database-url and points TALLY_DB
 * and c->db_path at it.  0, or -1 (logged). */
int	run_pg_start(struct svc *s, struct cfg *c);

/* A run on SQLite: a database-url left by an earlier run goes. */
void	run_pg_none(const struct cfg *c);

/* As root: run initdb and the server as this user (the stack's own,
 * run_user.h), not as "postgres" (0: as before). */
void	run_pg_user(uid_t uid, gid_t gid);

#endif
