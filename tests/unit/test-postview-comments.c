/* test-postview-comments.c -- the post page's comments (social/postview.h):
 * postview_load() keeps what the page shows, in order, at most
 * POSTVIEW_COMMENTS of them, in an array grown as the rows come: a post
 * without comments allocates none (every post page zeroed the most a
 * page shows, 168 KB, and freed it; jemalloc gave the memory back to the
 * system each time, a madvise() a post page), and one with a few holds
 * a few.  The comments past a page come on the next, after the last
 * one shown (?after=ID): the 501st was on no page at all. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <malloc.h>

#include "social/postview.h"
#include "store/app.h"
#include "store/db.h"
#include "store/db_int.h"

static struct db d;
static struct app a;

static int
setup(void **state)
{
	char sql[160];
	int i;

	(void)state;
	a.db = &d;
	if (db_open(&d, ":memory:") == -1 || db_exec(&d,
	    "INSERT INTO users(id, login, name, pwhash, created_at) "
	    "VALUES (7, 'ada', 'Ada', 'x', 1), (8, 'bob', 'Bob <b>', 'x', 1);"
	    "INSERT INTO posts(id, user_id, topic_id, body, status, is_deleted,"
	    " created_at, published_at, updated_at) VALUES"
	    " (41, 7, 1, 'no comments', 1, 0, 1, 1, 1),"
	    " (42, 7, 1, 'ten comments', 1, 0, 1, 1, 1),"
	    " (43, 7, 1, 'more than a page shows', 1, 0, 1, 1, 1);") == -1)
		return -1;
	if (db_begin(&d) == -1)
		return -1;
	/* 10 on post 42, the third deleted; 600 on post 43 */
	for (i = 1; i <= 10; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO comments(post_id, "
		    "user_id, body, is_deleted, created_at) VALUES (42, 8, "
		    "'c%d', %d, %d)", i, i == 3, i);
		if (db_exec(&d, sql) == -1)
			return -1;
	}
	for (i = 1; i <= 600; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO comments(post_id, "
		    "user_id, body, created_at) VALUES (43, 8, 'n%d', %d)", i,
		    i);
		if (db_exec(&d, sql) == -1)
			return -1;
	}
	return db_commit(&d);
}

static int
teardown(void **state)
{
	(void)state;
	db_close(&d);
	return 0;
}

static void
test_none_allocates_none(void **state)
{
	struct post_view v;

	(void)state;
	assert_int_equal(postview_load(&a, 41, 0, NULL, PV_FULL |
	    PV_CALLER_COUNTS, 0, &v), 1);
	assert_int_equal(v.ncomments, 0);
	assert_null(v.comments);
	postview_free(&v);
}

static void
test_a_few_in_order(void **state)
{
	struct post_view v;
	char want[16];
	int i, k;

	(void)state;
	assert_int_equal(postview_load(&a, 42, 0, NULL, PV_FULL |
	    PV_CALLER_COUNTS, 0, &v), 1);
	assert_int_equal(v.ncomments, 9);	/* the deleted one left out */
	/* grown once past its first size (8): 16 held, not 500 */
	assert_true(malloc_usable_size(v.comments) <
	    32 * sizeof(*v.comments));
	for (i = 0, k = 1; i < v.ncomments; i++, k++) {
		if (k == 3)
			k++;
		snprintf(want, sizeof(want), "c%d", k);
		assert_string_equal(v.comments[i].body, want);
		assert_string_equal(v.comments[i].login, "bob");
		assert_string_equal(v.comments[i].name, "Bob <b>");
		assert_int_equal(v.comments[i].user_id, 8);
		assert_int_equal(v.comments[i].created_at, k);
	}
	postview_free(&v);
}

static void
test_at_most_a_page(void **state)
{
	struct post_view v;

	(void)state;
	assert_int_equal(postview_load(&a, 43, 0, NULL, PV_FULL |
	    PV_CALLER_COUNTS, 0, &v), 1);
	assert_int_equal(v.ncomments, POSTVIEW_COMMENTS);
	assert_string_equal(v.comments[0].body, "n1");
	assert_string_equal(v.comments[POSTVIEW_COMMENTS - 1].body, "n500");
	assert_int_equal(v.comments_more, 1);
	postview_free(&v);
}

static void
test_the_next_page(void **state)
{
	struct post_view v;
	long long last, first;

	(void)state;
	assert_int_equal(postview_load(&a, 43, 0, NULL, PV_FULL |
	    PV_CALLER_COUNTS, 0, &v), 1);
	first = v.comments[0].id;
	last = v.comments[POSTVIEW_COMMENTS - 1].id;
	postview_free(&v);
	assert_int_equal(postview_load(&a, 43, 0, NULL, PV_FULL |
	    PV_CALLER_COUNTS, last, &v), 1);
	assert_int_equal(v.ncomments, 100);
	assert_string_equal(v.comments[0].body, "n501");
	assert_string_equal(v.comments[99].body, "n600");
	assert_int_equal(v.comments_more, 0);
	assert_int_equal(v.comments_after, last);
	postview_free(&v);
	/* a comment's page: the first for the first 500, else its own */
	assert_int_equal(postview_comment_page(&a, 43, first), 0);
	assert_int_equal(postview_comment_page(&a, 43, last), 0);
	assert_int_equal(postview_comment_page(&a, 43, last + 1), last);
	assert_int_equal(postview_comment_page(&a, 42, 5), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_none_allocates_none),
		cmocka_unit_test(test_a_few_in_order),
		cmocka_unit_test(test_at_most_a_page),
		cmocka_unit_test(test_the_next_page),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
