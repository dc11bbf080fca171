/* test-auth-tokens.c -- auth_token_new (43-char base64url, distinct), auth_token_hash (BLAKE2b-256, deterministic), auth_token_equal. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/auth.h"

#define NTOK	64

static int
setup(void **state)
{
	(void)state;
	return auth_init() == 0 ? 0 : -1;
}

static void
test_new_format(void **state)
{
	char t[TOKEN_LEN + 1];
	size_t i, k;

	(void)state;
	for (k = 0; k < 16; k++) {
		memset(t, '!', sizeof(t));
		auth_token_new(t);
		assert_int_equal(strlen(t), 43);
		assert_int_equal(TOKEN_LEN, 43);
		for (i = 0; i < TOKEN_LEN; i++)
			assert_non_null(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "abcdefghijklmnopqrstuvwxyz0123456789-_", t[i]));
		/* 32 bytes = 256 bits: the last character carries 4 bits */
		assert_non_null(strchr("AEIMQUYcgkosw048", t[42]));
	}
}

static void
test_new_distinct(void **state)
{
	char t[NTOK][TOKEN_LEN + 1];
	size_t i, j;

	(void)state;
	for (i = 0; i < NTOK; i++)
		auth_token_new(t[i]);
	for (i = 0; i < NTOK; i++)
		for (j = i + 1; j < NTOK; j++)
			assert_string_not_equal(t[i], t[j]);
}

static void
test_hash(void **state)
{
	/* BLAKE2b with a 32-byte digest, no key, of "abc" */
	static const unsigned char abc[TOKEN_HASH_LEN] = {
		0xbd, 0xdd, 0x81, 0x3c, 0x63, 0x42, 0x39, 0x72,
		0x31, 0x71, 0xef, 0x3f, 0xee, 0x98, 0x57, 0x9b,
		0x94, 0x96, 0x4e, 0x3b, 0xb1, 0xcb, 0x3e, 0x42,
		0x72, 0x62, 0xc8, 0xc0, 0x68, 0xd5, 0x23, 0x19,
	};
	unsigned char h1[TOKEN_HASH_LEN], h2[TOKEN_HASH_LEN];
	char t[TOKEN_LEN + 1];

	(void)state;
	auth_token_hash("abc", h1);
	assert_memory_equal(h1, abc, TOKEN_HASH_LEN);

	auth_token_new(t);
	auth_token_hash(t, h1);
	auth_token_hash(t, h2);
	assert_memory_equal(h1, h2, TOKEN_HASH_LEN);
	t[0] = t[0] == 'A' ? 'B' : 'A';
	auth_token_hash(t, h2);
	assert_memory_not_equal(h1, h2, TOKEN_HASH_LEN);
	auth_token_hash("abd", h2);
	assert_memory_not_equal(h2, abc, TOKEN_HASH_LEN);
}

static void
test_equal(void **state)
{
	char a[TOKEN_LEN + 1], b[TOKEN_LEN + 1], c[TOKEN_LEN + 1];

	(void)state;
	auth_token_new(a);
	memcpy(b, a, sizeof(a));
	auth_token_new(c);
	assert_int_equal(auth_token_equal(a, b), 1);
	assert_int_equal(auth_token_equal(a, a), 1);
	assert_int_equal(auth_token_equal(a, c), 0);
	b[TOKEN_LEN - 1] = b[TOKEN_LEN - 1] == 'A' ? 'B' : 'A';
	assert_int_equal(auth_token_equal(a, b), 0);	/* last byte differs */
	assert_int_equal(auth_token_equal("abc", "abc"), 1);
	assert_int_equal(auth_token_equal("abc", "abd"), 0);
	assert_int_equal(auth_token_equal("abc", "ABC"), 0);
}

static void
test_equal_length_and_empty(void **state)
{
	char a[TOKEN_LEN + 1], b[TOKEN_LEN + 1];

	(void)state;
	auth_token_new(a);
	memcpy(b, a, sizeof(a));
	b[TOKEN_LEN - 1] = '\0';	/* a proper prefix */
	assert_int_equal(auth_token_equal(a, b), 0);
	assert_int_equal(auth_token_equal(b, a), 0);
	assert_int_equal(auth_token_equal("abc", "abcd"), 0);
	assert_int_equal(auth_token_equal("abcd", "abc"), 0);
	assert_int_equal(auth_token_equal("", ""), 0);
	assert_int_equal(auth_token_equal("", a), 0);
	assert_int_equal(auth_token_equal(a, ""), 0);
	assert_int_equal(auth_token_equal(NULL, a), 0);
	assert_int_equal(auth_token_equal(a, NULL), 0);
	assert_int_equal(auth_token_equal(NULL, NULL), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_format),
		cmocka_unit_test(test_new_distinct),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_equal),
		cmocka_unit_test(test_equal_length_and_empty),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, setup, NULL);
}
