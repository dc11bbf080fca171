/* test-valid-bad-fields.c -- valid_check rejects malformed UTF-8, control characters, bad lengths, blank bodies, loose numbers, a secret with a NUL or too long, boards that are not leaderboards, and snapshots PostgreSQL would refuse. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/valid.h"

/* s[0..len) must be rejected as kind, leaving norm alone. */
static void
assert_badn(enum valid kind, const char *s, size_t len)
{
	char *norm = (char *)"untouched";

	if (valid_check(kind, s, len, &norm) != -1)
		fail_msg("kind %d accepted a bad value (%zu bytes)", (int)kind,
		    len);
	assert_string_equal(norm, "untouched");
	assert_int_equal(valid_check(kind, s, len, NULL), -1);
}

static void
assert_bad(enum valid kind, const char *s)
{
	assert_badn(kind, s, strlen(s));
}

static char *
repeat(const char *unit, size_t n)
{
	size_t ul = strlen(unit), i;
	char *s = malloc(ul * n + 1);

	assert_non_null(s);
	for (i = 0; i < n; i++)
		memcpy(s + i * ul, unit, ul);
	s[ul * n] = '\0';
	return s;
}

/* Malformed UTF-8: every text kind rejects it, valid_utf8 too. */
static const char *const bad_utf8[] = {
	"\xc0\xaf",		/* overlong '/' */
	"\xc1\xbf",		/* overlong */
	"\xe0\x80\xaf",		/* overlong, 3 bytes */
	"\xe0\x9f\xbf",		/* overlong U+07FF */
	"\xf0\x80\x80\xaf",	/* overlong, 4 bytes */
	"\xf0\x8f\xbf\xbf",	/* overlong U+FFFF */
	"\xed\xa0\x80",		/* U+D800, high surrogate */
	"\xed\xbf\xbf",		/* U+DFFF, low surrogate */
	"\xed\xa0\xbd\xed\xb8\x80",	/* CESU-8 surrogate pair */
	"\xf4\x90\x80\x80",	/* U+110000 */
	"\xf5\x80\x80\x80",
	"\xf8\x88\x80\x80\x80",	/* 5-byte form */
	"\xfe", "\xff",
	"\x80",			/* stray continuation */
	"\xbf",
	"\xc3",			/* truncated */
	"\xe2\x82",
	"\xf0\x9f\x98",
	"ab\xc3",
	"\xc3" "a",		/* continuation missing */
	"\xe2\x28\xa1",
};

static void
test_malformed_utf8(void **state)
{
	char s[32];
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(bad_utf8) / sizeof(bad_utf8[0]); i++) {
		len = strlen(bad_utf8[i]);
		if (valid_utf8(bad_utf8[i], len, NULL) != -1)
			fail_msg("valid_utf8 accepted bad_utf8[%zu]", i);
		/* padded so the length rules are not what rejects it */
		memcpy(s, "valid ", 6);
		memcpy(s + 6, bad_utf8[i], len);
		memcpy(s + 6 + len, " text", 6);
		assert_bad(VALID_NAME, s);
		assert_bad(VALID_TITLE, s);
		assert_bad(VALID_BODY, s);
		assert_bad(VALID_PASSWORD, s);
	}
}

static void
test_truncated_by_len(void **state)
{
	(void)state;
	/* a good character cut by len */
	assert_int_equal(valid_utf8("\xe2\x82\xac", 2, NULL), -1);
	assert_badn(VALID_NAME, "ab\xe2\x82\xac", 4);
	assert_badn(VALID_BODY, "\xf0\x9f\x98\x80", 3);
}

static void
test_control_chars(void **state)
{
	static const char *const ctl[] = {
		"\x01", "\x08", "\x0b", "\x0c", "\x1b", "\x1f", "\x7f",
		"\xc2\x80", "\xc2\x85", "\xc2\x9b", "\xc2\x9f",
	};
	char s[32];
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(ctl) / sizeof(ctl[0]); i++) {
		len = strlen(ctl[i]);
		memcpy(s, "abcdefgh", 8);
		memcpy(s + 8, ctl[i], len);
		s[8 + len] = '\0';
		assert_bad(VALID_NAME, s);
		assert_bad(VALID_TITLE, s);
		assert_bad(VALID_BODY, s);
		assert_bad(VALID_PASSWORD, s);
	}
	/* \n \r \t: fine in a body, not in a name, title or password */
	assert_bad(VALID_NAME, "a\nb");
	assert_bad(VALID_NAME, "a\tb");
	assert_bad(VALID_TITLE, "title\r");
	assert_bad(VALID_PASSWORD, "password\n");
	/* an embedded NUL (from %00) */
	assert_badn(VALID_NAME, "a\0b", 3);
	assert_badn(VALID_BODY, "hello\0world", 11);
	assert_badn(VALID_PASSWORD, "password\0", 9);
	assert_badn(VALID_LOGIN, "alice\0x", 7);
	assert_badn(VALID_PAGE, "1\0", 2);
	assert_badn(VALID_ID, "12\0" "3", 4);
}

static void
test_login_bad(void **state)
{
	char *s;

	(void)state;
	assert_bad(VALID_LOGIN, "");
	assert_bad(VALID_LOGIN, "ab");
	assert_bad(VALID_LOGIN, "al-ice");
	assert_bad(VALID_LOGIN, "al ice");
	assert_bad(VALID_LOGIN, " alice");
	assert_bad(VALID_LOGIN, "alice.b");
	assert_bad(VALID_LOGIN, "al\xc3\xaf" "ce");
	assert_bad(VALID_LOGIN, "<script>");
	s = repeat("a", 33);
	assert_bad(VALID_LOGIN, s);
	free(s);
}

static void
test_lengths(void **state)
{
	char *s;

	(void)state;
	assert_bad(VALID_NAME, "");
	s = repeat("\xc3\xa9", 65);
	assert_bad(VALID_NAME, s);
	free(s);
	assert_bad(VALID_PASSWORD, "");
	assert_bad(VALID_PASSWORD, "1234567");
	assert_bad(VALID_PASSWORD, "\xc3\xa9\xc3\xa9\xc3\xa9");	/* 6 bytes */
	s = repeat("x", 129);
	assert_bad(VALID_PASSWORD, s);
	free(s);
	s = repeat("\xc3\xa9", 65);	/* 65 characters but 130 bytes */
	assert_bad(VALID_PASSWORD, s);
	free(s);
	assert_bad(VALID_BODY, "");
	s = repeat("a", 2001);
	assert_bad(VALID_BODY, s);
	free(s);
	s = repeat("\xe2\x82\xac", 2001);
	assert_bad(VALID_BODY, s);
	free(s);
	assert_bad(VALID_TITLE, "");
	s = repeat("t", 121);
	assert_bad(VALID_TITLE, s);
	free(s);
	s = repeat("t", 33);
	assert_bad(VALID_TOPIC, s);
	free(s);
}

static void
test_blank(void **state)
{
	(void)state;
	assert_bad(VALID_BODY, " ");
	assert_bad(VALID_BODY, "\n");
	assert_bad(VALID_BODY, " \n\t\r\n  ");
	assert_bad(VALID_NAME, " ");
	assert_bad(VALID_NAME, "   ");
	assert_bad(VALID_TITLE, "  ");
}

static void
test_topic_bool_bad(void **state)
{
	(void)state;
	assert_bad(VALID_TOPIC, "a_b");
	assert_bad(VALID_TOPIC, "a b");
	assert_bad(VALID_TOPIC, "caf\xc3\xa9");
	assert_bad(VALID_TOPIC, " ");
	assert_bad(VALID_BOOL, "");
	assert_bad(VALID_BOOL, "2");
	assert_bad(VALID_BOOL, "01");
	assert_bad(VALID_BOOL, "true");
	assert_bad(VALID_BOOL, " 1");
}

static const char *const bad_numbers[] = {
	"", "0", "01x", "x1", "-1", "-0", "+5", " 5", "5 ", "5\n", "1.0",
	"1e3", "0x10", "1,000", "\xd9\xa1",	/* ARABIC-INDIC DIGIT ONE */
	"99999999999999999999", "18446744073709551617",
	"9223372036854775808",
};

static void
test_numbers_bad(void **state)
{
	long long v = 5;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad_numbers) / sizeof(bad_numbers[0]); i++) {
		assert_bad(VALID_PAGE, bad_numbers[i]);
		assert_bad(VALID_ID, bad_numbers[i]);
		if (valid_int(bad_numbers[i], 0, 1000, &v) != -1 &&
		    strcmp(bad_numbers[i], "0") != 0)
			fail_msg("valid_int accepted \"%s\"", bad_numbers[i]);
	}
	v = 5;
	assert_int_equal(valid_int(NULL, 0, 10, &v), -1);
	assert_bad(VALID_PAGE, "1001");
	assert_bad(VALID_PAGE, "1000000");
	assert_bad(VALID_ID, "9007199254740993");	/* 2^53 + 1 */
	assert_bad(VALID_ID, "10000000000000000");
	assert_int_equal(valid_int("5", 6, 10, &v), -1);
	assert_int_equal(valid_int("11", 6, 10, &v), -1);
	assert_int_equal(v, 5);
}

static void
test_secret_bad(void **state)
{
	char *s;

	(void)state;
	/* a NUL would cut the secret short before the hash */
	assert_badn(VALID_SECRET, "\0", 1);
	assert_badn(VALID_SECRET, "password\0", 9);
	assert_badn(VALID_SECRET, "pass\0word", 9);
	/* not UTF-8 (a lone surrogate, an overlong form): no form sends it,
	 * and the fuzz target holds every value that passes to UTF-8 */
	assert_badn(VALID_SECRET, "\xed\xa0\x80\xc0\xaf", 5);
	s = repeat("x", 1025);
	assert_bad(VALID_SECRET, s);
	free(s);
}

/* Exactly a leaderboard's name: no folding, no padding, no NUL. */
static const char *const bad_boards[] = {
	"", "POSTS", "Posts", "post", "postsx", " posts", "posts ",
	"posts'--", "posts OR 1=1", "views", "bogus",
};

static void
test_board_top_n_bad(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad_boards) / sizeof(bad_boards[0]); i++)
		assert_bad(VALID_BOARD, bad_boards[i]);
	assert_badn(VALID_BOARD, "posts\0", 6);
	assert_badn(VALID_BOARD, "\0", 1);
	for (i = 0; i < sizeof(bad_numbers) / sizeof(bad_numbers[0]); i++)
		assert_bad(VALID_TOP_N, bad_numbers[i]);
	assert_bad(VALID_TOP_N, "101");
	assert_bad(VALID_TOP_N, "1000");
	assert_badn(VALID_TOP_N, "10\0", 3);
}

static void
test_null_and_unknown_kind(void **state)
{
	(void)state;
	assert_int_equal(valid_check(VALID_NAME, NULL, 0, NULL), -1);
	assert_int_equal(valid_check(VALID__MAX, "x", 1, NULL), -1);
}

/* What pg_snapshot's input refuses is refused here: its error would be
 * a 500.  Out of order, outside [XMIN, XMAX), zero, too long. */
static void
test_snapshot_bad(void **state)
{
	static const char *const bad[] = {
		"", "748", "748:", "748:760", ":760:", "748::", "748:760:,",
		"748:760:751,", "748:760:,751", "748:760:751,,752",
		"760:748:", "0:5:", "748:760:747", "748:760:760",
		"748:760:752,751", "748:760:751:", "748:760:a", " 748:760:",
		"748:760: 751", "-1:760:", "748:760:751;752",
		"12345678901234567890:12345678901234567890:",
	};
	char *s;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (valid_check(VALID_SNAPSHOT, bad[i], strlen(bad[i]), NULL)
		    != -1)
			fail_msg("snapshot \"%s\" taken", bad[i]);
	s = malloc(1100);
	assert_non_null(s);
	strcpy(s, "1000000000:2000000000:1000000000");
	while (strlen(s) < 1025)
		strcat(s, ",1000000000");	/* 1033 bytes: one too many */
	assert_int_equal(valid_check(VALID_SNAPSHOT, s, strlen(s), NULL), -1);
	s[strlen(s) - 11] = '\0';		/* 1022: taken */
	assert_int_equal(valid_check(VALID_SNAPSHOT, s, strlen(s), NULL), 0);
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed_utf8),
		cmocka_unit_test(test_truncated_by_len),
		cmocka_unit_test(test_control_chars),
		cmocka_unit_test(test_login_bad),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_blank),
		cmocka_unit_test(test_topic_bool_bad),
		cmocka_unit_test(test_numbers_bad),
		cmocka_unit_test(test_secret_bad),
		cmocka_unit_test(test_board_top_n_bad),
		cmocka_unit_test(test_snapshot_bad),
		cmocka_unit_test(test_null_and_unknown_kind),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
