/* test-kv-bad-input.c -- kv_parse_form rejects bad %-escapes, empty or long keys and too many fields. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/kv.h"

/* s must be rejected; the partial list is freed without leaks. */
static void
assert_bad(const char *s)
{
	struct kvlist l = { NULL, 0 };

	if (kv_parse_form(&l, s, strlen(s)) != -1)
		fail_msg("accepted malformed form \"%s\"", s);
	kv_free(&l);
	assert_null(l.v);
	assert_int_equal(l.n, 0);
}

static void
test_bad_escapes(void **state)
{
	(void)state;
	assert_bad("%");
	assert_bad("a=%");
	assert_bad("a=%4");
	assert_bad("a=%zz");
	assert_bad("a=%4g");
	assert_bad("a=%g4");
	assert_bad("a=x%");
	assert_bad("a=x%2");
	assert_bad("a=% 41");
	assert_bad("a=%%41");
	assert_bad("a=%-1");
	assert_bad("a=%+1");
	assert_bad("%zz=1");
	assert_bad("k%=1");
	assert_bad("ok=1&b=%4");
}

static void
test_escape_split_by_length(void **state)
{
	struct kvlist l = { NULL, 0 };
	const char s[] = "a=%41";

	(void)state;
	/* "%4" at the end of the given length: the "1" after it is not input */
	assert_int_equal(kv_parse_form(&l, s, 4), -1);
	kv_free(&l);
	assert_int_equal(kv_parse_form(&l, s, 5), 0);
	assert_string_equal(kv_get(&l, "a")->val, "A");
	kv_free(&l);
}

static void
test_empty_key(void **state)
{
	(void)state;
	assert_bad("=x");
	assert_bad("=");
	assert_bad("a=1&=2");
	assert_bad("%00=1");	/* a key that decodes to NUL */
	assert_bad("a%00b=1");	/* a key with an embedded NUL */
}

static void
test_long_key(void **state)
{
	char s[KV_MAX_KEY + 4];

	(void)state;
	memset(s, 'k', KV_MAX_KEY + 1);
	s[KV_MAX_KEY + 1] = '=';
	s[KV_MAX_KEY + 2] = '1';
	s[KV_MAX_KEY + 3] = '\0';
	assert_bad(s);
	s[KV_MAX_KEY + 1] = '\0';	/* bare key, no '=' */
	assert_bad(s);
}

static void
test_too_many_fields(void **state)
{
	struct kvlist l = { NULL, 0 };
	char s[(KV_MAX_FIELDS + 1) * 4 + 1];
	size_t i, n = 0;

	(void)state;
	for (i = 0; i < KV_MAX_FIELDS + 1; i++) {
		s[n++] = 'f';
		s[n++] = '=';
		s[n++] = '1';
		s[n++] = '&';
	}
	s[n] = '\0';
	assert_bad(s);

	/* the limit counts fields already in the list (query + form) */
	assert_int_equal(kv_parse_form(&l, s, (size_t)KV_MAX_FIELDS * 4), 0);
	assert_int_equal(l.n, KV_MAX_FIELDS);
	assert_int_equal(kv_parse_form(&l, "x=1", 3), -1);
	assert_int_equal(l.n, KV_MAX_FIELDS);
	/* nothing but separators adds nothing and is fine */
	assert_int_equal(kv_parse_form(&l, "&&", 2), 0);
	kv_free(&l);
}

static void
test_partial_list_kept(void **state)
{
	struct kvlist l = { NULL, 0 };

	(void)state;
	assert_int_equal(kv_parse_form(&l, "a=1&b=2&c=%zz&d=4", 17), -1);
	assert_int_equal(l.n, 2);
	assert_string_equal(kv_get(&l, "b")->val, "2");
	assert_null(kv_get(&l, "c"));
	assert_null(kv_get(&l, "d"));
	kv_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_escapes),
		cmocka_unit_test(test_escape_split_by_length),
		cmocka_unit_test(test_empty_key),
		cmocka_unit_test(test_long_key),
		cmocka_unit_test(test_too_many_fields),
		cmocka_unit_test(test_partial_list_kept),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
