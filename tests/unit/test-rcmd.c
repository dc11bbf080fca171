/* test-rcmd.c -- a command in the Redis protocol's form (store/rcmd.h):
 * the bytes are hiredis's own, whatever the arguments, and a short
 * buffer is never written past. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "store/rcmd.h"

/* rcmd_format() and redisFormatCommandArgv() agree on the command. */
static void
same_as_hiredis(int argc, const char **argv, const size_t *lens)
{
	char *want, *got;
	int wlen = redisFormatCommandArgv(&want, argc, argv, lens);
	size_t n = rcmd_format(NULL, 0, argc, argv, lens);

	assert_true(wlen > 0);
	assert_int_equal(n, (size_t)wlen);
	got = malloc(n);
	assert_non_null(got);
	assert_int_equal(rcmd_format(got, n, argc, argv, lens), n);
	assert_memory_equal(got, want, n);
	free(got);
	redisFreeCommand(want);
}

static void
test_plain_commands(void **state)
{
	const char *ping[] = { "PING" };
	const char *hget[] = { "HGET", "{u7}:ss", "0123abcd" };
	const char *hmget[] = { "HMGET", "{u7}:bm", "gen", "fg", "at", "fbe",
	    "seen", "visited", "fb" };

	(void)state;
	same_as_hiredis(1, ping, NULL);
	same_as_hiredis(3, hget, NULL);
	same_as_hiredis(9, hmget, NULL);
}

static void
test_odd_arguments(void **state)
{
	/* empty, binary with NUL and CR LF inside, lengths of 9/10 digits */
	const char *argv[] = { "SET", "", "a\0b\r\nc", "123456789", "1234567890" };
	const size_t lens[] = { 3, 0, 6, 9, 10 };

	(void)state;
	same_as_hiredis(5, argv, lens);
}

static void
test_long_and_many(void **state)
{
	char *big = malloc(100001);
	const char *argv[300];
	int i;

	(void)state;
	assert_non_null(big);
	memset(big, 'x', 100000);
	big[100000] = '\0';
	argv[0] = "SET";
	argv[1] = "k";
	argv[2] = big;
	same_as_hiredis(3, argv, NULL);	/* past any stack buffer */
	argv[0] = "EVALSHA";
	for (i = 1; i < 300; i++)
		argv[i] = i % 2 ? "p42" : "-1";
	same_as_hiredis(300, argv, NULL);	/* a script's arguments */
	free(big);
}

static void
test_short_buffer(void **state)
{
	const char *argv[] = { "HGET", "{u7}:ss", "0123abcd" };
	char out[64];
	size_t need, cap;

	(void)state;
	need = rcmd_format(NULL, 0, 3, argv, NULL);
	assert_true(need < sizeof(out));
	/* every cap short of the whole: the length back, nothing past cap */
	for (cap = 0; cap < need; cap++) {
		memset(out, '#', sizeof(out));
		assert_int_equal(rcmd_format(out, cap, 3, argv, NULL), need);
		assert_memory_equal(out + cap, "########", 8);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_commands),
		cmocka_unit_test(test_odd_arguments),
		cmocka_unit_test(test_long_and_many),
		cmocka_unit_test(test_short_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
