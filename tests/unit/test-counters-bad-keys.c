/* test-counters-bad-keys.c -- cstore_parse rejects malformed hash keys and fields (bookkeeping "~F" / "^B:F", wrong object, missing or bad topic); family_by_name rejects unknown names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "counters.h"
#include "cstore.h"

static void
reject(const char *hash, const char *field)
{
	struct delta d;

	if (cstore_parse(hash, field, &d) != -1)
		fail_msg("cstore_parse(\"%s\", \"%s\") accepted: %s %lld:%lld",
		    hash, field, (int)d.fam >= 0 && d.fam < FAM__MAX ?
		    families[d.fam].name : "?", d.k1, d.k2);
}

static void
parse_ok(const char *hash, const char *field, enum family fam, long long k1,
    long long k2)
{
	struct delta d;

	assert_int_equal(cstore_parse(hash, field, &d), 0);
	assert_int_equal(d.fam, fam);
	assert_true(d.k1 == k1);
	assert_true(d.k2 == k2);
}

static void
test_bad_hash_keys(void **state)
{
	static const char *const bad[] = {
		"", "{u}:n", "{x1}:n", "{u1}:z", "{u1}:n:extra", "u1:n",
		"{u1}", "{u1}:", "{u1}n", "{u1:n", "{u1}}:n", "{1}:n",
		"{u1x}:n", "{U1}:n", "{u1}:N", "{u1}:nn", "{u1}:ntt",
		"{u1}:n ", "{u1}:n\n", " {u1}:n", "{p1}:nt", "{t1}:nt",
		"{u}:nt", "{flush}:dirty", "{u1}:nt:x", "{}:n", "{",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		reject(bad[i], "posts");
		reject(bad[i], "likes");
		reject(bad[i], "posts:7");
	}
	/* the same fields on good keys are fine */
	parse_ok("{u1}:n", "posts", FAM_USER_POSTS, 1, 0);
	parse_ok("{p1}:n", "likes", FAM_POST_LIKES, 1, 0);
	parse_ok("{u1}:nt", "posts:7", FAM_UT_POSTS, 1, 7);
}

static void
test_bad_fields(void **state)
{
	static const char *const plain[] = {	/* {u1}:n, {p1}:n, {t1}:n */
		"", "nosuch", "~posts", "~likes", "^3:posts", "^3:likes", "~v",
		"posts:7", "likes:7", "Posts", "posts ", " posts", "post",
		"postsx", "posts\n",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	static const char *const ut[] = {	/* {u1}:nt */
		"", "posts", "rating", "posts:", "posts:abc", "posts:7x",
		"posts:7:8", "~posts", "~posts:7", "^3:posts", "^3:posts:7",
		"~v", ":7", "nosuch:7", "likes:7", "followers:7", "unread:7",
		"Posts:7", "posts7", "posts::7", "posts:7 ", "posts:7\n",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:7",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		reject("{u1}:n", plain[i]);
		reject("{p1}:n", plain[i]);
		reject("{t1}:n", plain[i]);
	}
	for (i = 0; i < sizeof(ut) / sizeof(ut[0]); i++)
		reject("{u1}:nt", ut[i]);
}

/* A field that is some other object's counter. */
static void
test_field_of_another_object(void **state)
{
	(void)state;
	reject("{t1}:n", "likes");
	reject("{t1}:n", "followers");
	reject("{p1}:n", "followers");
	reject("{p1}:n", "posts");
	reject("{p1}:n", "unread");
	reject("{u1}:n", "comments");
	reject("{u1}:n", "views");
	reject("{u1}:n", "rating");
	reject("{u1}:nt", "comments:7");
	reject("{u1}:nt", "views:7");
	/* while the right ones parse */
	parse_ok("{t3}:n", "posts", FAM_TOPIC_POSTS, 3, 0);
	parse_ok("{p3}:n", "views", FAM_POST_VIEWS, 3, 0);
	parse_ok("{u3}:n", "likes", FAM_USER_LIKES, 3, 0);
	parse_ok("{u3}:nt", "rating:9", FAM_UT_RATING, 3, 9);
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
	assert_int_equal(family_by_name("nope"), FAM__MAX);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (family_by_name(bad[i]) != FAM__MAX)
			fail_msg("family_by_name(\"%s\") accepted", bad[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_hash_keys),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_field_of_another_object),
		cmocka_unit_test(test_unknown_family_names),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
