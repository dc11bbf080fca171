/* test-lb-vals.c -- lb_update() (lb.h) with the values a flush batch's
 * UPSERTs returned runs no SQL, negative values included: the flusher
 * calls it on its main thread while the apply thread holds the SQLite
 * connection (opened NOMUTEX).  It once read SQLite for a negative value.
 * The connection is owned by another thread here (db_own), as in the
 * flusher, so a statement would also fail db_check_owner's assertion. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "count/counters.h"
#include "count/lb.h"
#include "store/app.h"
#include "store/rds_int.h"
#include "tmpdb.h"

static struct tmpdb tdb;

static void *
take(void *arg)
{
	db_own(arg);
	return NULL;
}

static void
test_given_values_run_no_sql(void **state)
{
	struct app a;
	struct db db;
	struct rds rds;
	struct delta ds[3] = {
		{ FAM_USER_FOLLOWERS, 7, 0, 1, 0 },
		{ FAM_USER_LIKES, 8, 0, -2, 0 },
		{ FAM_UT_RATING, 9, 3, -1, 0 },
	};
	long long vals[3] = { 5, -1, -4 };
	unsigned long long before;
	pthread_t th;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.db = &db;
	a.rds = &rds;
	assert_int_equal(tmpdb_make(&tdb, "lb"), 0);
	assert_int_equal(db_open(a.db, tdb.path), 0);
	/* Redis is not there: the boards' scripts fail fast, SQL would not */
	rds_init(a.rds, "/nonexistent/redis.sock", 100);
	assert_int_equal(pthread_create(&th, NULL, take, a.db), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	before = db_nstmt(a.db);
	lb_update(&a, ds, vals, 3);
	assert_int_equal(db_nstmt(a.db), before);
	db_disown(a.db);
	rds_close(a.rds);
	db_close(a.db);
	assert_int_equal(tmpdb_remove(&tdb), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_given_values_run_no_sql),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
