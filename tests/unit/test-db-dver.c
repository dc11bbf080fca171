/* test-db-dver.c -- db_data_version() (shared/store/db.h): the version a
 * kept page is checked against (web/keep.h).  It must change with every
 * commit to the file -- another connection's, another process's, the
 * connection's own, a group's, one after a checkpoint restarted the WAL
 * -- and not with a read or a rolled-back transaction (a restart of the
 * WAL may change it: a page read again for nothing, never one kept
 * wrongly); and it is refused inside a transaction of the connection
 * (what that one sees is not yet committed). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/db.h"
#include "tmpdb.h"

static struct tmpdb tdb;

static int
setup(void **state)
{
	(void)state;
	return tmpdb_make_t(&tdb, "dver");
}

static int
teardown(void **state)
{
	(void)state;
	return tmpdb_remove(&tdb);
}

static unsigned int
dver(struct db *d)
{
	unsigned int v = 0;

	assert_int_equal(db_data_version(d, &v), 0);
	return v;
}

static void
changes_with_every_commit_and_nothing_else(void **state)
{
	struct db d, other;
	unsigned int v;
	pid_t pid;
	int st;

	(void)state;
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(db_open(&other, tdb.path), 0);
	v = dver(&d);
	assert_int_equal(dver(&d), v);			/* read again */
	assert_int_equal(db_exec(&d, "SELECT * FROM t"), 0);
	assert_int_equal(dver(&d), v);			/* a read */
	assert_int_equal(db_exec(&other, "INSERT INTO t VALUES (1)"), 0);
	assert_int_not_equal(dver(&d), v);		/* another's commit */
	v = dver(&d);
	assert_int_equal(db_begin(&d), 0);
	assert_int_equal(db_exec(&d, "INSERT INTO t VALUES (2)"), 0);
	assert_int_equal(db_data_version(&d, &(unsigned int){ 0 }), -1);
	assert_int_equal(db_commit(&d), 0);
	assert_int_not_equal(dver(&d), v);		/* its own commit */
	v = dver(&d);
	assert_int_equal(db_begin(&other), 0);
	assert_int_equal(db_exec(&other, "INSERT INTO t VALUES (3)"), 0);
	db_rollback(&other);
	assert_int_equal(dver(&d), v);			/* rolled back */
	assert_int_equal(db_group_begin(&d), 0);
	assert_int_equal(db_begin(&d), 0);
	assert_int_equal(db_exec(&d, "INSERT INTO t VALUES (4)"), 0);
	assert_int_equal(db_commit(&d), 0);
	assert_int_equal(db_group_end(&d), 0);
	assert_int_not_equal(dver(&d), v);		/* a group's commit */
	v = dver(&d);
	assert_true(db_checkpoint(&other, 0, 1) >= 0);	/* a restart */
	v = dver(&d);
	assert_int_equal(dver(&d), v);
	fflush(NULL);
	if ((pid = fork()) == 0) {			/* another process */
		struct db c;

		_exit(db_open(&c, tdb.path) == 0 &&
		    db_exec(&c, "INSERT INTO t VALUES (5)") == 0 ? 0 : 1);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_not_equal(dver(&d), v);
	db_close(&other);
	db_close(&d);
}

/* The version a connection last saw is a bound for what it reads next:
 * it moves only when the connection begins a transaction. */
static void
seen_is_the_last_transactions(void **state)
{
	struct db d, other;
	unsigned int v, seen;

	(void)state;
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(db_open(&other, tdb.path), 0);
	v = dver(&d);
	assert_int_equal(db_data_version_seen(&d, &seen), 0);
	assert_int_equal(seen, v);
	assert_int_equal(db_exec(&other, "INSERT INTO t VALUES (6)"), 0);
	assert_int_equal(db_data_version_seen(&d, &seen), 0);
	assert_int_equal(seen, v);		/* not seen yet */
	assert_int_equal(db_exec(&d, "SELECT * FROM t"), 0);
	assert_int_equal(db_data_version_seen(&d, &seen), 0);
	assert_int_not_equal(seen, v);		/* a read saw it */
	assert_int_equal(dver(&d), seen);
	db_close(&other);
	db_close(&d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(changes_with_every_commit_and_nothing_else),
		cmocka_unit_test(seen_is_the_last_transactions),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
