/* test-cfg-sockets.c -- where a program finds the sockets it connects to
 * (base/cfg.h): each from its variable, else in RUN_DIR.  The live
 * badges' publisher is nginx's: under systemd it is /run/tally/live.sock
 * while RUN_DIR is /var/lib/tally, and the programs looked in RUN_DIR
 * whatever the units said (every stream refused, every publish failed). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/cfg.h"

static void
live_sock_from_its_variable_else_run_dir(void **state)
{
	struct cfg c;
	char longer[CFG_SOCK_MAX + 8];

	(void)state;
	setenv("RUN_DIR", "/var/lib/tally", 1);
	setenv("TALLY_REDIS", "/run/tally/redis.sock", 1);
	unsetenv("TALLY_LIVE_SOCK");
	assert_int_equal(cfg_load(&c), 0);
	assert_string_equal(c.live_sock, "/var/lib/tally/live.sock");
	setenv("TALLY_LIVE_SOCK", "/run/tally/live.sock", 1);
	assert_int_equal(cfg_load(&c), 0);
	assert_string_equal(c.live_sock, "/run/tally/live.sock");
	/* a path no unix socket can have is refused, not cut */
	memset(longer, 'a', sizeof(longer) - 1);
	longer[0] = '/';
	longer[sizeof(longer) - 1] = '\0';
	setenv("TALLY_LIVE_SOCK", longer, 1);
	assert_int_equal(cfg_load(&c), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(live_sock_from_its_variable_else_run_dir),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
