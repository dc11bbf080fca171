/* test-schema-like-note.c -- schema 9 (shared/store/schema.c): a like remembers
 * its notification.  The migration fills likes.note_id from the
 * notifications that exist (a like with none, or whose notification its
 * owner deleted, keeps NULL), and notifications_source leaves like
 * notifications out; the withdrawing statements of shared/store/sql.c still
 * find theirs through an index or the rowid, never by scanning a
 * recipient's notifications. */
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

static sqlite3 *db;

static void
exec(const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
}

static long long
one(const char *sql)
{
	sqlite3_stmt *s;
	long long v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	v = sqlite3_column_type(s, 0) == SQLITE_NULL ? -1 :
	    sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* The query plan of a statement of sql.c, its lines joined. */
static void
plan(enum stmt st, char *out, size_t sz)
{
	char q[2048];
	sqlite3_stmt *s;
	size_t n = 0;

	snprintf(q, sizeof(q), "EXPLAIN QUERY PLAN %s", sql_text[st]);
	assert_int_equal(sqlite3_prepare_v2(db, q, -1, &s, NULL), SQLITE_OK);
	out[0] = '\0';
	while (sqlite3_step(s) == SQLITE_ROW && n < sz)
		n += (size_t)snprintf(out + n, sz - n, "%s;",
		    (const char *)sqlite3_column_text(s, 3));
	sqlite3_finalize(s);
}

static int
setup(void **state)
{
	int v;

	(void)state;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
	    refold_sqlite_function(db) == -1)	/* step 22 calls it */
		return -1;
	/* everything before schema 9, then rows as schema 8 had them */
	for (v = 0; v < 8; v++)
		if (sqlite3_exec(db, schema_migrations[v], NULL, NULL, NULL) !=
		    SQLITE_OK)
			return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	return sqlite3_close(db) == SQLITE_OK ? 0 : -1;
}

static void
test_backfill_and_plans(void **state)
{
	char p[1024];

	(void)state;
	assert_true(schema_version >= 9);
	exec("INSERT INTO users(id, login, name, pwhash, created_at) VALUES"
	    " (1, 'a', 'a', 'x', 0), (2, 'b', 'b', 'x', 0), (3, 'c', 'c', 'x', 0);"
	    "INSERT INTO posts(id, user_id, topic_id, body, status, created_at,"
	    " published_at, updated_at) VALUES (10, 1, 1, 'p', 1, 0, 0, 0),"
	    " (11, 1, 1, 'q', 1, 0, 0, 0);"
	    /* b liked 10 and 11 (11's notification deleted by its owner),
	     * c liked 10, a liked its own 10 (no notification) */
	    "INSERT INTO likes(post_id, user_id, created_at) VALUES"
	    " (10, 2, 0), (11, 2, 0), (10, 3, 0), (10, 1, 0);"
	    "INSERT INTO notifications(id, user_id, actor_id, kind, post_id,"
	    " created_at) VALUES (5, 1, 2, 'like', 10, 0),"
	    " (6, 1, 3, 'repost', 10, 0), (7, 1, 3, 'like', 10, 0),"
	    " (8, 1, 2, 'follow', NULL, 0);");
	exec(schema_migrations[8]);
	assert_int_equal(one("SELECT note_id FROM likes WHERE post_id = 10 AND "
	    "user_id = 2"), 5);
	assert_int_equal(one("SELECT note_id FROM likes WHERE post_id = 10 AND "
	    "user_id = 3"), 7);
	assert_int_equal(one("SELECT note_id FROM likes WHERE post_id = 11 AND "
	    "user_id = 2"), -1);
	assert_int_equal(one("SELECT note_id FROM likes WHERE post_id = 10 AND "
	    "user_id = 1"), -1);
	/* the index holds every kind but likes */
	assert_int_equal(one("SELECT COUNT(*) FROM notifications "
	    "INDEXED BY notifications_source WHERE kind <> 'like' AND "
	    "actor_id > 0"), 2);
	/* the schema since, and the groups made of the rows before: one each */
	for (int v = 9; v < schema_version; v++)
		exec(schema_migrations[v]);
	assert_int_equal(one("SELECT COUNT(*) FROM note_groups g JOIN "
	    "notifications n ON n.group_id = g.id AND n.id = g.id WHERE "
	    "g.size = 1 AND g.unread = 1"), 4);
	/* a follow's or comment's withdrawal searches the partial index; a
	 * like's goes by rowid */
	plan(STMT_NOTE_REMOVE, p, sizeof(p));
	assert_non_null(strstr(p, "USING INDEX notifications_source"));
	plan(STMT_NOTE_REMOVE_ID, p, sizeof(p));
	assert_non_null(strstr(p, "INTEGER PRIMARY KEY"));
	plan(STMT_LIKE_DELETE, p, sizeof(p));
	assert_null(strstr(p, "SCAN"));
	plan(STMT_LIKE_NOTE, p, sizeof(p));
	assert_null(strstr(p, "SCAN"));
	/* what an unlike reads before it deletes (SQLite) goes the same way */
	plan(STMT_NOTE_READ_OF, p, sizeof(p));
	assert_non_null(strstr(p, "INTEGER PRIMARY KEY"));
	plan(STMT_LIKE_NOTE_OF, p, sizeof(p));
	assert_null(strstr(p, "SCAN"));
	/* the groups (social/notify.h): nothing a user's notifications are
	 * scanned for, however many there are */
	plan(STMT_NOTE_GROUP_OPEN, p, sizeof(p));
	assert_non_null(strstr(p, "INDEX note_groups_open"));
	plan(STMT_NOTES_PAGE, p, sizeof(p));
	assert_non_null(strstr(p, "INDEX note_groups_list"));
	assert_null(strstr(p, "TEMP B-TREE"));
	plan(STMT_NOTE_GROUP_MEMBERS, p, sizeof(p));
	assert_non_null(strstr(p, "INDEX notifications_group"));
	assert_null(strstr(p, "TEMP B-TREE"));
	/* a group's read and a read-all: the owner's unread ones only */
	plan(STMT_NOTE_READ, p, sizeof(p));
	assert_non_null(strstr(p, "notifications_unread"));
	plan(STMT_NOTE_READ_ALL, p, sizeof(p));
	assert_non_null(strstr(p, "notifications_unread"));
	plan(STMT_NOTE_DELETE, p, sizeof(p));
	assert_non_null(strstr(p, "INDEX notifications_group"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backfill_and_plans),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, setup, teardown);
}
