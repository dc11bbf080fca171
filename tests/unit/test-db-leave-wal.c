/* test-db-leave-wal.c -- db_leave_wal() (shared/store/db.h): what
 * `tallyctl flush` committed stays in the WAL when its connection, the
 * file's last, closes (no copy into the database then: the worker's
 * checkpoint does it), and every row is there for the next connection;
 * a connection that did not call it still copies the WAL at its close,
 * as SQLite does by default.  A database never written has no WAL to
 * sync, and that is no error. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/db.h"
#include "store/query.h"
#include "tmpdb.h"

static struct tmpdb tdb;

static int
setup(void **state)
{
	(void)state;
	return tmpdb_make_t(&tdb, "leavewal");
}

static int
teardown(void **state)
{
	(void)state;
	return tmpdb_remove(&tdb);
}

/* The WAL file's size, 0 when there is none. */
static long long
wal_size(void)
{
	char f[320];
	struct stat st;

	snprintf(f, sizeof(f), "%s-wal", tdb.path);
	return stat(f, &st) == 0 ? (long long)st.st_size : 0;
}

/* 500 rows in one transaction, no automatic checkpoint, then the close
 * (after db_leave_wal() when leave). */
static void
write_and_close(int leave)
{
	struct db d;
	int i;

	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(db_exec(&d, "PRAGMA wal_autocheckpoint = 0"), 0);
	assert_int_equal(db_begin(&d), 0);
	for (i = 0; i < 500; i++)
		assert_int_equal(db_exec(&d, "INSERT INTO t(x) VALUES (1)"), 0);
	assert_int_equal(db_commit(&d), 0);
	if (leave)
		assert_int_equal(db_leave_wal(&d), 0);
	db_close(&d);
}

static long long
rows(void)
{
	struct db d;
	struct dbq *q;
	long long n;

	assert_int_equal(db_open(&d, tdb.path), 0);
	q = db_prepare_once(&d, "SELECT COUNT(*) FROM t");
	assert_non_null(q);
	assert_int_equal(dbq_step(q), DBQ_ROW);
	n = dbq_i64(q, 0);
	dbq_finalize(q);
	db_close(&d);
	return n;
}

static void
close_leaves_the_wal_and_loses_nothing(void **state)
{
	(void)state;
	write_and_close(1);
	/* Not copied at the close: the frames are still there. */
	assert_true(wal_size() > 0);
	assert_int_equal(rows(), 500);
}

static void
without_it_the_close_copies_the_wal(void **state)
{
	(void)state;
	write_and_close(0);
	/* The last connection's close checkpointed and removed it. */
	assert_int_equal(wal_size(), 0);
	assert_int_equal(rows(), 500);
}

static void
nothing_written_is_no_error(void **state)
{
	struct db d;

	(void)state;
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(db_leave_wal(&d), 0);
	db_close(&d);
	assert_int_equal(rows(), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(close_leaves_the_wal_and_loses_nothing,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(without_it_the_close_copies_the_wal,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(nothing_written_is_no_error,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
