/* test-counters-bad-key.c -- cname_parse rejects every pending-hash field that cname_pfield would not write (bad object tag, non-canonical or overflowing id, unknown or wrong-object field, missing or bad topic); counters_family rejects unknown names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "count/counters.h"
#include "count/cstore.h"

static void
reject(const char *pfield)
{
	struct delta d;

	if (cname_parse(pfield, strlen(pfield), &d) != -1)
		fail_msg("cname_parse(\"%s\") accepted: %s %lld:%lld", pfield,
		    (int)d.fam >= 0 && d.fam < FAM__MAX ?
		    families[d.fam].name : "?", d.k1, d.k2);
}

static void
parse_ok(const char *pfield, enum family fam, long long k1, long long k2)
{
	struct delta d;

	assert_int_equal(cname_parse(pfield, strlen(pfield), &d), 0);
	assert_int_equal(d.fam, fam);
	assert_true(d.k1 == k1);
	assert_true(d.k2 == k2);
}

static void
test_bad_objects(void **state)
{
	static const char *const bad[] = {
		"", ":", "u", "u:", "u:posts", "x1:posts", "U1:posts",
		"1:posts", "uu1:posts", "tu1:posts", "pt1:likes", " u1:posts",
		"u 1:posts", "u-1:posts", "u+1:posts", "u01:posts", "u00:posts",
		"u1x:posts", "u1", "u1posts", "u1::posts", "{c1}:u1",
		"u9223372036854775808:posts", "u99999999999999999999:posts",
		"ut1", "ut:posts:7", "ut01:posts:7",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		reject(bad[i]);
	/* the largest id still parses */
	parse_ok("u9223372036854775807:posts", FAM_USER_POSTS,
	    9223372036854775807LL, 0);
	parse_ok("u0:posts", FAM_USER_POSTS, 0, 0);
}

static void
test_bad_fields(void **state)
{
	static const char *const bad[] = {
		/* plain objects */
		"u1:", "u1:nosuch", "u1:Posts", "u1:posts ", "u1: posts",
		"u1:post", "u1:postsx", "u1:posts\n", "u1:posts:7", "u1:~posts",
		"p1:likes:7", "t1:posts:7",
		"u1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		/* (user, topic) */
		"ut1:posts", "ut1:rating", "ut1:posts:", "ut1:posts:abc",
		"ut1:posts:7x", "ut1:posts:7:8", "ut1::7", "ut1:nosuch:7",
		"ut1:likes:7", "ut1:followers:7", "ut1:unread:7", "ut1:Posts:7",
		"ut1:posts7", "ut1:posts::7", "ut1:posts:7 ", "ut1:posts:07",
		"ut1:posts:-7", "ut1:posts:9223372036854775808",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		reject(bad[i]);
}

/* A field that is some other object's counter. */
static void
test_field_of_another_object(void **state)
{
	(void)state;
	reject("t1:likes");
	reject("t1:followers");
	reject("p1:followers");
	reject("p1:posts");
	reject("p1:unread");
	reject("u1:comments");
	reject("u1:views");
	reject("u1:rating");
	reject("ut1:comments:7");
	reject("ut1:views:7");
	/* while the right ones parse */
	parse_ok("t3:posts", FAM_TOPIC_POSTS, 3, 0);
	parse_ok("p3:views", FAM_POST_VIEWS, 3, 0);
	parse_ok("u3:likes", FAM_USER_LIKES, 3, 0);
	parse_ok("u3:unread", FAM_USER_UNREAD, 3, 0);
	parse_ok("ut3:rating:9", FAM_UT_RATING, 3, 9);
	parse_ok("ut3:posts:9", FAM_UT_POSTS, 3, 9);
}

/* Only len bytes count: a field is not read past its reply's length. */
static void
test_length_bounds(void **state)
{
	struct delta d;

	(void)state;
	assert_int_equal(cname_parse("p12:likes", 9, &d), 0);
	assert_int_equal(d.k1, 12);
	assert_int_equal(cname_parse("p12:likesx", 9, &d), 0);
	assert_int_equal(cname_parse("p12:likes", 8, &d), -1);
	assert_int_equal(cname_parse("ut12:posts:345", 12, &d), 0);
	assert_int_equal(d.k2, 3);
	assert_int_equal(cname_parse("p12:likes", 0, &d), -1);
}

static void
test_unknown_family_names(void **state)
{
	static const char *const bad[] = {
		"nope", "", "USER_POSTS", "user_posts ", " user_posts",
		"user_post", "user_postsx", "user", "posts", "likes",
		"user-posts", "user_topic", "user_topic_posts:7",
	};
	size_t i;

	(void)state;
	assert_int_equal(counters_family("nope"), FAM__MAX);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (counters_family(bad[i]) != FAM__MAX)
			fail_msg("counters_family(\"%s\") accepted", bad[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_objects),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_field_of_another_object),
		cmocka_unit_test(test_length_bounds),
		cmocka_unit_test(test_unknown_family_names),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
