/* test-sql-table.c -- the statement table (sql.h) and the schema agree:
 * every statement of the enum has its text (designated initializers: a
 * forgotten one is NULL here, never a neighbour's text), every text
 * prepares against the schema after all its migrations, and the inserts
 * of a like's write and the deletes of an unlike's return no columns (no
 * RETURNING on SQLite). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "store/refold.h"
#include "store/schema.h"
#include "store/sql.h"

/* An in-memory database with the schema after all its migrations. */
static sqlite3 *
schema_db(void)
{
	sqlite3 *db;
	int v;

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(refold_sqlite_function(db), 0);	/* step 22's */
	for (v = 0; v < schema_version; v++)
		assert_int_equal(sqlite3_exec(db, schema_migrations[v], NULL,
		    NULL, NULL), SQLITE_OK);
	return db;
}

static void
test_every_statement_prepares(void **state)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	int i;

	(void)state;
	db = schema_db();
	for (i = 0; i < STMT__MAX; i++) {
		if (sql_text[i] == NULL)
			fail_msg("statement %d has no text", i);
		s = NULL;
		if (sqlite3_prepare_v2(db, sql_text[i], -1, &s, NULL) !=
		    SQLITE_OK)
			fail_msg("statement %d: %s", i, sqlite3_errmsg(db));
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
}

/* The query plan of statement id, as one text (EXPLAIN QUERY PLAN). */
static void
plan(sqlite3 *db, int id, char *out, size_t sz)
{
	char *q = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", sql_text[id]);
	sqlite3_stmt *s = NULL;
	size_t n = 0;

	assert_int_equal(sqlite3_prepare_v2(db, q, -1, &s, NULL), SQLITE_OK);
	out[0] = '\0';
	while (sqlite3_step(s) == SQLITE_ROW && n + 2 < sz)
		n += (size_t)snprintf(out + n, sz - n, "%s\n",
		    (const char *)sqlite3_column_text(s, 3));
	sqlite3_finalize(s);
	sqlite3_free(q);
}

/* Fails when the plan of one of the n statements ids has any of the
 * texts bad (NULL-terminated), saying the statement does `what`. */
static void
plans_lack(sqlite3 *db, const int *ids, size_t n, const char *const *bad,
    const char *what)
{
	char p[4096];
	size_t i, j;

	for (i = 0; i < n; i++) {
		plan(db, ids[i], p, sizeof(p));
		for (j = 0; bad[j] != NULL; j++)
			if (strstr(p, bad[j]) != NULL)
				fail_msg("statement %d %s:\n%s", ids[i], what,
				    p);
	}
}

/* Requests whose cost must follow what they show, never the table's
 * size: the people search reads a range of its index, a topic's board is
 * rebuilt from the topic's own authors (issue: hardening, "unbounded
 * work per request"). */
static void
test_bounded_plans(void **state)
{
	static const int ids[] = { STMT_PEOPLE_FIND, STMT_COUNTERS_OF_TOPIC,
	    STMT_TOPIC_PUBLIC, STMT_VIEWER_MARKS, STMT_FOLLOWING_AMONG };
	static const char *const scans[] = { "SCAN counters",
	    "SCAN name_words", "SCAN likes", "SCAN follows", "SCAN posts",
	    "SCAN c\n", NULL };
	char p[2048];
	sqlite3 *db;

	(void)state;
	db = schema_db();
	plans_lack(db, ids, sizeof(ids) / sizeof(ids[0]), scans,
	    "scans a table");
	/* and a topic's counters are read one key each, not every counter
	 * of the family (SEARCH ... (name=?) alone would read them all) */
	plan(db, STMT_COUNTERS_OF_TOPIC, p, sizeof(p));
	if (strstr(p, "PRIMARY KEY (name=? AND key=?)") == NULL)
		fail_msg("a topic's ratings read by family:\n%s", p);
	sqlite3_close(db);
}

/* A feed's statement runs its subqueries once per post: none may sort
 * (a temporary B-tree is made and cleared each time, even for a post with
 * nothing to sort: the newest followee repost of each post was a sixth
 * of the feed statement's time until schema step 19's index). */
static void
test_feed_sorts_nothing(void **state)
{
	static const int ids[] = { STMT_HOME_BY_IDS, STMT_POSTS_MARKS_BY_IDS };
	static const char *const sorts[] = { "TEMP B-TREE", NULL };
	sqlite3 *db;

	(void)state;
	db = schema_db();
	plans_lack(db, ids, sizeof(ids) / sizeof(ids[0]), sorts, "sorts");
	sqlite3_close(db);
}

/* A like writes its row, its notification and its outbox row, a repost
 * its row: on SQLite each insert has no result columns (no RETURNING: the
 * id is the last insert rowid, dbq_insert_id()).  An unlike deletes its
 * row and its notification, their columns read first by a SELECT
 * (dbq_cheap_returning()).  A RETURNING clause makes SQLite fill and read a
 * temporary table every run: ~4 us a statement, ~10 % of the social
 * writer's time a like. */
static void
test_hot_inserts_return_nothing(void **state)
{
	static const int ids[] = { STMT_LIKE_INSERT, STMT_REPOST_INSERT,
	    STMT_NOTE_INSERT, STMT_OUTBOX_ADD, STMT_LIKE_DELETE,
	    STMT_NOTE_REMOVE_ID };
	sqlite3 *db;
	sqlite3_stmt *s;
	size_t i;

	(void)state;
	db = schema_db();
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		assert_int_equal(sqlite3_prepare_v2(db, sql_text[ids[i]], -1,
		    &s, NULL), SQLITE_OK);
		if (sqlite3_column_count(s) != 0)
			fail_msg("statement %d returns columns: %s", ids[i],
			    sql_text[ids[i]]);
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
}

/* The statements that stream on PostgreSQL (sql_stream: a cursor
 * declared for the query) are queries, and the scans reconciliation
 * reads whole are among them: the counters of a family, every post's
 * author (the recounts: test-counters-catalog). */
static void
test_streams_are_queries(void **state)
{
	int i, n = 0;

	(void)state;
	for (i = 0; i < STMT__MAX; i++) {
		if (!sql_stream[i])
			continue;
		n++;
		if (strncmp(sql_text[i], "SELECT ", 7) != 0 ||
		    (sql_pg_text[i] != NULL &&
		    strncmp(sql_pg_text[i], "SELECT ", 7) != 0))
			fail_msg("statement %d streams and is no query: %s", i,
			    sql_text[i]);
	}
	assert_true(n > 2);
	assert_int_equal(sql_stream[STMT_COUNTERS_OF_FAMILY], 1);
	assert_int_equal(sql_stream[STMT_POST_OWNERS], 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_statement_prepares),
		cmocka_unit_test(test_bounded_plans),
		cmocka_unit_test(test_feed_sorts_nothing),
		cmocka_unit_test(test_hot_inserts_return_nothing),
		cmocka_unit_test(test_streams_are_queries),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
