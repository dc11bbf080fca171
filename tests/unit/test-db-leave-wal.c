/* test-db-leave-wal.c -- db_leave_wal() (shared/store/db.h): what
 * `tallyctl flush` committed stays in the WAL when its connection, the
 * file's last, closes (no copy into the database then: the worker's
 * checkpoint does it), and every row is there for the next connection;
 * a connection that did not call it still copies the WAL at its close,
 * as SQLite does by default.  A database never written has no WAL to
 * sync, and that is no error.  db_wal_writeback() and db_wal_sync() (the
 * flusher's, from a thread that does not own the connection) use the
 * WAL's own file, and keep it across a checkpoint that truncates it. */
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

#include <pthread.h>

#include "store/db.h"
#include "store/dbq.h"
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
	q = dbq_prepare_once(&d, "SELECT COUNT(*) FROM t");
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

/* The file the connection's WAL descriptor names, "" when none. */
static void
wal_fd_name(const struct db *d, char *out, size_t sz)
{
	char link[64];
	ssize_t n = -1;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", d->wal_fd);
	if (d->wal_fd > 0)
		n = readlink(link, out, sz - 1);
	out[n > 0 ? n : 0] = '\0';
}

static void *
sync_beside(void *arg)
{
	struct db *d = arg;

	db_wal_writeback(d);
	return (void *)(long)db_wal_sync(d);
}

static void
wal_synced_from_another_thread(void **state)
{
	char want[340], got[512];
	struct db d;
	pthread_t th;
	void *rc;
	int i;

	(void)state;
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(db_exec(&d, "PRAGMA wal_autocheckpoint = 0"), 0);
	/* nothing committed yet: nothing to sync, no error */
	assert_int_equal(db_wal_sync(&d), 0);
	assert_int_equal(db_begin(&d), 0);
	for (i = 0; i < 100; i++)
		assert_int_equal(db_exec(&d, "INSERT INTO t(x) VALUES (1)"), 0);
	assert_int_equal(db_commit(&d), 0);
	/* the connection this thread's; the sync on another */
	db_own(&d);
	assert_int_equal(pthread_create(&th, NULL, sync_beside, &d), 0);
	assert_int_equal(db_exec(&d, "INSERT INTO t(x) VALUES (2)"), 0);
	assert_int_equal(pthread_join(th, &rc), 0);
	db_disown(&d);
	assert_null(rc);
	snprintf(want, sizeof(want), "%s-wal", tdb.path);
	wal_fd_name(&d, got, sizeof(got));
	assert_string_equal(got, want);
	/* a checkpoint that truncates the WAL: the same file, still synced */
	assert_int_equal(db_checkpoint(&d, 0, 1), 0);
	assert_int_equal(db_exec(&d, "INSERT INTO t(x) VALUES (3)"), 0);
	assert_int_equal(db_wal_sync(&d), 0);
	wal_fd_name(&d, got, sizeof(got));
	assert_string_equal(got, want);
	assert_true(wal_size() > 0);
	db_close(&d);
	assert_int_equal(rows(), 102);
}

static void
in_memory_nothing_to_sync(void **state)
{
	struct db d;

	(void)state;
	assert_int_equal(db_open(&d, ":memory:"), 0);
	assert_int_equal(db_exec(&d, "CREATE TABLE m(x)"), 0);
	db_wal_writeback(&d);
	assert_int_equal(db_wal_sync(&d), 0);
	assert_int_equal(db_leave_wal(&d), 0);
	db_close(&d);
	/* and no writers' lock file named after it */
	assert_int_equal(access(":memory:-wlock", F_OK), -1);
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
		cmocka_unit_test_setup_teardown(wal_synced_from_another_thread,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(in_memory_nothing_to_sync,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
