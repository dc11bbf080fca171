/* test-ucd.c -- names refuse invisible format characters (Cf): the
 * category table and its use by VALID_NAME. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/ucd.h"
#include "base/valid.h"

static void
test_format_code_points(void **state)
{
	static const unsigned long yes[] = { 0x00AD, 0x061C, 0x200B, 0x200D,
	    0x200E, 0x202A, 0x202E, 0x2066, 0x2069, 0xFEFF, 0xFFFB, 0xE0001,
	    0xE0041, 0xE007F };
	static const unsigned long no[] = { 'A', 0x00E9, 0x2010, 0x2070,
	    0x4E2D, 0x1F600, 0xFFFD, 0x202F };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(ucd_is_format(yes[i]));
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(ucd_is_format(no[i]));
}

static void
test_names(void **state)
{
	static const char *const bad[] = {
		"evil\xe2\x80\xae" "gnp.exe",	/* U+202E RIGHT-TO-LEFT OVERRIDE */
		"ad\xe2\x80\x8dmin",		/* U+200D ZERO WIDTH JOINER */
		"\xef\xbb\xbf" "alice",		/* U+FEFF */
		"so\xc2\xad" "ft",		/* U+00AD SOFT HYPHEN */
		"tag\xf3\xa0\x81\x81",		/* U+E0041 TAG LATIN CAPITAL A */
		"bell\x07",
	};
	static const char *const good[] = {
		"Zo\xc3\xab Dupont", "\xe4\xb8\xad\xe6\x96\x87\xe5\x90\x8d",
		"Party \xf0\x9f\x8e\x89", "Jean-Luc O'Neill",
	};
	size_t i;
	char *norm;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(valid_check(VALID_NAME, bad[i], strlen(bad[i]),
		    NULL), -1);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(valid_check(VALID_NAME, good[i],
		    strlen(good[i]), &norm), 0);
		free(norm);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_code_points),
		cmocka_unit_test(test_names),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
