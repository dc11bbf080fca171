/* test-db-group.c -- group commit in the store layer (shared/store/db.h,
 * app.h): inside db_group_begin() each action's db_begin() .. db_commit()
 * is a savepoint that is kept, its db_rollback() drops only its own
 * changes, a db_hold() is joined as before, and an action sees what the
 * ones before it wrote; nothing is visible to another connection before
 * db_group_end().  What must follow a commit (app_after_commit()) runs at
 * once outside a group, and inside one waits for the group's end: run in
 * order, calls with the same function in a row as one call, or dropped
 * when the group rolled back.  The checks before a group read their
 * sessions in one read transaction (db_read_begin()). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "base/buf.h"
#include "store/app.h"
#include "store/db.h"
#include "tmpdb.h"

static struct tmpdb tdb;

static int
setup(void **state)
{
	(void)state;
	return tmpdb_make_t(&tdb, "group");
}

static int
teardown(void **state)
{
	(void)state;
	return tmpdb_remove(&tdb);
}

static long long
count(struct db *d, const char *where)
{
	char sql[128];
	sqlite3_stmt *s;
	long long n = -1;

	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM t WHERE %s", where);
	if (sqlite3_prepare_v2(d->h, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

/* One action: x inserted in its own transaction, kept or not. */
static void
act(struct db *d, int x, int keep)
{
	char sql[64];

	assert_int_equal(db_begin(d), 0);
	snprintf(sql, sizeof(sql), "INSERT INTO t VALUES (%d)", x);
	assert_int_equal(db_exec(d, sql), 0);
	if (keep)
		assert_int_equal(db_commit(d), 0);
	else
		db_rollback(d);
}

static void
savepoints_each_action_alone(void **state)
{
	struct db d, other;
	unsigned long long rel;

	(void)state;
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(db_open(&other, tdb.path), 0);
	db_exec(&d, "DELETE FROM t");
	assert_int_equal(db_group_begin(&d), 0);
	assert_int_equal(db_group_begin(&d), -1);	/* one at a time */
	rel = d.released;
	act(&d, 1, 1);
	act(&d, 2, 0);				/* its own change only */
	assert_int_equal(count(&d, "x = 1"), 1);	/* seen by the next */
	assert_int_equal(db_hold(&d), 0);	/* a request's hold, joined */
	act(&d, 3, 1);
	assert_int_equal(db_hold(&d), 0);	/* one nobody joined */
	db_release(&d);
	assert_int_equal(db_begin(&d), 0);	/* left open: not kept */
	assert_int_equal(db_exec(&d, "INSERT INTO t VALUES (4)"), 0);
	db_release(&d);
	assert_int_equal(d.released - rel, 2);
	assert_int_equal(count(&other, "1"), 0);	/* nothing durable yet */
	assert_int_equal(db_group_end(&d), 0);
	assert_int_equal(count(&other, "1"), 2);
	assert_int_equal(count(&other, "x IN (1, 3)"), 2);
	/* and after it, a transaction is a transaction again */
	act(&d, 5, 1);
	assert_int_equal(count(&other, "x = 5"), 1);
	db_close(&other);
	db_close(&d);
}

/* SQLite rolls a transaction back by itself on some errors (SQLITE_FULL,
 * IOERR, NOMEM): the group's transaction, and what its actions kept, are
 * gone.  The next action's SAVEPOINT then began a transaction of its
 * own, which its RELEASE committed alone, outside the group, whose COMMIT
 * then failed: the request answered that nothing was kept, and its row
 * was.  Now the action is refused and the group lost: each request runs
 * again alone (web/batch.c). */
static void
group_rolled_back_by_sqlite(void **state)
{
	struct db d, other;

	(void)state;
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(db_open(&other, tdb.path), 0);
	db_exec(&d, "DELETE FROM t");
	assert_int_equal(db_group_begin(&d), 0);
	act(&d, 1, 1);
	sqlite3_exec(d.h, "ROLLBACK", NULL, NULL, NULL);	/* as SQLite does */
	assert_int_equal(db_begin(&d), -1);
	assert_true(db_group_lost(&d));
	assert_int_equal(db_group_end(&d), -1);
	assert_int_equal(count(&other, "1"), 0);	/* nothing kept */
	assert_false(db_group_lost(&d));		/* and over */
	act(&d, 2, 1);
	assert_int_equal(count(&other, "x = 2"), 1);
	db_close(&other);
	db_close(&d);
}

/* A group's sessions are read in one read transaction: one snapshot
 * (another connection's commit in between is not seen), nothing held
 * after db_read_end(), and none opened inside a transaction. */
static void
reads_share_one_snapshot(void **state)
{
	struct db d, other;

	(void)state;
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(db_open(&other, tdb.path), 0);
	db_exec(&d, "DELETE FROM t");
	db_read_end(&d);			/* none open: nothing */
	assert_int_equal(db_read_begin(&d), 0);
	assert_int_equal(count(&d, "1"), 0);
	act(&other, 1, 1);
	assert_int_equal(count(&d, "1"), 0);	/* the snapshot it began */
	db_read_end(&d);
	assert_int_equal(count(&d, "1"), 1);
	/* the writers' lock and a group open at once after it */
	assert_int_equal(db_group_begin(&d), 0);
	assert_int_equal(db_read_begin(&d), -1);	/* not inside one */
	act(&d, 2, 1);
	assert_int_equal(db_group_end(&d), 0);
	assert_int_equal(count(&other, "1"), 2);
	db_close(&other);
	db_close(&d);
}

static char trail[64];

static void
note(struct app *a, void **args, int n)
{
	int i;

	(void)a;
	strcat(trail, "(");
	for (i = 0; i < n; i++)
		strcat(trail, args[i]);
	strcat(trail, ")");
}

static void
other(struct app *a, void **args, int n)
{
	(void)a;
	strcat(trail, n == 1 ? "[" : "?");
	strcat(trail, args[0]);
	strcat(trail, "]");
}

static void
after_commit_waits_and_batches(void **state)
{
	struct app a;
	struct db db;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.db = &db;
	assert_int_equal(db_open(a.db, tdb.path), 0);
	trail[0] = '\0';
	app_after_commit(&a, note, xstrdup("x"));	/* no group: at once */
	assert_string_equal(trail, "(x)");
	assert_int_equal(db_group_begin(a.db), 0);
	app_after_commit(&a, note, xstrdup("a"));
	app_after_commit(&a, note, xstrdup("b"));
	app_after_commit(&a, other, xstrdup("c"));
	app_after_commit(&a, note, xstrdup("d"));
	assert_string_equal(trail, "(x)");	/* the group is not durable */
	assert_int_equal(db_group_end(a.db), 0);
	app_commit_done(&a, 1);
	assert_string_equal(trail, "(x)(ab)[c](d)");
	/* a group that rolled back: nothing runs, every arg is freed */
	assert_int_equal(db_group_begin(a.db), 0);
	app_after_commit(&a, note, xstrdup("e"));
	assert_int_equal(db_group_end(a.db), 0);
	app_commit_done(&a, 0);
	assert_string_equal(trail, "(x)(ab)[c](d)");
	assert_int_equal(a.noncommit, 0);
	db_close(a.db);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(savepoints_each_action_alone),
		cmocka_unit_test(reads_share_one_snapshot),
		cmocka_unit_test(after_commit_waits_and_batches),
		cmocka_unit_test(group_rolled_back_by_sqlite),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
