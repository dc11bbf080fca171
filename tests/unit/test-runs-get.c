/* test-runs-get.c -- runs_get() (runs.h) on a real SQLite file: a run
 * that is there comes back whole; one that is not leaves nothing behind
 * for a caller to print (tallyctl once printed the error field of a run
 * it could not read: whatever the stack held). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "count/runs.h"
#include "store/db.h"
#include "tmpdb.h"

static struct tmpdb tdb;

static int
setup(void **state)
{
	static struct db d;

	if (tmpdb_make(&tdb, "runs") == -1 || db_open(&d, tdb.path) == -1)
		return -1;
	*state = &d;
	return 0;
}

static int
teardown(void **state)
{
	db_close(*state);
	return tmpdb_remove(&tdb);
}

static void
test_missing_run_is_blank(void **state)
{
	struct db *d = *state;
	struct run r;

	memset(&r, 0xa5, sizeof(r));	/* what an uninitialised stack holds */
	assert_int_equal(runs_get(d, 424242, &r), 0);
	assert_string_equal(r.error, "");
	assert_string_equal(r.state, "");
	assert_int_equal(r.id, 0);
}

static void
test_run_read_back(void **state)
{
	struct db *d = *state;
	long long id, active = 0;
	struct run r;

	id = runs_start(d, 1, "unit", &active);
	assert_true(id > 0);
	memset(&r, 0xa5, sizeof(r));
	assert_int_equal(runs_get(d, id, &r), 1);
	assert_int_equal(r.id, id);
	assert_string_equal(r.state, "queued");
	assert_string_equal(r.reason, "unit");
	assert_int_equal(r.dry, 1);
	assert_string_equal(r.error, "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_missing_run_is_blank),
		cmocka_unit_test(test_run_read_back),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, setup, teardown);
}
