/* test-rebuild-lock.c -- one rebuilder at a time (store/rebuild.h), on a
 * real redis-server: a rebuilder whose lock lapsed (a stall longer than
 * the lock) and was taken by another neither marks the other's
 * half-built structure whole, nor drops its marker, nor frees its lock;
 * the holder's own end does each.  Before the lock carried its holder's
 * token, the late one's end set the marker "1" over the other's cleared
 * and refilling set (readers took it whole) and freed the lock for a
 * third rebuild to clear the set again.  Nor does a rebuild whose marker
 * was dropped meanwhile mark its set whole. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <sodium.h>

#include "store/rds.h"
#include "store/rds_int.h"
#include "store/rebuild.h"
#include "tmpredis.h"

#define fix tmpredis_fix

#define LOCK	"{t}:lock"
#define OK	"{t}:ok"
#define SET	"{t}:set"

static int
setup(void **state)
{
	if (sodium_init() < 0)
		return -1;
	return tmpredis_setup(state, "rebuildlock");
}

static int
teardown(void **state)
{
	return tmpredis_teardown(state);
}

/* GET key into out ("" when absent). */
static const char *
get(struct fix *f, const char *key, char *out, size_t sz)
{
	rds_reply *r = rds_cmdv(&f->rds, "GET", key, NULL);

	assert_non_null(r);
	snprintf(out, sz, "%s", r->type == RDS_STRING ? r->str : "");
	rds_free(r);
	return out;
}

static void
ms_sleep(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

static int
begin(struct fix *f, int ms, char *tok)
{
	const char *clear[1] = { SET };

	return rebuild_begin(&f->rds, LOCK, ms, OK, clear, 1, tok);
}

/* A late rebuilder's done: nothing of the new holder's is touched. */
static void
test_lapsed_done_leaves_the_new_holder(void **state)
{
	struct fix *f = *state;
	char a[REBUILD_TOKEN], b[REBUILD_TOKEN], c[REBUILD_TOKEN], v[64];

	assert_int_equal(begin(f, 100, a), 1);
	assert_int_equal(begin(f, 100, c), 0);	/* held */
	ms_sleep(150);				/* a's lock lapses */
	assert_int_equal(begin(f, 10000, b), 1);
	assert_string_not_equal(a, b);
	assert_string_equal(get(f, OK, v, sizeof(v)), "b");
	rds_free(rds_cmdv(&f->rds, "ZADD", SET, "1", "m1", NULL));

	/* a ends late: refused, and b's rebuild stands as it was */
	assert_int_equal(rebuild_done(&f->rds, LOCK, OK, a), -1);
	assert_string_equal(get(f, OK, v, sizeof(v)), "b");
	assert_string_equal(get(f, LOCK, v, sizeof(v)), b);
	assert_int_equal(begin(f, 10000, c), 0);	/* still b's */

	/* b ends: whole, and the lock free */
	assert_int_equal(rebuild_done(&f->rds, LOCK, OK, b), 0);
	assert_string_equal(get(f, OK, v, sizeof(v)), "1");
	assert_string_equal(get(f, LOCK, v, sizeof(v)), "");
}

/* A late rebuilder's failure: the new holder's marker and lock stay. */
static void
test_lapsed_fail_leaves_the_new_holder(void **state)
{
	struct fix *f = *state;
	char a[REBUILD_TOKEN], b[REBUILD_TOKEN], v[64];

	assert_int_equal(begin(f, 100, a), 1);
	ms_sleep(150);
	assert_int_equal(begin(f, 10000, b), 1);
	rebuild_fail(&f->rds, LOCK, OK, a);
	assert_string_equal(get(f, OK, v, sizeof(v)), "b");
	assert_string_equal(get(f, LOCK, v, sizeof(v)), b);

	/* the holder's own failure drops both */
	rebuild_fail(&f->rds, LOCK, OK, b);
	assert_string_equal(get(f, OK, v, sizeof(v)), "");
	assert_string_equal(get(f, LOCK, v, sizeof(v)), "");
}

/* The marker dropped while the rebuild ran (tlstale.h: every timeline's
 * marker dropped after a change Redis missed; a post's fan-out then
 * skipped this set): the rebuild does not mark it whole, and frees its
 * lock for the next. */
static void
test_marker_dropped_meanwhile(void **state)
{
	struct fix *f = *state;
	char a[REBUILD_TOKEN], b[REBUILD_TOKEN], v[64];

	assert_int_equal(begin(f, 10000, a), 1);
	rds_free(rds_cmdv(&f->rds, "DEL", OK, NULL));
	assert_int_equal(rebuild_done(&f->rds, LOCK, OK, a), -1);
	assert_string_equal(get(f, OK, v, sizeof(v)), "");
	assert_string_equal(get(f, LOCK, v, sizeof(v)), "");
	assert_int_equal(begin(f, 10000, b), 1);	/* the next one's */
	assert_int_equal(rebuild_done(&f->rds, LOCK, OK, b), 0);
	assert_string_equal(get(f, OK, v, sizeof(v)), "1");
}

/* A structure without a marker: done frees the lock only. */
static void
test_no_marker(void **state)
{
	struct fix *f = *state;
	char a[REBUILD_TOKEN], v[64];

	assert_int_equal(rebuild_begin(&f->rds, LOCK, 10000, NULL, NULL, 0,
	    a), 1);
	assert_string_equal(get(f, OK, v, sizeof(v)), "");
	assert_int_equal(rebuild_done(&f->rds, LOCK, NULL, a), 0);
	assert_string_equal(get(f, LOCK, v, sizeof(v)), "");
	assert_string_equal(get(f, OK, v, sizeof(v)), "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_lapsed_done_leaves_the_new_holder, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_lapsed_fail_leaves_the_new_holder, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_marker_dropped_meanwhile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_marker, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
