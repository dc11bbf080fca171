/* test-account-lockout.c -- the login lock counts failures within any
 * 15 minutes (social/account.h), on a real SQLite file and with the
 * clock given.
 *
 * The lock was on a window that began at the account's first failure and
 * started over when it ended: one failure, 8 near the window's end and
 * 10 just after it were 19 guesses in a few seconds, never locked.  Now
 * the newest 10 failures' times are kept and the lock holds while the
 * oldest of them is under 15 minutes old.  A row written before the
 * times were kept still locks; a login nobody has keeps no row. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "base/auth.h"
#include "social/account.h"
#include "store/dbq.h"
#include "tmpdb.h"

#define MIN	(60 * 1000LL)
#define T0	1700000000000LL

static struct tmpdb tdb;

static int
setup(void **state)
{
	struct db *d;

	if (auth_init() != 0 || tmpdb_make_t(&tdb, "lockout") == -1 ||
	    (d = db_new(tdb.path)) == NULL)
		return -1;
	*state = d;
	return account_create(d, "victim", "Victim", "password-123", 12, 0,
	    1) > 0 ? 0 : -1;
}

static int
teardown(void **state)
{
	db_free(*state);
	return tmpdb_remove(&tdb);
}

static void
fail_at(struct db *d, long long now, int times)
{
	while (times-- > 0)
		assert_int_equal(account_login_result(d, "victim", 0, now), 0);
}

static void
test_no_fresh_window(void **state)
{
	struct db *d = *state;
	long long t = T0 + 15 * MIN + 1000;

	fail_at(d, T0, 1);
	fail_at(d, T0 + 14 * MIN, 8);
	assert_int_equal(account_throttled(d, "victim", T0 + 14 * MIN), 0);
	/* the first failure is past: 8 within the window, then 2 more */
	fail_at(d, t, 1);
	assert_int_equal(account_throttled(d, "victim", t), 0);
	fail_at(d, t, 1);
	/* refused until the oldest of the ten, at 14 minutes, is 15 old */
	assert_int_equal(account_throttled(d, "victim", t),
	    T0 + 29 * MIN - t);
	assert_int_equal(account_throttled(d, "victim", T0 + 29 * MIN - 1), 1);
	assert_int_equal(account_throttled(d, "victim", T0 + 29 * MIN), 0);
	/* a success clears them */
	assert_int_equal(account_login_result(d, "victim", 1, t), 0);
	assert_int_equal(account_throttled(d, "victim", t), 0);
}

static void
test_ten_at_once_then_one_more(void **state)
{
	struct db *d = *state;

	fail_at(d, T0, 10);
	assert_int_equal(account_throttled(d, "victim", T0 + 1), 15 * MIN - 1);
	/* one more (a device cookie's owner passes the lock): ten kept,
	 * the oldest still one of the first */
	fail_at(d, T0 + MIN, 1);
	assert_int_equal(account_throttled(d, "victim", T0 + 14 * MIN), MIN);
	assert_int_equal(account_throttled(d, "victim", T0 + 15 * MIN), 0);
	/* the first nine past, one more: two within the window */
	fail_at(d, T0 + 15 * MIN, 1);
	assert_int_equal(account_throttled(d, "victim", T0 + 15 * MIN), 0);
	fail_at(d, T0 + 15 * MIN, 8);
	assert_int_equal(account_throttled(d, "victim", T0 + 15 * MIN),
	    MIN);
}

static void
test_row_from_before(void **state)
{
	struct db *d = *state;

	assert_int_equal(db_exec(d, "INSERT INTO login_failures(login, since, "
	    "failures) VALUES('victim', 1700000000000, 10)"), 0);
	assert_int_equal(account_throttled(d, "victim", T0 + MIN),
	    14 * MIN);
	/* its ten failures taken as at its start: still locked as long */
	fail_at(d, T0 + MIN, 1);
	assert_int_equal(account_throttled(d, "victim", T0 + 2 * MIN),
	    13 * MIN);
	assert_int_equal(account_throttled(d, "victim", T0 + 15 * MIN), 0);
}

static void
test_nobody(void **state)
{
	struct db *d = *state;
	struct dbq *s;

	assert_int_equal(account_login_result(d, "ghost", 0, T0), 0);
	assert_int_equal(account_throttled(d, "ghost", T0), 0);
	s = dbq_stmt(d, STMT_LOGIN_FAIL_GET);
	assert_non_null(s);
	dbq_bind_text(s, 1, "ghost", -1);
	assert_int_equal(dbq_step(s), DBQ_DONE);
	dbq_done(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_fresh_window, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_ten_at_once_then_one_more,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_row_from_before, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_nobody, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
