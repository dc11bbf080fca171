/* test-sesscache.c -- a session's Redis copy as text (shared/social/
 * sesscache.h): what sesscache_format() writes, sesscache_parse() reads
 * back; the badge poll trusts a copy until its time, a page only while
 * it is younger than SESSION_PAGE_MS and whole; anything bent is no
 * session. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "social/sesscache.h"

#define NOW	1800000000000LL

static struct session s;

static int
setup(void **state)
{
	(void)state;
	if (auth_init() != 0)
		return -1;
	memset(&s, 0, sizeof(s));
	s.user_id = 42;
	s.expires_at = NOW + 30LL * 86400000;
	s.is_admin = 1;
	auth_token_new(s.csrf);
	snprintf(s.login, sizeof(s.login), "alice_1");
	return 0;
}

static void
test_round_trip(void **state)
{
	char v[SESSCACHE_VALUE_MAX], want[SESSCACHE_VALUE_MAX];
	struct session o;
	int n;

	(void)state;
	n = sesscache_format(&s, NOW, v, sizeof(v));
	snprintf(want, sizeof(want), "%lld %lld 1 %s alice_1",
	    NOW + SESSION_CACHE_MS, NOW, s.csrf);
	assert_string_equal(v, want);
	assert_int_equal(n, (int)strlen(want));
	memset(&o, 0, sizeof(o));
	assert_int_equal(sesscache_parse(v, (size_t)n, NOW + 1000, 1, &o), 1);
	assert_string_equal(o.csrf, s.csrf);
	assert_string_equal(o.login, "alice_1");
	assert_int_equal(o.is_admin, 1);
	assert_true(o.expires_at == NOW + SESSION_CACHE_MS);
	/* a session ending sooner: the copy ends with it */
	s.expires_at = NOW + 5000;
	n = sesscache_format(&s, NOW, v, sizeof(v));
	assert_int_equal(sesscache_parse(v, (size_t)n, NOW + 4999, 0, &o), 1);
	assert_int_equal(sesscache_parse(v, (size_t)n, NOW + 5000, 0, &o), 0);
	assert_int_equal(sesscache_parse(v, (size_t)n, NOW + 5000, 1, &o), 0);
	s.expires_at = NOW + 30LL * 86400000;
}

static void
test_ages(void **state)
{
	char v[SESSCACHE_VALUE_MAX];
	struct session o;
	long long age;
	size_t n;

	(void)state;
	n = (size_t)sesscache_format(&s, NOW, v, sizeof(v));
	/* the poll: until the copy's time; a page: its age, the first half
	 * minute always, a minute at most, as its written time picks */
	age = clock_spread(SESSION_PAGE_MS, NOW);
	assert_true(age >= SESSION_PAGE_MS / 2 && age <= SESSION_PAGE_MS);
	assert_int_equal(sesscache_parse(v, n, NOW + SESSION_PAGE_MS / 2, 1,
	    &o), 1);
	assert_int_equal(sesscache_parse(v, n, NOW + age, 1, &o), 1);
	assert_int_equal(sesscache_parse(v, n, NOW + age + 1, 1, &o), 0);
	assert_int_equal(sesscache_parse(v, n, NOW + SESSION_PAGE_MS + 1, 1,
	    &o), 0);
	assert_int_equal(sesscache_parse(v, n, NOW + SESSION_PAGE_MS + 1, 0,
	    &o), 1);
	assert_int_equal(sesscache_parse(v, n, NOW + SESSION_CACHE_MS - 1, 0,
	    &o), 1);
	assert_int_equal(sesscache_parse(v, n, NOW + SESSION_CACHE_MS, 0, &o),
	    0);
	/* written in the future (another host's clock): a minute at most */
	assert_int_equal(sesscache_parse(v, n, NOW - SESSION_PAGE_MS, 1, &o), 1);
	assert_int_equal(sesscache_parse(v, n, NOW - SESSION_PAGE_MS - 1, 1,
	    &o), 0);
}

static void
test_bent(void **state)
{
	char v[SESSCACHE_VALUE_MAX], c[TOKEN_LEN + 1];
	struct session o;
	const char *bad[] = {
		"", " ", "x", "-1", "%lld", "%lld ",
		"%lld %lld", "%lld %lld 1", "%lld %lld 1 %s",
		"%lld %lld 1 %s ", "%lld %lld 2 %s alice",
		"%lld %lld 1 %s alice extra", "%lld %lld 1 %s al ice",
		"%lld %lld 1 %s al<ce", "%lld %lld 1 %sA alice",
		"%lld  %lld 1 %s alice", "%lld %lld 1 %s alice ",
		"%lld %lld 01 %s alice-x",
	};
	size_t i;

	(void)state;
	memcpy(c, s.csrf, sizeof(c));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(v, sizeof(v), bad[i], NOW + 1000, NOW, c);
		if (sesscache_parse(v, strlen(v), NOW, 1, &o) != 0)
			fail_msg("taken for a page: \"%s\"", v);
	}
	/* an old copy (its time only) still serves the poll, not a page */
	snprintf(v, sizeof(v), "%lld", NOW + 1000);
	assert_int_equal(sesscache_parse(v, strlen(v), NOW, 0, &o), 1);
	assert_int_equal(sesscache_parse(v, strlen(v), NOW, 1, &o), 0);
	assert_int_equal(sesscache_parse(NULL, 0, NOW, 0, &o), 0);
	/* a value cut short of its length is read only that far */
	snprintf(v, sizeof(v), "%lld %lld 1 %s alice", NOW + 1000, NOW, c);
	assert_int_equal(sesscache_parse(v, strlen(v) - 5, NOW, 1, &o), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_ages),
		cmocka_unit_test(test_bent),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, setup, NULL);
}
