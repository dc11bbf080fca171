/* test-kv-form.c -- kv_parse_form decodes url-encoded forms: +, %XX, empty pairs, bare keys, duplicates, %00. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/kv.h"

/* Parses s (must succeed) into *l. */
static void
parse_ok(struct kvlist *l, const char *s)
{
	assert_int_equal(kv_parse_form(l, s, strlen(s)), 0);
}

static void
assert_field(const struct kvlist *l, const char *key, const char *val)
{
	const struct kv *kv = kv_get(l, key);

	assert_non_null(kv);
	assert_string_equal(kv->key, key);
	assert_int_equal(kv->vlen, strlen(val));
	assert_memory_equal(kv->val, val, strlen(val) + 1);
}

static void
test_simple_pairs(void **state)
{
	struct kvlist l = { NULL, 0 };

	(void)state;
	parse_ok(&l, "a=1&bb=two&c=");
	assert_int_equal(l.n, 3);
	assert_string_equal(l.v[0].key, "a");
	assert_string_equal(l.v[1].key, "bb");
	assert_string_equal(l.v[2].key, "c");
	assert_field(&l, "a", "1");
	assert_field(&l, "bb", "two");
	assert_field(&l, "c", "");
	assert_null(kv_get(&l, "d"));
	assert_null(kv_get(&l, "A"));
	kv_free(&l);
	assert_null(l.v);
	assert_int_equal(l.n, 0);
}

static void
test_plus_and_percent(void **state)
{
	struct kvlist l = { NULL, 0 };

	(void)state;
	parse_ok(&l, "msg=x+y%21&k%65y=%3Cb%3E&lower=%c3%a9&eq=a%3Db%26c&p=%2B+%25");
	assert_int_equal(l.n, 5);
	assert_field(&l, "msg", "x y!");
	assert_field(&l, "key", "<b>");
	assert_field(&l, "lower", "\xc3\xa9");
	assert_field(&l, "eq", "a=b&c");
	assert_field(&l, "p", "+ %");
	kv_free(&l);
}

static void
test_value_with_equals(void **state)
{
	struct kvlist l = { NULL, 0 };

	(void)state;
	parse_ok(&l, "a=b=c&d==");
	assert_field(&l, "a", "b=c");
	assert_field(&l, "d", "=");
	kv_free(&l);
}

static void
test_empty_pairs_skipped(void **state)
{
	struct kvlist l = { NULL, 0 };

	(void)state;
	parse_ok(&l, "&&a=1&&&b=2&");
	assert_int_equal(l.n, 2);
	assert_field(&l, "a", "1");
	assert_field(&l, "b", "2");
	kv_free(&l);

	parse_ok(&l, "");
	assert_int_equal(l.n, 0);
	parse_ok(&l, "&");
	assert_int_equal(l.n, 0);
	assert_int_equal(kv_parse_form(&l, NULL, 0), 0);
	assert_int_equal(l.n, 0);
	kv_free(&l);
}

static void
test_key_without_equals(void **state)
{
	struct kvlist l = { NULL, 0 };

	(void)state;
	parse_ok(&l, "flag&x=1&other");
	assert_int_equal(l.n, 3);
	assert_field(&l, "flag", "");
	assert_field(&l, "x", "1");
	assert_field(&l, "other", "");
	kv_free(&l);
}

static void
test_duplicates_first_wins(void **state)
{
	struct kvlist l = { NULL, 0 };

	(void)state;
	parse_ok(&l, "id=1&id=2&id=3");
	assert_int_equal(l.n, 3);
	assert_field(&l, "id", "1");
	assert_string_equal(l.v[1].val, "2");
	assert_string_equal(l.v[2].val, "3");
	kv_free(&l);
}

static void
test_nul_kept_with_vlen(void **state)
{
	struct kvlist l = { NULL, 0 };
	const struct kv *kv;

	(void)state;
	parse_ok(&l, "v=ab%00cd&z=%00");
	kv = kv_get(&l, "v");
	assert_non_null(kv);
	assert_int_equal(kv->vlen, 5);
	assert_memory_equal(kv->val, "ab\0cd", 6);
	assert_int_equal(strlen(kv->val), 2);
	kv = kv_get(&l, "z");
	assert_non_null(kv);
	assert_int_equal(kv->vlen, 1);
	assert_int_equal(kv->val[0], '\0');
	kv_free(&l);
}

static void
test_length_bounds_input(void **state)
{
	struct kvlist l = { NULL, 0 };
	const char s[] = "a=12345&b=2";

	(void)state;
	/* only the first 4 bytes are input: "a=12" */
	assert_int_equal(kv_parse_form(&l, s, 4), 0);
	assert_int_equal(l.n, 1);
	assert_field(&l, "a", "12");
	kv_free(&l);
}

static void
test_appends_and_limits(void **state)
{
	struct kvlist l = { NULL, 0 };
	char key[KV_MAX_KEY + 3];
	char form[KV_MAX_FIELDS * 4 + 1];
	size_t i, n = 0;

	(void)state;
	parse_ok(&l, "q=1");
	parse_ok(&l, "r=2");
	assert_int_equal(l.n, 2);
	assert_field(&l, "q", "1");
	assert_field(&l, "r", "2");
	kv_free(&l);

	/* a key of exactly KV_MAX_KEY bytes is fine */
	memset(key, 'k', KV_MAX_KEY);
	key[KV_MAX_KEY] = '=';
	key[KV_MAX_KEY + 1] = '1';
	key[KV_MAX_KEY + 2] = '\0';
	assert_int_equal(kv_parse_form(&l, key, strlen(key)), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(strlen(l.v[0].key), KV_MAX_KEY);
	kv_free(&l);

	/* exactly KV_MAX_FIELDS fields are fine */
	for (i = 0; i < KV_MAX_FIELDS; i++) {
		form[n++] = 'a';
		form[n++] = '=';
		form[n++] = (char)('0' + i % 10);
		form[n++] = '&';
	}
	form[n] = '\0';
	assert_int_equal(kv_parse_form(&l, form, n), 0);
	assert_int_equal(l.n, KV_MAX_FIELDS);
	kv_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple_pairs),
		cmocka_unit_test(test_plus_and_percent),
		cmocka_unit_test(test_value_with_equals),
		cmocka_unit_test(test_empty_pairs_skipped),
		cmocka_unit_test(test_key_without_equals),
		cmocka_unit_test(test_duplicates_first_wins),
		cmocka_unit_test(test_nul_kept_with_vlen),
		cmocka_unit_test(test_length_bounds_input),
		cmocka_unit_test(test_appends_and_limits),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
