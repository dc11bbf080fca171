/* pglost.c -- a PostgreSQL connection lost inside a transaction
 * (store/pg.c refused()): nothing of that transaction commits.
 *
 * The server ends the session (pg_terminate_backend(), as a restart or
 * a failover would) between two statements of a transaction, and the
 * caller goes on as a careless one might: more statements, then COMMIT.
 * The engine connects again, and a statement run on the new connection
 * would be in no transaction: committed on its own.  So every statement
 * of the lost transaction fails, its COMMIT fails, its ROLLBACK passes,
 * and the next transaction runs on the new connection as usual.  The
 * same inside a group commit (db_group_begin()): the group is lost, and
 * no action after the cut commits by itself.
 *
 * Run by tests/scale/postgres.test.mjs with a stack's database URL
 * (RUN_DIR/database-url) as its argument; cmocka, TAP. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <libpq-fe.h>

#include "base/log.h"
#include "store/db.h"
#include "store/dbq.h"

#define APP	"tally-pglost"	/* tally*: kept as it is (sql_pg.c) */

static char url[4096];		/* the victim's: its application_name */
static const char *base;	/* the URL as given */
static PGconn *other;		/* the test's own eyes on the table */

/* A statement on the test's connection; its one value, or -1. */
static long long
other_ll(const char *sql)
{
	PGresult *r = PQexec(other, sql);
	long long v = -1;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	else if (PQresultStatus(r) != PGRES_COMMAND_OK)
		fprintf(stderr, "# %s: %s", sql, PQresultErrorMessage(r));
	PQclear(r);
	return v;
}

/* Ends the victim's session on the server, and waits until it is gone. */
static void
cut(void)
{
	struct timespec ms = { 0, 20 * 1000 * 1000 };
	int i;

	assert_int_equal(other_ll("SELECT COUNT(pg_terminate_backend(pid)) "
	    "FROM pg_stat_activity WHERE application_name = '" APP "'"), 1);
	for (i = 0; i < 250 && other_ll("SELECT COUNT(*) FROM "
	    "pg_stat_activity WHERE application_name = '" APP "'") != 0; i++)
		nanosleep(&ms, NULL);
	assert_int_equal(other_ll("SELECT COUNT(*) FROM pg_stat_activity "
	    "WHERE application_name = '" APP "'"), 0);
}

/* The app's kind of statement (prepared, bound): 0, or -1. */
static int
put(struct db *d, long long n)
{
	struct dbq *q = dbq_prepare_once(d,
	    "INSERT INTO pglost_rows (n) VALUES (?1)");
	int rc;

	if (q == NULL)
		return -1;
	dbq_bind_i64(q, 1, n);
	rc = dbq_step(q) == DBQ_DONE ? 0 : -1;
	dbq_finalize(q);
	return rc;
}

static long long
rows(void)
{
	return other_ll("SELECT COUNT(*) FROM pglost_rows");
}

static int
setup(void **state)
{
	*state = NULL;
	other = PQconnectdb(base);
	if (PQstatus(other) != CONNECTION_OK) {
		fprintf(stderr, "# %s", PQerrorMessage(other));
		return -1;
	}
	other_ll("CREATE TABLE IF NOT EXISTS pglost_rows (n bigint)");
	other_ll("TRUNCATE pglost_rows");
	if ((*state = db_new(url)) == NULL)
		return -1;
	return rows() == 0 ? 0 : -1;
}

static int
teardown(void **state)
{
	db_free(*state);
	other_ll("DROP TABLE IF EXISTS pglost_rows");
	PQfinish(other);
	return 0;
}

/* A transaction: what follows the cut fails, its COMMIT fails, and the
 * next transaction commits on the new connection. */
static void
test_lost_transaction(void **state)
{
	struct db *d = *state;

	assert_int_equal(db_begin(d), 0);
	assert_int_equal(put(d, 1), 0);
	cut();
	assert_int_equal(put(d, 2), -1);	/* the dead connection */
	assert_int_equal(put(d, 3), -1);	/* the new one: refused */
	assert_true(dbq_in_txn(d));		/* to be ended by its caller */
	assert_int_equal(db_commit(d), -1);
	assert_int_equal(rows(), 0);
	assert_false(dbq_in_txn(d));

	/* the next one: as ever */
	assert_int_equal(db_begin(d), 0);
	assert_int_equal(put(d, 4), 0);
	assert_int_equal(db_commit(d), 0);
	assert_int_equal(rows(), 1);

	/* cut, then at once COMMIT: the transaction's statement is gone
	 * with its connection, and the COMMIT says so */
	assert_int_equal(db_begin(d), 0);
	assert_int_equal(put(d, 5), 0);
	cut();
	assert_int_equal(put(d, 6), -1);
	assert_int_equal(db_commit(d), -1);
	assert_int_equal(rows(), 1);

	/* a ROLLBACK ends a lost one quietly */
	assert_int_equal(db_begin(d), 0);
	assert_int_equal(put(d, 7), 0);
	cut();
	assert_int_equal(put(d, 8), -1);
	assert_int_equal(put(d, 9), -1);
	db_rollback(d);
	assert_false(dbq_in_txn(d));
	assert_int_equal(db_begin(d), 0);
	assert_int_equal(put(d, 10), 0);
	assert_int_equal(db_commit(d), 0);
	assert_int_equal(rows(), 2);
}

/* A group commit: each action a savepoint; after the cut no action
 * commits on its own, and the group ends lost. */
static void
test_lost_group(void **state)
{
	struct db *d = *state;
	long long before = rows();
	int i;

	assert_int_equal(db_group_begin(d), 0);
	assert_int_equal(db_begin(d), 0);
	assert_int_equal(put(d, 11), 0);
	assert_int_equal(db_commit(d), 0);
	cut();
	for (i = 0; i < 3; i++) {	/* three more actions of the group */
		assert_int_equal(db_begin(d), 0);
		if (put(d, 12 + i) == 0 && db_commit(d) == 0)
			fail_msg("action %d after the cut committed", i);
		db_rollback(d);
	}
	assert_true(db_group_lost(d));
	assert_int_equal(db_group_end(d), -1);
	assert_int_equal(rows(), before);

	/* and the next group commits */
	assert_int_equal(db_group_begin(d), 0);
	assert_int_equal(db_begin(d), 0);
	assert_int_equal(put(d, 20), 0);
	assert_int_equal(db_commit(d), 0);
	assert_int_equal(db_group_end(d), 0);
	assert_int_equal(rows(), before + 1);
}

/* A statement outside any transaction whose connection is cut while it
 * runs: it fails, and the next caller that asks whether it is in a
 * transaction before its first statement (a counter load taking its
 * snapshot, cstore.c) is told no, begins its own, and commits it on the
 * new connection.  libpq says of a dead connection that its transaction
 * state is unknown, which is no transaction of the caller's. */
static void
test_lost_between(void **state)
{
	struct timespec ms = { 0, 300 * 1000 * 1000 };
	struct db *d = *state;
	long long before = rows();
	struct dbq *q;
	pid_t pid;
	int st;

	assert_false(dbq_in_txn(d));
	if ((pid = fork()) == 0) {	/* the cut, while the sleep runs */
		nanosleep(&ms, NULL);
		_exit(other_ll("SELECT COUNT(pg_terminate_backend(pid)) "
		    "FROM pg_stat_activity WHERE application_name = '" APP
		    "'") == 1 ? 0 : 1);
	}
	assert_true(pid > 0);
	q = dbq_prepare_once(d, "SELECT pg_sleep(3)");
	assert_non_null(q);
	assert_int_not_equal(dbq_step(q), DBQ_ROW);
	dbq_finalize(q);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_false(dbq_in_txn(d));	/* none: the caller's to begin */
	assert_int_equal(db_begin(d), 0);
	assert_true(dbq_in_txn(d));
	assert_int_equal(put(d, 30), 0);
	assert_int_equal(put(d, 31), 0);
	assert_int_equal(db_commit(d), 0);
	assert_false(dbq_in_txn(d));
	assert_int_equal(rows(), before + 2);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lost_transaction),
		cmocka_unit_test(test_lost_group),
		cmocka_unit_test(test_lost_between),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: pglost DATABASE-URL\n");
		return 2;
	}
	base = argv[1];
	snprintf(url, sizeof(url), "%s%capplication_name=" APP, base,
	    strchr(base, '?') != NULL ? '&' : '?');
	log_init("pglost");
	return cmocka_run_group_tests(tests, setup, teardown);
}
