/* test-route-match.c -- route_match: literal segments, ":id" (digits), ":s" (any segment), trailing slashes, argument ownership. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "web/route.h"

#define MAXARGS	4

static void
free_args(char **args, int n)
{
	while (n > 0)
		free(args[--n]);
}

/* pattern must not match path; no argument is left allocated (ASan). */
static void
assert_nomatch(const char *pattern, const char *path)
{
	char *args[MAXARGS] = { NULL };

	if (route_match(pattern, path, args, MAXARGS) != -1)
		fail_msg("\"%s\" matched \"%s\"", pattern, path);
}

static void
test_literals(void **state)
{
	char *args[MAXARGS] = { NULL };

	(void)state;
	assert_int_equal(route_match("/", "/", args, MAXARGS), 0);
	assert_int_equal(route_match("/feed", "/feed", args, MAXARGS), 0);
	assert_int_equal(route_match("/admin/users", "/admin/users", args,
	    MAXARGS), 0);
	assert_null(args[0]);
	assert_nomatch("/feed", "/feeds");
	assert_nomatch("/feed", "/fee");
	assert_nomatch("/feed", "/Feed");
	assert_nomatch("/feed", "feed");
	assert_nomatch("/feed", "");
	assert_nomatch("/feed", "/");
	assert_nomatch("/", "/feed");
	assert_nomatch("/", "");
	assert_nomatch("/", "//");
	assert_nomatch("/admin/users", "/admin");
	assert_nomatch("/admin/users", "/admin/user");
}

static void
test_id(void **state)
{
	char *args[MAXARGS] = { NULL };

	(void)state;
	assert_int_equal(route_match("/u/:id", "/u/42", args, MAXARGS), 1);
	assert_string_equal(args[0], "42");
	free_args(args, 1);
	assert_int_equal(route_match("/p/:id", "/p/9007199254740992", args,
	    MAXARGS), 1);
	assert_string_equal(args[0], "9007199254740992");
	free_args(args, 1);
	assert_nomatch("/u/:id", "/u/");
	assert_nomatch("/u/:id", "/u");
	assert_nomatch("/u/:id", "/u/4a");
	assert_nomatch("/u/:id", "/u/a4");
	assert_nomatch("/u/:id", "/u/-1");
	assert_nomatch("/u/:id", "/u/+1");
	assert_nomatch("/u/:id", "/u/1.5");
	assert_nomatch("/u/:id", "/u/%31");
	assert_nomatch("/u/:id", "/u/ 1");
	assert_nomatch("/u/:id", "/u/12345678901234567");	/* 17 digits */
}

static void
test_any_segment(void **state)
{
	char *args[MAXARGS] = { NULL };

	(void)state;
	assert_int_equal(route_match("/u/:s", "/u/alice", args, MAXARGS), 1);
	assert_string_equal(args[0], "alice");
	free_args(args, 1);
	assert_int_equal(route_match("/u/:s", "/u/42", args, MAXARGS), 1);
	assert_string_equal(args[0], "42");
	free_args(args, 1);
	assert_int_equal(route_match("/t/:s", "/t/a%20b<x>", args, MAXARGS), 1);
	assert_string_equal(args[0], "a%20b<x>");	/* verbatim */
	free_args(args, 1);
	assert_nomatch("/u/:s", "/u/");
	assert_nomatch("/u/:s", "/u");
	assert_nomatch("/u/:s", "/u//");
}

static void
test_several_args(void **state)
{
	char *args[MAXARGS] = { NULL };

	(void)state;
	assert_int_equal(route_match("/u/:s/posts/:id", "/u/bob/posts/7", args,
	    MAXARGS), 2);
	assert_string_equal(args[0], "bob");
	assert_string_equal(args[1], "7");
	free_args(args, 2);
	assert_int_equal(route_match("/:s/:s/:s", "/a/b/c", args, MAXARGS), 3);
	assert_string_equal(args[0], "a");
	assert_string_equal(args[1], "b");
	assert_string_equal(args[2], "c");
	free_args(args, 3);
}

static void
test_trailing_slash_and_extra(void **state)
{
	(void)state;
	assert_nomatch("/feed", "/feed/");
	assert_nomatch("/feed/", "/feed");
	assert_nomatch("/u/:id", "/u/42/");
	assert_nomatch("/u/:s", "/u/alice/");
	assert_nomatch("/u/:s", "/u/alice/extra");
	assert_nomatch("/u/:id", "/u/42/extra");
	assert_nomatch("/feed", "/feed/x");
	assert_nomatch("/feed", "//feed");
	assert_nomatch("/u/:s/posts", "/u/bob");
	assert_nomatch("/u/:s/posts", "/u/bob/");
}

static void
test_failure_frees_args(void **state)
{
	char *args[MAXARGS] = { NULL };

	(void)state;
	/* arguments made before the mismatch are freed (leak check) */
	assert_nomatch("/u/:s/posts/:id", "/u/bob/posts/x");
	assert_nomatch("/u/:s/posts/:id", "/u/bob/likes/7");
	assert_nomatch("/u/:s/posts/:id", "/u/bob/posts/7/");
	assert_nomatch("/:s/:s/:s", "/a/b");
	assert_nomatch("/:s/:s/x", "/a/b/y");
	/* more arguments than room: no match, nothing leaked */
	assert_int_equal(route_match("/:s/:s/:s", "/a/b/c", args, 2), -1);
	assert_int_equal(route_match("/u/:s", "/u/a", args, 0), -1);
	/* exactly enough room */
	assert_int_equal(route_match("/:s/:s", "/a/b", args, 2), 2);
	free_args(args, 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literals),
		cmocka_unit_test(test_id),
		cmocka_unit_test(test_any_segment),
		cmocka_unit_test(test_several_args),
		cmocka_unit_test(test_trailing_slash_and_extra),
		cmocka_unit_test(test_failure_frees_args),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
