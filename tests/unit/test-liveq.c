/* test-liveq.c -- the live badges' queue items (shared/store/liveq.h):
 * "u<uid>", "a<uid>", "o<uid>" and "g" parse into a batch, each user or author
 * once; anything bent is refused and leaves the batch as it was; a
 * batch holds at most LIVEQ_TAKE_MAX of each; and taken from a real
 * Redis (tmpredis.h), a burst of more distinct users than a batch holds
 * comes in two batches, none lost. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "store/liveq.h"
#include "store/rds.h"
#include "store/rds_int.h"
#include "tmpredis.h"

static int
parse(const char *item, struct liveq_batch *b)
{
	return liveq_parse(item, strlen(item), b);
}

static void
test_items(void **state)
{
	static struct liveq_batch b;

	(void)state;
	memset(&b, 0, sizeof(b));
	assert_int_equal(parse("u42", &b), 0);
	assert_int_equal(parse("u42", &b), 0);		/* once */
	assert_int_equal(parse("u7", &b), 0);
	assert_int_equal(parse("a9", &b), 0);
	assert_int_equal(parse("o11", &b), 0);
	assert_int_equal(parse("c13", &b), 0);	/* streams to close */
	assert_int_equal(parse("c13", &b), 0);
	assert_int_equal(b.nclosed, 1);
	assert_true(b.closed[0] == 13);
	assert_int_equal(b.nopened, 1);
	assert_true(b.opened[0] == 11);
	assert_int_equal(b.nusers, 2);
	assert_true(b.users[0] == 42 && b.users[1] == 7);
	assert_int_equal(b.nauthors, 1);
	assert_true(b.authors[0] == 9);
	assert_int_equal(b.everyone, 0);
	assert_int_equal(parse("g", &b), 0);
	assert_int_equal(b.everyone, 1);
}

static void
test_bent(void **state)
{
	static const char *const bad[] = { "", "u", "a", "x1", "u-1", "u0",
	    "u+5", "u 5", "u5x", "gg", "G", "u99999999999999999999999",
	    "U5", "c", "c0", "C5" };
	static struct liveq_batch b;
	size_t i;

	(void)state;
	memset(&b, 0, sizeof(b));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse(bad[i], &b), -1);
	assert_int_equal(b.nusers + b.nauthors + b.nopened + b.nclosed +
	    b.everyone, 0);
	assert_int_equal(liveq_parse("u5", 1, &b), -1);	/* "u": length */
}

static void
test_full(void **state)
{
	static struct liveq_batch b;
	char item[24];
	int i;

	(void)state;
	memset(&b, 0, sizeof(b));
	for (i = 1; i <= LIVEQ_TAKE_MAX; i++) {
		snprintf(item, sizeof(item), "u%d", i);
		assert_int_equal(parse(item, &b), 0);
	}
	assert_int_equal(parse("u999999", &b), -1);
	assert_int_equal(parse("u1", &b), 0);		/* held already */
	assert_int_equal(b.nusers, LIVEQ_TAKE_MAX);
}

/* 1,025 users changed at once (a fan-out to the followers whose streams
 * are open): the first take holds LIVEQ_TAKE_MAX, the next the last one.
 * A take once asked for LIVEQ_TAKE_MAX after its first and dropped the
 * item its batch had no room for. */
static void
test_burst(void **state)
{
	struct tmpredis_fix *f = *state;
	static struct liveq_batch b;
	static char seen[LIVEQ_TAKE_MAX + 2];
	int i, n = LIVEQ_TAKE_MAX + 1, total = 0;

	for (i = 1; i <= n; i++)
		assert_int_equal(liveq_push(&f->rds, 'u', i), 0);
	while (liveq_take(&f->rds, 100, 0, &b) == 1) {
		assert_true(b.nusers <= LIVEQ_TAKE_MAX);
		for (i = 0; i < b.nusers; i++) {
			assert_true(b.users[i] >= 1 && b.users[i] <= n);
			assert_int_equal(seen[b.users[i]], 0);
			seen[b.users[i]] = 1;
		}
		total += b.nusers;
	}
	assert_int_equal(total, n);
}

static int
setup(void **state)
{
	return tmpredis_setup(state, "liveq");
}

static int
teardown(void **state)
{
	return tmpredis_teardown(state);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_items),
		cmocka_unit_test(test_bent),
		cmocka_unit_test(test_full),
		cmocka_unit_test_setup_teardown(test_burst, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
