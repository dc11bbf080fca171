/* test-refold.c -- the people search's words written under the old fold
 * (ASCII letters alone) are folded again by the schema's step 22
 * (store/refold.h): "Émile" becomes "émile", a row the new fold makes
 * another's of the same user is dropped, other users' and ASCII words
 * are left as they were. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "store/db.h"
#include "tmpdb.h"

static int
row(void *arg, int n, char **v, char **names)
{
	char *out = arg;
	size_t len = strlen(out);

	(void)names;
	if (n == 2)
		snprintf(out + len, 512 - len, "%s:%s;", v[0], v[1]);
	return 0;
}

static void
old_words_folded_again(void **state)
{
	struct tmpdb t;
	struct db d;
	char rows[512] = "";

	(void)state;
	assert_int_equal(tmpdb_make(&t, "refold"), 0);
	assert_int_equal(db_open(&d, t.path), 0);
	/* as the old fold wrote them, the schema one step back */
	assert_int_equal(db_exec(&d, "INSERT INTO name_words(word, user_id) "
	    "VALUES('\xc3\x89mile', 1), ('\xc3\xa9mile', 2), "
	    "('\xc3\x89mile', 3), ('\xc3\xa9mile', 3), ('ada', 4), "
	    "('\xc3\x89mile zo\xc3\x8b', 5), ('\xe4\xb8\xad', 6);"
	    "PRAGMA user_version = 21;"), 0);
	db_close(&d);
	assert_int_equal(db_open(&d, t.path), 0);
	assert_int_equal(sqlite3_exec(d.h, "SELECT word, user_id FROM "
	    "name_words ORDER BY user_id, word", row, rows, NULL), SQLITE_OK);
	assert_string_equal(rows, "\xc3\xa9mile:1;\xc3\xa9mile:2;"
	    "\xc3\xa9mile:3;ada:4;\xc3\xa9mile zo\xc3\xab:5;\xe4\xb8\xad:6;");
	db_close(&d);
	assert_int_equal(tmpdb_remove(&t), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(old_words_folded_again),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
