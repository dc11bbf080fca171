/* test-post-head.c -- what an action reads of a post (social/post.h):
 * post_head() gives the author, topic and visibility that post_get()
 * gives, with one lookup of the posts table (no join of the author or
 * the topic, no copy of the body); a draft or deleted post reads as one,
 * an absent post is 0. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "social/post.h"
#include "store/db.h"
#include "store/db_int.h"
#include "store/sql.h"

static struct db d;

static int
setup(void **state)
{
	(void)state;
	if (db_open(&d, ":memory:") == -1)
		return -1;
	return db_exec(&d,
	    "INSERT INTO users(id, login, name, pwhash, created_at) "
	    "VALUES (7, 'ada', 'Ada', 'x', 1), (8, 'bob', 'Bob', 'x', 1);"
	    "INSERT INTO topics(id, slug, created_at) VALUES (3, 'math', 1);"
	    "INSERT INTO posts(id, user_id, topic_id, body, status, is_deleted,"
	    " created_at, published_at, updated_at) VALUES"
	    " (41, 7, 3, 'a visible post', 1, 0, 1, 1, 1),"
	    " (42, 8, 3, 'a draft', 0, 0, 1, NULL, 1),"
	    " (43, 7, 3, 'deleted', 1, 1, 1, 1, 1);");
}

static int
teardown(void **state)
{
	(void)state;
	db_close(&d);
	return 0;
}

static void
test_head_as_post_get(void **state)
{
	struct post h, p;
	long long id;

	(void)state;
	for (id = 41; id <= 43; id++) {
		assert_int_equal(post_head(&d, id, &h), 1);
		assert_int_equal(post_get(&d, id, &p), 1);
		assert_int_equal(h.id, id);
		assert_int_equal(h.user_id, p.user_id);
		assert_int_equal(h.topic_id, p.topic_id);
		assert_int_equal(POST_VISIBLE(&h), POST_VISIBLE(&p));
		assert_null(h.body);		/* nothing to free */
		post_free(&p);
	}
	assert_int_equal(post_head(&d, 41, &h), 1);
	assert_true(POST_VISIBLE(&h));
	assert_int_equal(post_head(&d, 42, &h), 1);
	assert_false(POST_VISIBLE(&h));		/* a draft */
	assert_int_equal(post_head(&d, 43, &h), 1);
	assert_false(POST_VISIBLE(&h));		/* deleted */
	assert_int_equal(post_head(&d, 99, &h), 0);
	assert_int_equal(h.user_id, 0);
}

/* One table, searched by its key: no join, no scan. */
static void
test_head_one_lookup(void **state)
{
	char q[512], out[512] = "";
	sqlite3_stmt *s;
	size_t n = 0;

	(void)state;
	snprintf(q, sizeof(q), "EXPLAIN QUERY PLAN %s",
	    sql_text[STMT_POST_HEAD]);
	assert_int_equal(sqlite3_prepare_v2(d.h, q, -1, &s, NULL), SQLITE_OK);
	while (sqlite3_step(s) == SQLITE_ROW && n < sizeof(out))
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s;",
		    (const char *)sqlite3_column_text(s, 3));
	sqlite3_finalize(s);
	assert_string_equal(out,
	    "SEARCH posts USING INTEGER PRIMARY KEY (rowid=?);");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_head_as_post_get),
		cmocka_unit_test(test_head_one_lookup),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
