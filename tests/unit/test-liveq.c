/* test-liveq.c -- the live badges' queue items (shared/store/liveq.h):
 * "u<uid>", "a<uid>", "o<uid>" and "g" parse into a batch, each user or author
 * once; anything bent is refused and leaves the batch as it was; a
 * batch holds at most LIVEQ_TAKE_MAX of each. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "store/liveq.h"

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
	    "U5" };
	static struct liveq_batch b;
	size_t i;

	(void)state;
	memset(&b, 0, sizeof(b));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse(bad[i], &b), -1);
	assert_int_equal(b.nusers + b.nauthors + b.nopened + b.everyone, 0);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_items),
		cmocka_unit_test(test_bent),
		cmocka_unit_test(test_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
