/* pg_create.c -- a PostgreSQL database and its application's role made
 * once, from a maintenance connection of its own (tally-run's DB=postgres:
 * handlers/run_pg.c); see pg.h. */
#include <stdio.h>
#include <string.h>

#include <libpq-fe.h>

#include "base/log.h"
#include "store/pg.h"

int
pg_create_database(const char *conninfo, const char *dbname,
    const char *owner, int *owned)
{
	PGconn *c = PQconnectdb(conninfo);
	PGresult *r;
	char err[256], *q = NULL, *lit = NULL, *oq = NULL, *olit = NULL;
	char sql[768];
	int rc = -1, n;

	if (owned != NULL)
		*owned = 0;
	if (PQstatus(c) != CONNECTION_OK) {
		log_err("postgres connect: %s", PQerrorMessage(c));
		goto out;
	}
	if ((lit = PQescapeLiteral(c, dbname, strlen(dbname))) == NULL ||
	    (q = PQescapeIdentifier(c, dbname, strlen(dbname))) == NULL)
		goto out;
	if (owner != NULL &&
	    ((olit = PQescapeLiteral(c, owner, strlen(owner))) == NULL ||
	    (oq = PQescapeIdentifier(c, owner, strlen(owner))) == NULL))
		goto out;
	snprintf(sql, sizeof(sql), "SELECT pg_get_userbyid(datdba) FROM "
	    "pg_database WHERE datname = %s", lit);
	r = PQexec(c, sql);
	n = PQresultStatus(r) == PGRES_TUPLES_OK ? PQntuples(r) : -1;
	if (n == 1 && owner != NULL && owned != NULL)
		*owned = strcmp(PQgetvalue(r, 0, 0), owner) == 0;
	PQclear(r);
	if (n == 1) {
		rc = 0;
		goto out;
	}
	if (n != 0) {
		log_err("postgres: %s", PQerrorMessage(c));
		goto out;
	}
	/* the application's role: logs in, owns its database, no more */
	if (owner != NULL) {
		snprintf(sql, sizeof(sql), "DO $$ BEGIN IF NOT EXISTS (SELECT 1 "
		    "FROM pg_roles WHERE rolname = %s) THEN CREATE ROLE %s LOGIN "
		    "NOSUPERUSER NOCREATEDB NOCREATEROLE; END IF; END $$", olit,
		    oq);
		if (pg_run_on(c, sql, err, sizeof(err)) == -1) {
			log_err("postgres: create role %s: %s", owner, err);
			goto out;
		}
	}
	/* C collation: text sorts by bytes, as in SQLite (the people
	 * search reads ranges of words). */
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s TEMPLATE template0 "
	    "ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'%s%s", q,
	    owner != NULL ? " OWNER " : "", owner != NULL ? oq : "");
	if (pg_run_on(c, sql, err, sizeof(err)) == -1)
		log_err("postgres: create database %s: %s", dbname, err);
	else {
		rc = 0;
		if (owned != NULL)
			*owned = owner != NULL;
	}
out:
	PQfreemem(lit);
	PQfreemem(q);
	PQfreemem(olit);
	PQfreemem(oq);
	PQfinish(c);
	return rc;
}
