/* pg.c -- the PostgreSQL engine: connection, transactions; see pg.h.
 * Statements are in pg_stmt.c. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "base/log.h"
#include "store/pg.h"
#include "store/pg_int.h"
#include "store/schema.h"

int pg_engine;

int
pg_is_url(const char *s)
{
	return strncmp(s, "postgresql://", 13) == 0 ||
	    strncmp(s, "postgres://", 11) == 0 || strchr(s, '=') != NULL;
}

/* Runs sql on connection c; 0, or -1 with the error in err. */
static int
run(PGconn *c, const char *sql, char *err, size_t errsz)
{
	PGresult *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);
	int rc = 0;

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "%s", PQresultErrorMessage(r));
		err[strcspn(err, "\n")] = '\0';
		rc = -1;
	} else if (strcmp(sql, "COMMIT") == 0 &&
	    strcmp(PQcmdStatus(r), "COMMIT") != 0) {
		/* A transaction in which a statement failed answers COMMIT
		 * with ROLLBACK, and no error: nothing was committed, and
		 * the caller must not act as if it had been. */
		snprintf(err, errsz, "COMMIT rolled back: a statement of the "
		    "transaction failed");
		rc = -1;
	}
	PQclear(r);
	return rc;
}

int
pg_exec(struct pgdb *p, const char *sql)
{
	if (strncmp(sql, "PRAGMA", 6) == 0)
		return 0;		/* SQLite's knobs */
	if (strcmp(sql, "BEGIN") == 0)	/* a read snapshot */
		sql = "BEGIN ISOLATION LEVEL REPEATABLE READ";
	pg_check_conn(p);
	if (run(p->c, sql, p->err, sizeof(p->err)) == -1) {
		log_err("postgres: %s: %.60s", p->err, sql);
		return -1;
	}
	return 0;
}

int
pg_begin(struct pgdb *p)
{
	/* One round trip: BEGIN and the transaction's id, taken now so that
	 * it comes before any outbox id the transaction takes (the outbox's
	 * horizon stands on that: count/outbox.h).  No lock: writers run at
	 * once, each waiting only on the rows it shares with another. */
	pg_check_conn(p);
	p->state[0] = '\0';
	if (run(p->c, "BEGIN ISOLATION LEVEL READ COMMITTED; "
	    "SELECT pg_current_xact_id()", p->err, sizeof(p->err)) == -1) {
		log_err("postgres: begin: %s", p->err);
		if (PQtransactionStatus(p->c) != PQTRANS_IDLE)
			run(p->c, "ROLLBACK", p->err, sizeof(p->err));
		return -1;
	}
	return 0;
}

int
pg_retryable(struct pgdb *p)
{
	/* a deadlock, or a serialization failure: the transaction was
	 * rolled back whole, and the same one again may well pass */
	return strcmp(p->state, "40P01") == 0 || strcmp(p->state, "40001") == 0;
}

int
pg_in_txn(struct pgdb *p)
{
	return PQtransactionStatus(p->c) != PQTRANS_IDLE;
}

const char *
pg_errmsg(struct pgdb *p)
{
	return p->err;
}

int
pg_changes(struct pgdb *p)
{
	return p->changes;
}

/* The schema's version: the table tally_schema holds it. */
static int
version(struct pgdb *p)
{
	PGresult *r;
	int v = -1;

	if (run(p->c, "CREATE TABLE IF NOT EXISTS tally_schema "
	    "(version INTEGER NOT NULL)", p->err, sizeof(p->err)) == -1)
		return -1;
	r = PQexec(p->c, "SELECT coalesce(max(version), 0) FROM tally_schema");
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		v = (int)strtol(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return v;
}

static int
migrate(struct pgdb *p)
{
	char sql[96];
	int v;

	/* One migrator at a time, across processes and hosts: a lock of
	 * its own ("tall" in ASCII), held to the migration's commit. */
	if (pg_begin(p) == -1)
		return -1;
	if (run(p->c, "SELECT pg_advisory_xact_lock(1952541804)", p->err,
	    sizeof(p->err)) == -1)
		goto fail;
	if ((v = version(p)) == -1)
		goto fail;
	for (; v < schema_pg_version; v++) {
		if (pg_exec(p, schema_pg_migrations[v]) == -1)
			goto fail;
		snprintf(sql, sizeof(sql), "DELETE FROM tally_schema; "
		    "INSERT INTO tally_schema VALUES(%d)", v + 1);
		if (pg_exec(p, sql) == -1)
			goto fail;
		log_info("postgres schema migrated to version %d", v + 1);
	}
	return pg_exec(p, "COMMIT");
fail:
	log_err("postgres migration: %s", p->err);
	pg_exec(p, "ROLLBACK");
	return -1;
}

/* Once a connection was lost (the server restarted), connects again;
 * its prepared statements went with it.  Outside a transaction it first
 * reads what the server sent meanwhile: a connection the server ended
 * while it sat idle (a restart, a backend terminated) holds its last
 * words (a FATAL notice) and then its end, and libpq marks it bad only
 * once it reads that end; so it reads while there is something to read,
 * and the statement goes out on a new connection instead of failing on
 * the old one.  One poll() a statement outside a transaction (nothing to
 * read, the usual case); none inside one. */
void
pg_check_conn(struct pgdb *p)
{
	struct pollfd pfd;
	int i;

	for (i = 0; i < 4 && PQstatus(p->c) == CONNECTION_OK &&
	    PQtransactionStatus(p->c) == PQTRANS_IDLE; i++) {
		pfd.fd = PQsocket(p->c);
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 0) <= 0 || !PQconsumeInput(p->c))
			break;
	}
	if (PQstatus(p->c) == CONNECTION_OK)
		return;
	PQreset(p->c);
	if (PQstatus(p->c) != CONNECTION_OK)
		return;
	log_warn("postgres: connected again");
	p->epoch++;	/* every statement prepares again */
	run(p->c, "SET lock_timeout = 5000", p->err, sizeof(p->err));
}

struct pgdb *
pg_open(const char *conninfo, unsigned long long *nstmt)
{
	struct pgdb *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	pg_engine = 1;
	p->nstmt = nstmt;
	p->c = PQconnectdb(conninfo);
	if (PQstatus(p->c) != CONNECTION_OK) {
		log_err("postgres connect: %s", PQerrorMessage(p->c));
		pg_close(p);
		return NULL;
	}
	/* A writer that waits longer than SQLite's busy timeout fails. */
	if (run(p->c, "SET lock_timeout = 5000; "
	    "SET client_min_messages = warning", p->err, sizeof(p->err)) == -1 ||
	    migrate(p) == -1) {
		log_err("postgres: %s", p->err);
		pg_close(p);
		return NULL;
	}
	return p;
}

void
pg_close(struct pgdb *p)
{
	int i;

	if (p == NULL)
		return;
	for (i = 0; i < STMT__MAX; i++)
		if (p->st[i] != NULL)
			pgq_free(p->st[i]);
	PQfinish(p->c);
	free(p);
}

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
		if (run(c, sql, err, sizeof(err)) == -1) {
			log_err("postgres: create role %s: %s", owner, err);
			goto out;
		}
	}
	/* C collation: text sorts by bytes, as in SQLite (the people
	 * search reads ranges of words). */
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s TEMPLATE template0 "
	    "ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'%s%s", q,
	    owner != NULL ? " OWNER " : "", owner != NULL ? oq : "");
	if (run(c, sql, err, sizeof(err)) == -1)
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
