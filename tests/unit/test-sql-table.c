/* test-sql-table.c -- the statement table (sql.h) and the schema agree:
 * every statement of the enum has its text (designated initializers: a
 * forgotten one is NULL here, never a neighbour's text), and every text
 * prepares against the schema after all its migrations. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "store/schema.h"
#include "store/sql.h"

static void
test_every_statement_prepares(void **state)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	int i, v;

	(void)state;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	for (v = 0; v < schema_version; v++)
		assert_int_equal(sqlite3_exec(db, schema_migrations[v], NULL,
		    NULL, NULL), SQLITE_OK);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_statement_prepares),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
