/* test-auth-password.c -- auth_hash/auth_verify: argon2id at minimum and interactive cost, right and wrong passwords, NULL hash. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/auth.h"

static int
setup(void **state)
{
	(void)state;
	return auth_init() == 0 ? 0 : -1;
}

static void
test_init_twice(void **state)
{
	(void)state;
	assert_int_equal(auth_init(), 0);	/* already initialised: still 0 */
}

static void
test_min_cost(void **state)
{
	char h1[AUTH_HASH_MAX], h2[AUTH_HASH_MAX];

	(void)state;
	memset(h1, 'x', sizeof(h1));
	assert_int_equal(auth_hash("hunter22", 8, 1, h1), 0);
	assert_non_null(memchr(h1, '\0', sizeof(h1)));
	assert_true(strncmp(h1, "$argon2id$v=19$m=8,t=1,p=1$",
	    strlen("$argon2id$v=19$m=8,t=1,p=1$")) == 0);
	assert_int_equal(auth_verify(h1, "hunter22", 8), 0);
	assert_int_equal(auth_verify(h1, "hunter23", 8), -1);
	assert_int_equal(auth_verify(h1, "hunter2", 7), -1);	/* prefix */
	assert_int_equal(auth_verify(h1, "hunter222", 9), -1);
	assert_int_equal(auth_verify(h1, "HUNTER22", 8), -1);
	assert_int_equal(auth_verify(h1, "", 0), -1);

	/* a fresh salt each time: same password, different hash, both verify */
	assert_int_equal(auth_hash("hunter22", 8, 1, h2), 0);
	assert_string_not_equal(h1, h2);
	assert_int_equal(auth_verify(h2, "hunter22", 8), 0);
}

static void
test_length_not_nul(void **state)
{
	char h[AUTH_HASH_MAX];

	(void)state;
	/* the password is pw[0..len), NUL bytes included */
	assert_int_equal(auth_hash("pass\0word", 9, 1, h), 0);
	assert_int_equal(auth_verify(h, "pass\0word", 9), 0);
	assert_int_equal(auth_verify(h, "pass", 4), -1);
	assert_int_equal(auth_verify(h, "pass\0wore", 9), -1);
	assert_int_equal(auth_hash("password-and-more", 8, 1, h), 0);
	assert_int_equal(auth_verify(h, "password", 8), 0);
	assert_int_equal(auth_verify(h, "password-and-more", 17), -1);
}

static void
test_interactive_cost(void **state)
{
	char h[AUTH_HASH_MAX];

	(void)state;
	assert_int_equal(auth_hash("correct horse", 13, 0, h), 0);
	assert_true(strncmp(h, "$argon2id$v=19$m=65536,t=2,p=1$",
	    strlen("$argon2id$v=19$m=65536,t=2,p=1$")) == 0);
	assert_int_equal(auth_verify(h, "correct horse", 13), 0);
	assert_int_equal(auth_verify(h, "correct horsf", 13), -1);
}

static void
test_bad_hashes(void **state)
{
	char h[AUTH_HASH_MAX];

	(void)state;
	/* unknown login: no hash, always -1, even for the dummy's password */
	assert_int_equal(auth_verify(NULL, "anything", 8), -1);
	assert_int_equal(auth_verify(NULL, "not a password", 14), -1);
	assert_int_equal(auth_verify(NULL, "", 0), -1);
	assert_int_equal(auth_verify("", "x", 1), -1);
	assert_int_equal(auth_verify("not a hash", "x", 1), -1);
	assert_int_equal(auth_verify("$argon2id$v=19$m=8,t=1,p=1$", "x", 1), -1);
	/* a truncated real hash */
	assert_int_equal(auth_hash("truncate", 8, 1, h), 0);
	h[strlen(h) - 4] = '\0';
	assert_int_equal(auth_verify(h, "truncate", 8), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_twice),
		cmocka_unit_test(test_min_cost),
		cmocka_unit_test(test_length_not_nul),
		cmocka_unit_test(test_interactive_cost),
		cmocka_unit_test(test_bad_hashes),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, setup, NULL);
}
