/* test-db-reads.c -- db_reads_together() (shared/store/db.h): a reader's
 * requests read in one transaction.  Its reads see one snapshot, taken by
 * the first of them; its end lets the next see what was committed since;
 * a statement that writes ends it first, and lands at once; so does every
 * transaction of the connection's own (a write, a snapshot, a group's
 * read), not a rollback of none; the data version inside is the snapshot's; its BEGIN and COMMIT
 * are not counted among the statements; switched off, each statement is
 * its own transaction again.  db_read_begin() refused inside another's
 * transaction leaves it to its owner at db_read_end(); a db_hold() whose
 * transaction ended before the join is no join, nor a new write. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/dbq.h"
#include "tmpdb.h"

static struct tmpdb tdb;

static int
setup(void **state)
{
	(void)state;
	return tmpdb_make_t(&tdb, "reads");
}

static int
teardown(void **state)
{
	(void)state;
	return tmpdb_remove(&tdb);
}

/* The setting's value as d reads it now ("" when there is none). */
static const char *
get(struct db *d)
{
	static char v[64];
	struct dbq *s = dbq_stmt(d, STMT_SETTING_GET);

	assert_non_null(s);
	dbq_bind_text(s, 1, "k", -1);
	v[0] = '\0';
	if (dbq_step(s) == DBQ_ROW)
		dbq_col_text(s, 0, v, sizeof(v));
	dbq_done(s);
	return v;
}

static void
put(struct db *d, const char *v)
{
	struct dbq *s = dbq_stmt(d, STMT_SETTING_PUT);

	assert_non_null(s);
	dbq_bind_text(s, 1, "k", -1);
	dbq_bind_text(s, 2, v, -1);
	assert_int_equal(dbq_step(s), DBQ_DONE);
	dbq_done(s);
}

static void
one_snapshot_until_the_end(void **state)
{
	struct db d, other;
	unsigned long long n;

	(void)state;
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(db_open(&other, tdb.path), 0);
	put(&other, "1");
	db_reads_together(&d, 1);
	n = db_nstmt(&d);
	assert_string_equal(get(&d), "1");
	put(&other, "2");
	assert_string_equal(get(&d), "1");	/* the snapshot of the first */
	assert_int_equal(db_nstmt(&d), n + 2);	/* no BEGIN counted */
	db_reads_end(&d);
	assert_int_equal(db_nstmt(&d), n + 2);	/* nor its COMMIT */
	assert_string_equal(get(&d), "2");	/* a new one */
	db_reads_end(&d);
	db_reads_end(&d);			/* none open: nothing */
	db_reads_together(&d, 0);
	assert_string_equal(get(&d), "2");
	put(&other, "3");
	assert_string_equal(get(&d), "3");	/* each its own again */
	db_close(&other);
	db_close(&d);
}

static void
a_write_ends_it_first(void **state)
{
	struct db d, other;

	(void)state;
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(db_open(&other, tdb.path), 0);
	put(&other, "a");
	db_reads_together(&d, 1);
	assert_string_equal(get(&d), "a");
	put(&other, "b");
	put(&d, "c");				/* not in the snapshot: lands */
	assert_string_equal(get(&other), "c");
	assert_string_equal(get(&d), "c");	/* the reads after see it */
	put(&other, "d");
	assert_string_equal(get(&d), "c");	/* and share a snapshot again */
	/* a write transaction of its own */
	assert_int_equal(db_begin(&d), 0);
	assert_string_equal(get(&d), "d");
	put(&d, "e");
	assert_int_equal(db_commit(&d), 0);
	assert_string_equal(get(&other), "e");
	assert_string_equal(get(&d), "e");
	/* a snapshot of its own, and a group's read transaction */
	put(&other, "f");
	assert_int_equal(db_snapshot_begin(&d), 0);
	assert_string_equal(get(&d), "f");
	assert_int_equal(db_snapshot_end(&d, 0), 0);
	assert_string_equal(get(&d), "f");
	put(&other, "g");
	assert_int_equal(db_read_begin(&d), 0);
	assert_string_equal(get(&d), "g");
	db_read_end(&d);
	/* dbq_in_txn(): it is no transaction of the caller's */
	assert_string_equal(get(&d), "g");
	assert_int_equal(dbq_in_txn(&d), 0);
	/* a rollback of nothing of the caller's (db_release()) leaves it */
	assert_string_equal(get(&d), "g");
	put(&other, "h");
	db_release(&d);
	assert_string_equal(get(&d), "g");
	db_reads_end(&d);
	assert_string_equal(get(&d), "h");
	db_reads_end(&d);
	db_close(&other);
	db_close(&d);
}

static void
the_data_version_is_the_snapshots(void **state)
{
	struct db d, other;
	unsigned int v, w;

	(void)state;
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(db_open(&other, tdb.path), 0);
	db_reads_together(&d, 1);
	assert_int_equal(db_data_version(&d, &v), 0);	/* opens it */
	put(&other, "x");
	assert_int_equal(db_data_version(&d, &w), 0);
	assert_int_equal(w, v);
	assert_int_equal(db_data_version_seen(&d, &w), 0);
	assert_int_equal(w, v);
	assert_string_equal(get(&d), "h");	/* the read agrees with it */
	db_reads_end(&d);
	assert_int_equal(db_data_version(&d, &w), 0);
	assert_int_not_equal(w, v);		/* the commit, after */
	assert_string_equal(get(&d), "x");
	db_reads_end(&d);
	db_close(&other);
	db_close(&d);
}

/* db_read_begin() refused (a write transaction is open): db_read_end()
 * does not commit the write half done. */
static void
read_end_leaves_anothers_transaction(void **state)
{
	struct db d, other;

	(void)state;
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(db_open(&other, tdb.path), 0);
	put(&other, "before");
	assert_int_equal(db_begin(&d), 0);
	put(&d, "half");
	assert_int_equal(db_read_begin(&d), -1);
	db_read_end(&d);
	db_rollback(&d);
	assert_string_equal(get(&other), "before");
	assert_int_equal(db_read_begin(&d), 0);	/* its own: ended */
	assert_string_equal(get(&d), "before");
	db_read_end(&d);
	assert_int_equal(db_begin(&other), 0);	/* nothing left open */
	db_rollback(&other);
	db_close(&other);
	db_close(&d);
}

/* The transaction db_hold() opened ended before db_begin() (SQLite's own
 * rollback, as after SQLITE_FULL): db_begin() fails, rather than write
 * in a new transaction, or in a later read's, what was decided on reads
 * under the old one; the writers' lock goes with the rollback. */
static void
a_lost_hold_is_no_join(void **state)
{
	struct db d, other;

	(void)state;
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(db_open(&other, tdb.path), 0);
	put(&other, "before");
	assert_int_equal(db_hold(&d), 0);
	assert_string_equal(get(&d), "before");
	assert_int_equal(db_exec(&d, "ROLLBACK"), 0);	/* SQLite's own */
	assert_int_equal(db_begin(&d), -1);
	db_release(&d);
	assert_int_equal(db_begin(&other), 0);	/* the lock was let go */
	db_rollback(&other);

	db_reads_together(&d, 1);	/* a later read opens one */
	assert_int_equal(db_hold(&d), 0);
	assert_int_equal(db_exec(&d, "ROLLBACK"), 0);
	assert_string_equal(get(&d), "before");
	assert_int_equal(db_begin(&d), -1);
	db_release(&d);
	db_reads_end(&d);
	assert_int_equal(db_hold(&d), 0);	/* a hold kept is joined */
	assert_int_equal(db_begin(&d), 0);
	put(&d, "after");
	assert_int_equal(db_commit(&d), 0);
	assert_string_equal(get(&other), "after");
	db_reads_together(&d, 0);
	db_close(&other);
	db_close(&d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_snapshot_until_the_end),
		cmocka_unit_test(a_write_ends_it_first),
		cmocka_unit_test(the_data_version_is_the_snapshots),
		cmocka_unit_test(read_end_leaves_anothers_transaction),
		cmocka_unit_test(a_lost_hold_is_no_join),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
