/* test-db-insert-id.c -- dbq_insert_id() (shared/store/dbq.h) on a real
 * SQLite file: an insert's new id from the last insert rowid, 0 for an
 * insert a conflict turned into nothing (and no stale id from the insert
 * before it), -1 for an error; and a like's insert, with no result row,
 * told new or not by dbq_changes(). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "store/db.h"
#include "store/dbq.h"
#include "tmpdb.h"

static struct tmpdb tdb;
static struct db d;

static int
setup(void **state)
{
	(void)state;
	/* db_open() makes the schema */
	return tmpdb_make(&tdb, "insert-id") == -1 ||
	    db_open(&d, tdb.path) == -1 ? -1 : 0;
}

static int
teardown(void **state)
{
	(void)state;
	db_close(&d);
	return tmpdb_remove(&tdb);
}

/* One outbox row: dbq_insert_id()'s result, its id in *id. */
static int
outbox_row(long long at, long long *id)
{
	struct dbq *s = dbq_stmt(&d, STMT_OUTBOX_ADD);
	int rc;

	assert_non_null(s);
	dbq_bind_i64(s, 1, at);
	dbq_bind_text(s, 2, "1:2:3:4", -1);
	rc = dbq_insert_id(&d, s, id);
	dbq_done(s);
	return rc;
}

static void
test_new_rows_ids(void **state)
{
	struct dbq *s;
	long long a, b, v;

	(void)state;
	assert_int_equal(outbox_row(10, &a), 1);
	assert_int_equal(outbox_row(11, &b), 1);
	assert_true(a > 0);
	assert_int_equal(b, a + 1);
	/* the id is the row's: the table holds it at that time */
	s = dbq_prepare_once(&d, "SELECT at FROM counter_outbox WHERE id = ?1");
	assert_non_null(s);
	dbq_bind_i64(s, 1, b);
	assert_int_equal(dbq_step(s), DBQ_ROW);
	v = dbq_i64(s, 0);
	dbq_finalize(s);
	assert_int_equal(v, 11);
}

static void
test_nothing_inserted_is_zero(void **state)
{
	struct dbq *s;
	long long a, id = -5;

	(void)state;
	assert_int_equal(outbox_row(20, &a), 1);
	s = dbq_prepare_once(&d, "INSERT INTO counter_outbox(id, at, deltas) "
	    "VALUES(?1, 0, '') ON CONFLICT DO NOTHING");
	assert_non_null(s);
	dbq_bind_i64(s, 1, a);
	assert_int_equal(dbq_insert_id(&d, s, &id), 0);
	assert_int_equal(id, 0);		/* not the row before's */
	dbq_finalize(s);
}

static void
test_error_is_minus_one(void **state)
{
	struct dbq *s;
	long long id = -5;

	(void)state;
	/* deltas is NOT NULL */
	s = dbq_prepare_once(&d, "INSERT INTO counter_outbox(at, deltas) "
	    "VALUES(1, NULL)");
	assert_non_null(s);
	assert_int_equal(dbq_insert_id(&d, s, &id), -1);
	assert_int_equal(id, 0);
	dbq_finalize(s);
}

static void
test_like_insert_changes(void **state)
{
	struct dbq *s;
	int i;

	(void)state;
	assert_int_equal(db_exec(&d, "INSERT INTO users(id, login, name, "
	    "pwhash, created_at) VALUES(1, 'ann', 'Ann', 'x', 0);"
	    "INSERT INTO posts(id, user_id, topic_id, body, status, "
	    "created_at, published_at, updated_at, like_count) "
	    "VALUES(1, 1, 1, 'hi', 1, 0, 0, 0, 0)"), 0);
	for (i = 0; i < 2; i++) {	/* new, then already there */
		s = dbq_stmt(&d, STMT_LIKE_INSERT);
		assert_non_null(s);
		dbq_bind_i64(s, 1, 1);
		dbq_bind_i64(s, 2, 1);
		dbq_bind_i64(s, 3, 5);
		assert_int_equal(dbq_step(s), DBQ_DONE);
		dbq_done(s);
		assert_int_equal(dbq_changes(&d), i == 0 ? 1 : 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_rows_ids),
		cmocka_unit_test(test_nothing_inserted_is_zero),
		cmocka_unit_test(test_error_is_minus_one),
		cmocka_unit_test(test_like_insert_changes),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, setup, teardown);
}
