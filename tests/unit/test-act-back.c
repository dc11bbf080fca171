/* test-act-back.c -- which `back` fields an action may redirect to
 * (web/act.h): paths on this site only. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "web/act.h"

static void
test_back_on_site(void **state)
{
	(void)state;
	assert_true(act_back_ok("/"));
	assert_true(act_back_ok("/feed"));
	assert_true(act_back_ok("/feed?page=2"));
	assert_true(act_back_ok("/u/alice#post-3"));
	assert_true(act_back_ok("/people?q=ada%20lo&page=2"));
}

static void
test_back_off_site(void **state)
{
	char long_path[600];

	(void)state;
	assert_false(act_back_ok(NULL));
	assert_false(act_back_ok(""));
	assert_false(act_back_ok("feed"));
	assert_false(act_back_ok("//evil.example/"));
	assert_false(act_back_ok("/\\evil.example/"));
	assert_false(act_back_ok("/a\\b"));
	assert_false(act_back_ok("https://evil.example/"));
	assert_false(act_back_ok("javascript:alert(1)"));
	assert_false(act_back_ok(" /feed"));
	/* nothing that could split a header or hide in one */
	assert_false(act_back_ok("/feed\r\nSet-Cookie: x=1"));
	assert_false(act_back_ok("/feed\nx"));
	assert_false(act_back_ok("/fe ed"));
	assert_false(act_back_ok("/feed\t"));
	assert_false(act_back_ok("/caf\xc3\xa9"));
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	assert_false(act_back_ok(long_path));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_back_on_site),
		cmocka_unit_test(test_back_off_site),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
