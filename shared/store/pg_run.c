/* pg_run.c -- SQL on a bare PostgreSQL connection, as pg.c's engine,
 * pg_create.c's maintenance and the schema's migration run it (each
 * answer checked alike: pg_answered()); the schema brought up to date on
 * a new connection (pg_migrate_on()); see pg.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "base/log.h"
#include "store/pg.h"
#include "store/refold.h"
#include "store/schema.h"

#define STEP_LOCK	"'200ms'"	/* a step's wait for a lock, a try */

/* r, the answer to sql: 0, or -1 with the error in err (a COMMIT that
 * answered ROLLBACK, without an error, committed nothing). */
int
pg_answered(PGresult *r, const char *sql, char *err, size_t errsz)
{
	ExecStatusType st = PQresultStatus(r);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "%s", PQresultErrorMessage(r));
		err[strcspn(err, "\n")] = '\0';
		return -1;
	}
	if (strcmp(sql, "COMMIT") == 0 &&
	    strcmp(PQcmdStatus(r), "COMMIT") != 0) {
		snprintf(err, errsz, "COMMIT rolled back: a statement of the "
		    "transaction failed");
		return -1;
	}
	return 0;
}

int
pg_run_on(PGconn *c, const char *sql, char *err, size_t errsz)
{
	PGresult *r = PQexec(c, sql);
	int rc = pg_answered(r, sql, err, errsz);

	PQclear(r);
	return rc;
}

/* One step of the migration, inside its transaction: 0, or -1.  Its
 * table locks are waited for STEP_LOCK at a time (the transaction's
 * lock_timeout), then the step is undone to its savepoint and asked
 * again after a pause: queued, a step's exclusive lock held back every
 * reader and writer of the table behind it (a like waited its 5 s, then
 * failed) for as long as a long transaction held the table. */
static int
step_on(PGconn *c, const char *step, char *err, size_t errsz)
{
	PGresult *r;
	const char *state;
	int rc, locked, pause_ms = 50, said = 0;

	for (;;) {
		if (pg_run_on(c, "SAVEPOINT tally_step", err, errsz) == -1)
			return -1;
		r = PQexec(c, step);
		rc = pg_answered(r, step, err, errsz);
		state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
		locked = rc == -1 && state != NULL && strcmp(state, "55P03") == 0;
		PQclear(r);
		if (!locked)
			return rc;
		if (pg_run_on(c, "ROLLBACK TO SAVEPOINT tally_step", err,
		    errsz) == -1)
			return -1;
		if (!said++)
			log_warn("postgres migration: a table is held by "
			    "another transaction; asking again");
		usleep((useconds_t)pause_ms * 1000);
		if (pause_ms < 1000)
			pause_ms *= 2;
	}
}

int
pg_migrate_on(PGconn *c, char *err, size_t errsz)
{
	PGresult *r;
	char sql[96];
	int v = -1;

	/* One migrator at a time, across processes and hosts: a lock of
	 * its own ("tall" in ASCII), held to the migration's commit. */
	if (pg_run_on(c, "BEGIN", err, errsz) == -1)
		return -1;
	/* Without the session's lock_timeout (5 s, sql_pg.c): a process
	 * that waits for another's long migration waits; it failed, and the
	 * process exited and came back to fail again for as long as the
	 * other ran.  A step waits for a long reader's table lock the same,
	 * a little at a time (step_on()). */
	if (pg_run_on(c, "SET LOCAL lock_timeout = 0", err, errsz) == -1)
		goto fail;
	if (pg_run_on(c, "SELECT pg_advisory_xact_lock(1952541804)", err,
	    errsz) == -1 || pg_run_on(c, "CREATE TABLE IF NOT EXISTS "
	    "tally_schema (version INTEGER NOT NULL)", err, errsz) == -1)
		goto fail;
	r = PQexec(c, "SELECT coalesce(max(version), 0) FROM tally_schema");
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		v = (int)strtol(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	if (v == -1) {
		snprintf(err, errsz, "the schema's version not read");
		goto fail;
	}
	if (v < schema_pg_version && pg_run_on(c, "SET LOCAL lock_timeout = "
	    STEP_LOCK, err, errsz) == -1)
		goto fail;
	for (; v < schema_pg_version; v++) {
		snprintf(sql, sizeof(sql), "DELETE FROM tally_schema; "
		    "INSERT INTO tally_schema VALUES(%d)", v + 1);
		if ((strcmp(schema_pg_migrations[v], REFOLD_STEP) == 0 ?
		    refold_pg_on(c, err, errsz) :
		    step_on(c, schema_pg_migrations[v], err, errsz)) == -1 ||
		    pg_run_on(c, sql, err, errsz) == -1)
			goto fail;
		log_info("postgres schema migrated to version %d", v + 1);
	}
	return pg_run_on(c, "COMMIT", err, errsz);
fail:
	log_err("postgres migration: %s", err);
	pg_run_on(c, "ROLLBACK", sql, sizeof(sql));
	return -1;
}
