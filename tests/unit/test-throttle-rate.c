/* test-throttle-rate.c -- the action limits as the environment gives them
 * (social/throttle.h: throttle_parse_rate()): a count, or a count in the
 * limit's own unit; anything else is the default, "30r/h" included where
 * the limit counts a minute (it was taken as 30 a minute). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "social/throttle.h"

static void
test_rate_in_its_unit(void **state)
{
	(void)state;
	assert_int_equal(throttle_parse_rate("8", "r/m", 300), 8);
	assert_int_equal(throttle_parse_rate("8r/m", "r/m", 300), 8);
	assert_int_equal(throttle_parse_rate("0", "r/m", 300), 0);
	assert_int_equal(throttle_parse_rate("3r/h", "r/h", 20), 3);
	assert_int_equal(throttle_parse_rate(NULL, "r/m", 300), 300);
	assert_int_equal(throttle_parse_rate("", "r/m", 300), 300);
}

static void
test_rate_of_another_unit_or_none(void **state)
{
	(void)state;
	/* an hour's rate is not a minute's, nor the other way round */
	assert_int_equal(throttle_parse_rate("30r/h", "r/m", 300), 300);
	assert_int_equal(throttle_parse_rate("30r/m", "r/h", 20), 20);
	assert_int_equal(throttle_parse_rate("r/m", "r/m", 300), 300);
	assert_int_equal(throttle_parse_rate("-1", "r/m", 300), 300);
	assert_int_equal(throttle_parse_rate("8 r/m", "r/m", 300), 300);
	assert_int_equal(throttle_parse_rate("99999999999999999999", "r/m",
	    300), 300);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_in_its_unit),
		cmocka_unit_test(test_rate_of_another_unit_or_none),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
