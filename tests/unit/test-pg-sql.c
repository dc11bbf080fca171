/* test-pg-sql.c -- the PostgreSQL text of the statement table (store/
 * pg.h, sql_pg.c): the translation of SQLite's placeholders and hints,
 * and an audit that no statement reaches PostgreSQL with SQLite-only
 * words (each needs its own text in sql_pg.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "store/pg.h"
#include "store/sql.h"

static void
same(const char *sqlite, const char *want)
{
	char *got = pg_translate(sqlite);

	assert_string_equal(got, want);
	free(got);
}

static void
test_placeholders(void **state)
{
	(void)state;
	same("SELECT ?1, ?2 WHERE a = ?1", "SELECT $1, $2 WHERE a = $1");
	same("VALUES (?, ?, ?), (?, ?, ?)", "VALUES ($1, $2, $3), ($4, $5, $6)");
	same("x = ?12", "x = $12");
	/* a question mark in a string literal stays */
	same("SELECT '?1' || ?1", "SELECT '?1' || $1");
	same("", "");
}

static void
test_hints(void **state)
{
	(void)state;
	same("SELECT id FROM posts INDEXED BY posts_user_visible WHERE x = ?1",
	    "SELECT id FROM posts WHERE x = $1");
	same("FROM posts INDEXED BY p_t WHERE", "FROM posts WHERE");
}

/* Words of SQLite's dialect that PostgreSQL has not, or has otherwise. */
static const char *const sqlite_only[] = {
	"json_each", "rowid", " IS ?", " IS $", "INDEXED BY", "INSERT OR",
	"group_concat", "ifnull(", "max(value,", "max(f.created_at,",
	"WITHOUT ROWID", "PRAGMA", "COLLATE NOCASE", NULL
};

static void
test_table_audit(void **state)
{
	int i, k;
	char *t;

	(void)state;
	for (i = 0; i < STMT__MAX; i++) {
		assert_non_null(sql_text[i]);
		t = pg_translate(sql_pg_text[i] != NULL ? sql_pg_text[i] :
		    sql_text[i]);
		for (k = 0; sqlite_only[k] != NULL; k++)
			if (strstr(t, sqlite_only[k]) != NULL)
				fail_msg("statement %d: \"%s\" on PostgreSQL: %s",
				    i, sqlite_only[k], t);
		assert_null(strchr(t, '?'));
		free(t);
	}
}

static void
test_overrides_keep_parameters(void **state)
{
	int i, n;
	const char *p;

	(void)state;
	/* an override binds what the SQLite text binds: the same highest ?N */
	for (i = 0; i < STMT__MAX; i++) {
		int a = 0, b = 0;

		if (sql_pg_text[i] == NULL)
			continue;
		for (p = sql_text[i]; (p = strchr(p, '?')) != NULL; p++)
			if ((n = (int)strtol(p + 1, NULL, 10)) > a)
				a = n;
		for (p = sql_pg_text[i]; (p = strchr(p, '?')) != NULL; p++)
			if ((n = (int)strtol(p + 1, NULL, 10)) > b)
				b = n;
		if (a != b)
			fail_msg("statement %d: ?%d in SQLite, ?%d in PostgreSQL",
			    i, a, b);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_placeholders),
		cmocka_unit_test(test_hints),
		cmocka_unit_test(test_table_audit),
		cmocka_unit_test(test_overrides_keep_parameters),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
