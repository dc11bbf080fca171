/* pg_run.c -- SQL on a bare PostgreSQL connection, as pg.c's engine,
 * pg_create.c's maintenance and the schema's migration run it (each
 * answer checked alike: pg_answered()); the schema brought up to date on
 * a new connection (pg_migrate_on()); see pg.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "base/log.h"
#include "store/pg.h"
#include "store/schema.h"

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
	 * that waits for another's long migration, or a step that waits for
	 * a long reader's table lock, waits; it failed, and the process
	 * exited and came back to fail again for as long as the other ran. */
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
	for (; v < schema_pg_version; v++) {
		snprintf(sql, sizeof(sql), "DELETE FROM tally_schema; "
		    "INSERT INTO tally_schema VALUES(%d)", v + 1);
		if (pg_run_on(c, schema_pg_migrations[v], err, errsz) == -1 ||
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
