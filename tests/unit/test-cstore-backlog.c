/* test-cstore-backlog.c -- the SQLite backlog of counter deltas Redis did
 * not take (cstore.h), on a real database file: a settle deletes a
 * backlog row only if nothing was added to it since it read the row (its
 * version), not if its value looks the same: +1 then -1 leave the value
 * as it was, and deleting by value lost a delta that arrived after the
 * settle's snapshot.  And a row made after one was deleted never takes
 * that one's version: a settle's mark in Redis may still name it
 * (count/settle.c), and a computed counter leaves a marked row out.
 * Rows no counter takes (a family unknown, a key unreadable) are kept
 * aside by the settle, not left waiting: 500 of them hid every row
 * behind, and one kept the backlog from ever being empty; so are keys
 * that parse but not in the form this build writes them (" 12", "12x"). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count/backlog.h"
#include "count/cstore.h"
#include "store/app.h"
#include "store/dbq.h"
#include "tmpdb.h"

struct fix {
	struct app	a;
	struct db	db;
	struct tmpdb	t;
};

static int
setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	f->a.db = &f->db;
	if (tmpdb_make_t(&f->t, "backlog") == -1 ||
	    db_open(f->a.db, f->t.path) == -1)
		return -1;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fix *f = *state;

	db_close(f->a.db);
	tmpdb_remove(&f->t);
	free(f);
	return 0;
}

static long long
one(struct db *d, const char *sql)
{
	struct dbq *s = dbq_prepare_once(d, sql);
	long long v = -1;

	if (s != NULL && dbq_step(s) == DBQ_ROW)
		v = dbq_i64(s, 0);
	dbq_finalize(s);
	return v;
}

/* cstore_backlog() of post 9's likes, then STMT_BACKLOG_DONE as a
 * settle uses it. */
static int
add(struct app *a, long long delta)
{
	struct delta d = { FAM_POST_LIKES, 9, 0, delta, 0 };

	return cstore_backlog(a, &d, 1);
}

static long long
done_if(struct db *d, long long ver)
{
	struct dbq *s = dbq_stmt(d, STMT_BACKLOG_DONE);

	dbq_bind_text(s, 1, "post_likes", -1);
	dbq_bind_text(s, 2, "9", -1);
	dbq_bind_i64(s, 3, ver);
	if (dbq_step(s) != DBQ_DONE) {
		dbq_done(s);
		return -1;
	}
	dbq_done(s);
	return dbq_changes(d);
}

static void
test_backlog_row_goes_by_version(void **state)
{
	struct fix *f = *state;
	long long ver;
	const char *q = "SELECT delta FROM counter_backlog WHERE key = '9'";

	assert_int_equal(add(&f->a, 1), 0);
	ver = one(f->a.db, "SELECT ver FROM counter_backlog WHERE key = '9'");
	assert_true(ver > 0);
	/* after the settle's snapshot: +1 and -1, the value unchanged */
	assert_int_equal(add(&f->a, 1), 0);
	assert_int_equal(add(&f->a, -1), 0);
	assert_int_equal(one(f->a.db, q), 1);
	assert_int_equal(done_if(f->a.db, ver), 0);	/* kept */
	assert_int_equal(one(f->a.db, q), 1);
	ver = one(f->a.db, "SELECT ver FROM counter_backlog WHERE key = '9'");
	assert_int_equal(done_if(f->a.db, ver), 1);	/* nothing came */
	assert_int_equal(one(f->a.db, "SELECT COUNT(*) FROM counter_backlog"),
	    0);
}

static void
test_backlog_row_never_takes_an_old_version(void **state)
{
	struct fix *f = *state;
	const char *q = "SELECT ver FROM counter_backlog WHERE key = '9'";
	long long ver, i;

	/* a row many deltas long, settled (deleted), then a new one */
	for (i = 0; i < 50; i++)
		assert_int_equal(add(&f->a, 1), 0);
	ver = one(f->a.db, q);
	assert_int_equal(done_if(f->a.db, ver), 1);
	assert_int_equal(add(&f->a, 1), 0);
	assert_true(one(f->a.db, q) > ver);
}

static void
exec_ok(struct db *d, const char *sql)
{
	struct dbq *s = dbq_prepare_once(d, sql);

	assert_non_null(s);
	assert_int_equal(dbq_step(s), DBQ_DONE);
	dbq_finalize(s);
}

static void
test_backlog_rows_no_counter_takes_are_kept_aside(void **state)
{
	struct fix *f = *state;
	int n, passes = 0, total = 0;

	/* more than a settle's 500: the first 500 hid the rest */
	exec_ok(f->a.db, "WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL "
	    "SELECT n + 1 FROM i WHERE n < 400) INSERT INTO counter_backlog"
	    "(name, key, delta, ver) SELECT 'no_such_family', n, 1, n FROM i");
	exec_ok(f->a.db, "WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL "
	    "SELECT n + 1 FROM i WHERE n < 300) INSERT INTO counter_backlog"
	    "(name, key, delta, ver) SELECT 'post_likes', 'x' || n, 2, n "
	    "FROM i");
	/* a name and a key longer than any of this build's, kept whole */
	exec_ok(f->a.db, "INSERT INTO counter_backlog(name, key, delta, ver) "
	    "VALUES(printf('%.60c', 'n'), printf('%.300c', '7'), 5, 1)");
	/* keys that parse, but not as this build writes them: the settle
	 * deletes by the written form, and they stayed */
	exec_ok(f->a.db, "INSERT INTO counter_backlog(name, key, delta, ver) "
	    "VALUES('post_likes', ' 12', 1, 1), ('post_likes', '12x', 1, 1), "
	    "('user_topic_rating', '12', 1, 1), ('post_views', '12x#t', 1, 1), "
	    "('post_likes', '12#t', 1, 1)");
	assert_int_equal(backlog_waits(&f->a), 1);
	while ((n = backlog_settle(&f->a)) > 0 && passes++ < 10)
		total += n;
	assert_int_equal(n, 0);
	assert_int_equal(total, 706);
	assert_int_equal(backlog_waits(&f->a), 0);
	assert_int_equal(one(f->a.db, "SELECT COUNT(*) FROM "
	    "counter_backlog_bad WHERE found_at > 0"), 706);
	assert_int_equal(one(f->a.db, "SELECT delta FROM counter_backlog_bad "
	    "WHERE length(name) = 60 AND length(key) = 300"), 5);
	assert_int_equal(one(f->a.db, "SELECT sum(delta) FROM "
	    "counter_backlog_bad WHERE name = 'post_likes' AND key = 'x7' "
	    "AND ver = 7"), 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_backlog_row_never_takes_an_old_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backlog_row_goes_by_version,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_backlog_rows_no_counter_takes_are_kept_aside, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
