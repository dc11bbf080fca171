/* test-valid-fields.c -- valid_check accepts and normalises good fields: login, name, password, body, topic, title, bool, page, id, secret, board, top n, snapshot. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/valid.h"

/* s must pass as kind and normalise to want. */
static void
assert_norm(enum valid kind, const char *s, const char *want)
{
	char *norm = NULL;

	if (valid_check(kind, s, strlen(s), &norm) != 0)
		fail_msg("kind %d rejected \"%s\"", (int)kind, s);
	assert_non_null(norm);
	assert_string_equal(norm, want);
	free(norm);
	assert_int_equal(valid_check(kind, s, strlen(s), NULL), 0);
}

static void
assert_ok(enum valid kind, const char *s)
{
	assert_norm(kind, s, s);
}

/* A string of n copies of unit (caller frees). */
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

static void
test_login(void **state)
{
	char *s;

	(void)state;
	assert_ok(VALID_LOGIN, "alice");
	assert_ok(VALID_LOGIN, "bob_42");
	assert_ok(VALID_LOGIN, "abc");
	assert_norm(VALID_LOGIN, "Alice", "alice");
	assert_norm(VALID_LOGIN, "BOB_X9", "bob_x9");
	s = repeat("Z", 32);
	assert_norm(VALID_LOGIN, s, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz");
	free(s);
}

static void
test_name(void **state)
{
	char *s;

	(void)state;
	assert_ok(VALID_NAME, "A");
	assert_ok(VALID_NAME, "Alice Liddell");
	assert_ok(VALID_NAME, "Zo\xc3\xab O'Brien <3");	/* escaped on output */
	assert_ok(VALID_NAME, "\xe6\x9d\x8e\xe5\xb0\x8f\xe9\xbe\x99");
	assert_ok(VALID_NAME, "\xf0\x9f\x98\x80");	/* U+1F600 */
	assert_ok(VALID_NAME, "a\xc2\xa0" "b");		/* U+00A0 is not C1 */
	s = repeat("\xc3\xa9", 64);	/* 64 characters, 128 bytes */
	assert_ok(VALID_NAME, s);
	free(s);
}

/* A value that draws nothing is blank, as an empty one: a name of a
 * Hangul filler, a no-break space, the Braille blank or an ideographic
 * space (a blank byline, one posing as nobody); a post of a zero-width
 * space.  Beside a visible character they stay. */
static void
test_invisible_is_blank(void **state)
{
	static const char *const blank[] = { "\xe3\x85\xa4", "\xc2\xa0",
	    "\xe2\xa0\x80", "\xe3\x80\x80", "\xe1\x85\x9f\xe1\x85\xa0",
	    " \xc2\xa0 ", "\xef\xbe\xa0" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(blank) / sizeof(blank[0]); i++) {
		assert_int_equal(valid_check(VALID_NAME, blank[i],
		    strlen(blank[i]), NULL), -1);
		assert_int_equal(valid_check(VALID_BODY, blank[i],
		    strlen(blank[i]), NULL), -1);
	}
	assert_int_equal(valid_check(VALID_BODY, "\xe2\x80\x8b", 3, NULL), -1);
	assert_int_equal(valid_check(VALID_BODY, "\xe2\x80\x8b\n\xe2\x80\x8b",
	    7, NULL), -1);
	assert_ok(VALID_NAME, "\xe3\x85\xa4x");
	assert_ok(VALID_BODY, "\xe2\x80\x8bhi");
}

static void
test_password(void **state)
{
	char *s;

	(void)state;
	assert_ok(VALID_PASSWORD, "12345678");
	assert_ok(VALID_PASSWORD, "correct horse battery staple");
	assert_ok(VALID_PASSWORD, "p\xc3\xa4ssw\xc3\xb6rd");
	assert_ok(VALID_PASSWORD, "        ");	/* passwords may be spaces */
	s = repeat("x", 128);
	assert_ok(VALID_PASSWORD, s);
	free(s);
	/* 8 bytes, though only 4 characters */
	assert_ok(VALID_PASSWORD, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
}

static void
test_body(void **state)
{
	char *s;

	(void)state;
	assert_ok(VALID_BODY, "x");
	assert_ok(VALID_BODY, "line one\nline two\n\tindented");
	/* a form's CRLF is one character, a LF, as the page counts it */
	assert_norm(VALID_BODY, "line one\r\nline two\r\tindented",
	    "line one\nline two\n\tindented");
	s = repeat("a\r\n", 1000);	/* 2000 characters, 3000 bytes */
	assert_int_equal(valid_check(VALID_BODY, s, strlen(s), NULL), 0);
	free(s);
	s = repeat("a\r\n", 1001);
	assert_int_equal(valid_check(VALID_BODY, s, strlen(s), NULL), -1);
	free(s);
	assert_int_equal(valid_check(VALID_BODY, "a\r\n\0b", 5, NULL), -1);
	assert_ok(VALID_BODY, "\n\nhi\n");
	assert_ok(VALID_BODY, "<script>alert(1)</script>");	/* escaped later */
	s = repeat("a", 2000);
	assert_ok(VALID_BODY, s);
	free(s);
	s = repeat("\xe2\x82\xac", 2000);	/* 2000 characters, 6000 bytes */
	assert_ok(VALID_BODY, s);
	free(s);
}

static void
test_topic(void **state)
{
	char *norm = NULL;
	char *s;

	(void)state;
	assert_int_equal(valid_check(VALID_TOPIC, "", 0, &norm), 0);
	assert_non_null(norm);
	assert_string_equal(norm, "general");
	free(norm);
	assert_int_equal(valid_check(VALID_TOPIC, "", 0, NULL), 0);
	assert_ok(VALID_TOPIC, "c");
	assert_ok(VALID_TOPIC, "rust-lang");
	assert_norm(VALID_TOPIC, "Web-2024", "web-2024");
	s = repeat("t", 32);
	assert_ok(VALID_TOPIC, s);
	free(s);
}

static void
test_title_bool(void **state)
{
	char *s;

	(void)state;
	assert_ok(VALID_TITLE, "Hello, world!");
	s = repeat("\xc3\xb1", 120);
	assert_ok(VALID_TITLE, s);
	free(s);
	assert_ok(VALID_BOOL, "0");
	assert_ok(VALID_BOOL, "1");
}

static void
test_page_bounds(void **state)
{
	(void)state;
	assert_ok(VALID_PAGE, "1");
	assert_ok(VALID_PAGE, "2");
	assert_ok(VALID_PAGE, "999");
	assert_ok(VALID_PAGE, "1000");
}

static void
test_id_bounds(void **state)
{
	(void)state;
	assert_ok(VALID_ID, "1");
	assert_ok(VALID_ID, "123456789");
	assert_ok(VALID_ID, "9007199254740991");
	assert_ok(VALID_ID, "9007199254740992");	/* 2^53 */
}

/* A password as typed at login or as the current one: any bytes but
 * NUL, up to 1024, kept as they are -- the hash decides. */
static void
test_secret(void **state)
{
	char *s;

	(void)state;
	assert_ok(VALID_SECRET, "");
	assert_ok(VALID_SECRET, "admin");	/* shorter than a new one */
	assert_ok(VALID_SECRET, "admin-pass-1");
	assert_ok(VALID_SECRET, "tab\there\x01 \xc3\xa9");	/* controls kept */
	assert_ok(VALID_SECRET, "  Mixed Case  ");
	s = repeat("x", 1024);
	assert_ok(VALID_SECRET, s);
	free(s);
}

static void
test_board_top_n(void **state)
{
	(void)state;
	assert_ok(VALID_BOARD, "posts");
	assert_ok(VALID_BOARD, "followers");
	assert_ok(VALID_BOARD, "following");
	assert_ok(VALID_BOARD, "likes");
	assert_ok(VALID_BOARD, "rating");
	assert_ok(VALID_TOP_N, "1");
	assert_ok(VALID_TOP_N, "10");
	assert_ok(VALID_TOP_N, "100");
	/* the refusal lists what they must be */
	assert_string_equal(valid_must(VALID_BOARD),
	    "posts, followers, following, likes or rating");
	assert_string_equal(valid_must(VALID_TOP_N), "a number from 1 to 100");
	assert_null(valid_must(VALID_NAME));
	assert_null(valid_must(VALID_SECRET));
}

static void
test_int_direct(void **state)
{
	long long v = -7;

	(void)state;
	assert_int_equal(valid_int("0", 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(valid_int("10", 0, 10, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(valid_int("9223372036854775807", 0, 9223372036854775807LL,
	    &v), 0);
	assert_true(v == 9223372036854775807LL);
	assert_int_equal(valid_int("11", 0, 10, &v), -1);
	assert_true(v == 9223372036854775807LL);	/* untouched on error */
}

static void
test_len_is_the_input(void **state)
{
	const char buf[] = "Alice!!!";
	char *norm = NULL;
	char *p;

	(void)state;
	/* s[0..len) is the value, whatever follows it */
	assert_int_equal(valid_check(VALID_LOGIN, buf, 5, &norm), 0);
	assert_string_equal(norm, "alice");
	free(norm);
	assert_int_equal(valid_check(VALID_BOOL, "1x", 1, NULL), 0);

	/* numbers too, without reading past len (ASan checks the heap copy) */
	p = malloc(3);
	assert_non_null(p);
	memcpy(p, "123", 3);
	assert_int_equal(valid_check(VALID_PAGE, p, 3, &norm), 0);
	assert_string_equal(norm, "123");
	free(norm);
	assert_int_equal(valid_check(VALID_ID, p, 2, &norm), 0);
	assert_string_equal(norm, "12");
	free(norm);
	free(p);
}

static void
test_utf8_counts(void **state)
{
	size_t n = 99;

	(void)state;
	assert_int_equal(valid_utf8("", 0, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(valid_utf8("abc", 3, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(valid_utf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9,
	    &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(valid_utf8("\xf4\x8f\xbf\xbf", 4, &n), 0);	/* U+10FFFF */
	assert_int_equal(n, 1);
	assert_int_equal(valid_utf8("\xee\x80\x80", 3, NULL), 0);	/* U+E000 */
	assert_int_equal(valid_utf8("\xed\x9f\xbf", 3, NULL), 0);	/* U+D7FF */
}

/* PostgreSQL's snapshots as pg_current_snapshot() gives them, the
 * longest one kept (noteview.h NOTE_SNAP_MAX) among them. */
static void
test_snapshot(void **state)
{
	char *s;

	(void)state;
	assert_ok(VALID_SNAPSHOT, "748:748:");
	assert_ok(VALID_SNAPSHOT, "748:760:748,751,759");
	assert_ok(VALID_SNAPSHOT, "1:1:");
	assert_ok(VALID_SNAPSHOT, "9223372036854775806:9223372036854775807:");
	s = repeat("1000000000,", 93);		/* 1023 bytes with the rest */
	memcpy(s, "1000000000:2000000000:", 22);
	s[strlen(s) - 1] = '\0';
	assert_int_equal(strlen(s), 1022);
	assert_ok(VALID_SNAPSHOT, s);
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_login),
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_invisible_is_blank),
		cmocka_unit_test(test_password),
		cmocka_unit_test(test_body),
		cmocka_unit_test(test_topic),
		cmocka_unit_test(test_title_bool),
		cmocka_unit_test(test_page_bounds),
		cmocka_unit_test(test_id_bounds),
		cmocka_unit_test(test_secret),
		cmocka_unit_test(test_board_top_n),
		cmocka_unit_test(test_snapshot),
		cmocka_unit_test(test_int_direct),
		cmocka_unit_test(test_len_is_the_input),
		cmocka_unit_test(test_utf8_counts),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
