/* test-bjson.c -- the badge poll's kept answers (web/bjson.h): the JSON
 * jansson writes for the value and its ETag, whether the answer was
 * kept or not, through evictions and values that differ in one field. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "social/badges.h"
#include "web/bjson.h"

/* What the answer for b must be, written the long way. */
static void
expect(const struct badges *b)
{
	char want[256], wtag[96];
	const char *json, *etag;

	snprintf(want, sizeof(want), "{\"notifications\":%lld,\"notices\":%lld,"
	    "\"followed\":%lld,\"red_dot\":%s}", b->notifications, b->notices,
	    b->followed, b->red_dot ? "true" : "false");
	snprintf(wtag, sizeof(wtag), "\"b-%lld-%lld-%lld-%d\"", b->notifications,
	    b->notices, b->followed, b->red_dot);
	assert_int_equal(bjson_get(b, &json, &etag), 0);
	assert_string_equal(json, want);
	assert_string_equal(etag, wtag);
}

static void
test_values(void **state)
{
	struct badges b[] = {
		{ 0, 0, 0, 0 }, { 3, 1, 12, 1 }, { 1000000, 0, 0, 0 },
		{ 9223372036854775807LL, 9223372036854775807LL,
		  9223372036854775807LL, 1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		expect(&b[i]);
		expect(&b[i]);		/* kept: the same answer */
	}
}

static void
test_one_field_apart(void **state)
{
	struct badges a = { 5, 5, 5, 0 }, b;

	(void)state;
	expect(&a);
	b = a, b.notifications = 6, expect(&b);
	b = a, b.notices = 6, expect(&b);
	b = a, b.followed = 6, expect(&b);
	b = a, b.red_dot = 1, expect(&b);
	expect(&a);
}

static void
test_many_values(void **state)
{
	struct badges b;
	int round, i;

	(void)state;
	/* far more values than slots, twice over: every answer right
	 * whether it was kept, evicted or never seen */
	for (round = 0; round < 2; round++)
		for (i = 0; i < 20 * BJSON_SLOTS; i++) {
			b.notifications = i % 37;
			b.notices = i / 37;
			b.followed = (i * 7) % 11;
			b.red_dot = i % 2;
			expect(&b);
		}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_one_field_apart),
		cmocka_unit_test(test_many_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
