/* test-kv-cookies.c -- kv_parse_cookies splits a Cookie header: spaces, quotes, malformed pairs, field limit. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "base/kv.h"

static void
assert_cookie(const struct kvlist *l, const char *key, const char *val)
{
	const struct kv *kv = kv_get(l, key);

	assert_non_null(kv);
	assert_string_equal(kv->val, val);
	assert_int_equal(kv->vlen, strlen(val));
}

static void
test_basic(void **state)
{
	struct kvlist l = { NULL, 0 };

	(void)state;
	kv_parse_cookies(&l, "sid=abc; csrf=def");
	assert_int_equal(l.n, 2);
	assert_string_equal(l.v[0].key, "sid");
	assert_string_equal(l.v[1].key, "csrf");
	assert_cookie(&l, "sid", "abc");
	assert_cookie(&l, "csrf", "def");
	kv_free(&l);

	kv_parse_cookies(&l, "one=1");
	assert_int_equal(l.n, 1);
	assert_cookie(&l, "one", "1");
	kv_free(&l);
}

static void
test_spaces_trimmed(void **state)
{
	struct kvlist l = { NULL, 0 };

	(void)state;
	kv_parse_cookies(&l, "  a = 1 ;\tb=2\t;c=3;d=x y ;  ");
	assert_int_equal(l.n, 4);
	assert_cookie(&l, "a", "1");
	assert_cookie(&l, "b", "2");
	assert_cookie(&l, "c", "3");
	assert_cookie(&l, "d", "x y");	/* inner space kept */
	kv_free(&l);
}

static void
test_no_percent_decoding(void **state)
{
	struct kvlist l = { NULL, 0 };

	(void)state;
	kv_parse_cookies(&l, "a=x%20y+z; b=c=d");
	assert_cookie(&l, "a", "x%20y+z");
	assert_cookie(&l, "b", "c=d");
	kv_free(&l);
}

static void
test_quotes_stripped(void **state)
{
	struct kvlist l = { NULL, 0 };

	(void)state;
	kv_parse_cookies(&l, "q=\"quoted\"; e=\"\"; h=\"; m=a\"b");
	assert_int_equal(l.n, 4);
	assert_cookie(&l, "q", "quoted");
	assert_cookie(&l, "e", "");
	assert_cookie(&l, "h", "\"");	/* a lone quote is not a pair */
	assert_cookie(&l, "m", "a\"b");
	kv_free(&l);
}

static void
test_malformed_skipped(void **state)
{
	struct kvlist l = { NULL, 0 };
	char big[KV_MAX_KEY + 16];

	(void)state;
	kv_parse_cookies(&l, "novalue; =orphan;  = x ; ;;ok=1; also");
	assert_int_equal(l.n, 1);
	assert_cookie(&l, "ok", "1");
	kv_free(&l);

	/* a key longer than KV_MAX_KEY is skipped, its neighbours kept */
	memset(big, 'k', KV_MAX_KEY + 1);
	snprintf(big + KV_MAX_KEY + 1, sizeof(big) - KV_MAX_KEY - 1, "=v; a=b");
	kv_parse_cookies(&l, big);
	assert_int_equal(l.n, 1);
	assert_cookie(&l, "a", "b");
	kv_free(&l);

	kv_parse_cookies(&l, "");
	assert_int_equal(l.n, 0);
	kv_parse_cookies(&l, NULL);
	assert_int_equal(l.n, 0);
	kv_free(&l);
}

static void
test_duplicates_first_wins(void **state)
{
	struct kvlist l = { NULL, 0 };

	(void)state;
	kv_parse_cookies(&l, "sid=first; sid=second");
	assert_int_equal(l.n, 2);
	assert_cookie(&l, "sid", "first");
	kv_free(&l);
}

static void
test_limit(void **state)
{
	struct kvlist l = { NULL, 0 };
	static char hdr[KV_MAX_COOKIES * 16];
	size_t i, n = 0;
	char want[16], name[16];

	(void)state;
	for (i = 0; i < KV_MAX_COOKIES + 10; i++)
		n += (size_t)snprintf(hdr + n, sizeof(hdr) - n, "c%zu=%zu; ",
		    i, i);
	kv_parse_cookies(&l, hdr);
	assert_int_equal(l.n, KV_MAX_COOKIES);
	snprintf(want, sizeof(want), "%d", KV_MAX_COOKIES - 1);
	snprintf(name, sizeof(name), "c%d", KV_MAX_COOKIES - 1);
	assert_cookie(&l, name, want);
	snprintf(name, sizeof(name), "c%d", KV_MAX_COOKIES);
	assert_null(kv_get(&l, name));
	kv_free(&l);
}

/* A browser's cookies of the site and of its parent domain (Chrome keeps
 * 180 a domain), the session's last: it is seen. */
static void
test_sid_after_many(void **state)
{
	struct kvlist l = { NULL, 0 };
	static char hdr[8192];
	size_t i, n = 0;

	(void)state;
	for (i = 0; i < 300; i++)
		n += (size_t)snprintf(hdr + n, sizeof(hdr) - n, "_a%zu=1; ", i);
	snprintf(hdr + n, sizeof(hdr) - n, "sid=7.abc");
	assert_true(strlen(hdr) < 8192);
	kv_parse_cookies(&l, hdr);
	assert_cookie(&l, "sid", "7.abc");
	kv_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_spaces_trimmed),
		cmocka_unit_test(test_no_percent_decoding),
		cmocka_unit_test(test_quotes_stripped),
		cmocka_unit_test(test_malformed_skipped),
		cmocka_unit_test(test_duplicates_first_wins),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_sid_after_many),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
