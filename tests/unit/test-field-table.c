/* test-field-table.c -- a request's fields through the field table
 * (web/field.h): what each accessor returns and answers -- 400 naming
 * the field, with the kind's "must be" where it has one; a path argument
 * that names nothing 404; field_has() and field_try() answering nothing
 * -- and the leaderboards VALID_BOARD admits are count/lb.h's. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/kv.h"
#include "count/lb.h"
#include "web/field.h"
#include "web/req.h"

#define LQ	"\xe2\x80\x9c"	/* the quotes around a field's name */
#define RQ	"\xe2\x80\x9d"

/* A request of method with body (a form for POST, a query for GET);
 * no app, no FastCGI: nothing here does I/O. */
static struct req *
req_with(unsigned method, const char *s)
{
	struct req *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->method = method;
	r->identified = 1;
	assert_int_equal(kv_parse_form(method == METHOD_POST ? &r->form :
	    &r->query, s, strlen(s)), 0);
	return r;
}

static void
req_drop(struct req *r)
{
	req_finish(r);
	free(r);
}

/* r answered status with a page saying msg, and nothing else. */
static void
assert_answered(struct req *r, int status, const char *msg)
{
	assert_int_equal(r->status, status);
	assert_string_equal(r->err_msg, msg);
	buf_putc(&r->body, '\0');
	assert_non_null(strstr(r->body.p, msg));
}

static void
test_need(void **state)
{
	struct req *r = req_with(METHOD_POST, "login=Ann_1&name=");

	(void)state;
	assert_string_equal(field_need(r, "login", VALID_LOGIN), "ann_1");
	assert_int_equal(r->status, 0);
	assert_null(r->bad_field);
	/* present but empty: not valid; the hint says what is */
	assert_null(field_need(r, "name", VALID_NAME));
	assert_answered(r, 400, "The field " LQ "name" RQ " is not valid.");
	assert_string_equal(r->bad_field, "name");
	assert_string_equal(r->bad_msg, r->err_msg);
	assert_string_equal(r->bad_why, valid_hint(VALID_NAME, 0));
	req_drop(r);

	r = req_with(METHOD_POST, "login=ann");
	assert_null(field_need(r, "password", VALID_PASSWORD));
	assert_answered(r, 400, "The field " LQ "password" RQ " is missing.");
	assert_string_equal(r->bad_why, "This field is required.");
	req_drop(r);

	/* a GET reads the query, a POST its form only */
	r = req_with(METHOD_GET, "q=Ada");
	assert_string_equal(field_need(r, "q", VALID_NAME), "Ada");
	req_drop(r);
	r = req_with(METHOD_POST, "x=1");
	kv_parse_form(&r->query, "q=Ada", 5);
	assert_false(field_has(r, "q"));
	req_drop(r);
}

/* A kind with a "must be" says it: the leaderboard's fields. */
static void
test_need_must(void **state)
{
	struct req *r = req_with(METHOD_GET, "by=POSTS");

	(void)state;
	assert_null(field_need(r, "by", VALID_BOARD));
	assert_answered(r, 400, "The field " LQ "by" RQ " must be posts, "
	    "followers, following, likes or rating.");
	req_drop(r);
	r = req_with(METHOD_GET, "by=rating");
	assert_string_equal(field_need(r, "by", VALID_BOARD), "rating");
	req_drop(r);
	/* missing is missing, whatever the kind */
	r = req_with(METHOD_GET, "n=3");
	assert_null(field_need(r, "by", VALID_BOARD));
	assert_answered(r, 400, "The field " LQ "by" RQ " is missing.");
	req_drop(r);
}

static void
test_int(void **state)
{
	static const char *const bad[] = {
		"n=", "n=0", "n=101", "n=abc", "n=-1", "n=1.5", "n=1e2",
		"n=%00", "n=10%00", "n=1%20OR%201=1", "n=10'",
	};
	struct req *r = req_with(METHOD_GET, "by=posts");
	size_t i;

	(void)state;
	assert_int_equal(field_int(r, "n", VALID_TOP_N, 10), 10);
	assert_int_equal(r->status, 0);
	req_drop(r);
	r = req_with(METHOD_GET, "n=100");
	assert_int_equal(field_int(r, "n", VALID_TOP_N, 10), 100);
	req_drop(r);
	r = req_with(METHOD_GET, "n=1");
	assert_int_equal(field_int(r, "n", VALID_TOP_N, 10), 1);
	req_drop(r);
	/* sent, empty included: valid or 400 */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = req_with(METHOD_GET, bad[i]);
		assert_int_equal(field_int(r, "n", VALID_TOP_N, 10), -1);
		assert_answered(r, 400, "The field " LQ "n" RQ " must be a "
		    "number from 1 to 100.");
		req_drop(r);
	}
}

/* field_has and field_try answer nothing, whatever they find. */
static void
test_has_try(void **state)
{
	struct req *r = req_with(METHOD_POST,
	    "name=&current=&password=short&login=a%27b&secret=x%00y");

	(void)state;
	assert_true(field_has(r, "name"));
	assert_true(field_has(r, "current"));
	assert_false(field_has(r, "nothing"));
	assert_string_equal(field_try(r, "current", VALID_SECRET), "");
	assert_string_equal(field_try(r, "password", VALID_SECRET), "short");
	assert_null(field_try(r, "password", VALID_PASSWORD));
	assert_null(field_try(r, "login", VALID_LOGIN));
	assert_null(field_try(r, "secret", VALID_SECRET));	/* a NUL */
	assert_null(field_try(r, "nothing", VALID_SECRET));
	assert_int_equal(r->status, 0);
	assert_null(r->bad_field);
	assert_int_equal(r->body.len, 0);
	req_drop(r);
}

static void
test_arg(void **state)
{
	struct req *r = req_with(METHOD_GET, "");

	(void)state;
	r->args[0] = strdup("Ann_1");
	r->args[1] = strdup("Open-Source");
	r->nargs = 2;
	assert_string_equal(field_arg(r, 0, VALID_LOGIN, "No user."), "ann_1");
	assert_string_equal(field_arg(r, 1, VALID_TOPIC, "No topic."),
	    "open-source");
	assert_int_equal(r->status, 0);
	/* beyond the route's arguments: nothing named */
	assert_null(field_arg(r, 2, VALID_LOGIN, "There is no such user."));
	assert_answered(r, 404, "There is no such user.");
	req_drop(r);

	r = req_with(METHOD_GET, "");
	r->args[0] = strdup("general'--");
	r->nargs = 1;
	assert_null(field_arg(r, 0, VALID_TOPIC, "There is no such topic."));
	assert_answered(r, 404, "There is no such topic.");
	assert_null(r->bad_field);	/* no field of a form refused */
	req_drop(r);
}

/* Every leaderboard the field admits is one lb.h knows, and back. */
static void
test_boards_are_lb(void **state)
{
	static const char *const by[] = {
		"posts", "followers", "following", "likes", "rating",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(by) / sizeof(by[0]); i++) {
		assert_int_equal(valid_check(VALID_BOARD, by[i], strlen(by[i]),
		    NULL), 0);
		assert_int_not_equal(lb_family(by[i]), FAM__MAX);
	}
	assert_int_equal(valid_check(VALID_BOARD, "views", 5, NULL), -1);
	assert_int_equal(lb_family("views"), FAM__MAX);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_need),
		cmocka_unit_test(test_need_must),
		cmocka_unit_test(test_int),
		cmocka_unit_test(test_has_try),
		cmocka_unit_test(test_arg),
		cmocka_unit_test(test_boards_are_lb),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
