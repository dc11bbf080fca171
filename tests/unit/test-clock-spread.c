/* test-clock-spread.c -- a cached copy's age (base/clock.h:
 * clock_spread()): always within [max / 2, max], the same for the same
 * written time, and copies written together (one a millisecond, as
 * 10,000 users signing in within ten seconds) spread over the whole
 * range rather than ageing out at once. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/clock.h"

#define MAX	60000LL
#define AT	1796100000000LL

static void
test_within_half_and_whole(void **state)
{
	long long i, a;

	(void)state;
	for (i = 0; i < 100000; i++) {
		a = clock_spread(MAX, AT + i);
		assert_true(a >= MAX / 2 && a <= MAX);
		assert_int_equal(a, clock_spread(MAX, AT + i));
	}
	assert_int_equal(clock_spread(1, AT), 1);
	assert_int_equal(clock_spread(0, AT), 0);
}

/* 10,000 copies written one a millisecond: each tenth of the range
 * takes between 8 % and 12 % of them (a wave of expiries would put them
 * all in one). */
static void
test_spread_over_the_range(void **state)
{
	int tenth[10] = { 0 }, i, k;

	(void)state;
	for (i = 0; i < 10000; i++) {
		k = (int)((clock_spread(MAX, AT + i) - MAX / 2) * 10 /
		    (MAX / 2 + 1));
		tenth[k]++;
	}
	for (k = 0; k < 10; k++)
		if (tenth[k] < 800 || tenth[k] > 1200)
			fail_msg("tenth %d of the range holds %d of 10000", k,
			    tenth[k]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_within_half_and_whole),
		cmocka_unit_test(test_spread_over_the_range),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
