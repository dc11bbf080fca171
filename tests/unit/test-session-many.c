/* test-session-many.c -- a group commit's sessions read in one statement
 * (shared/social/session.h: session_load_many()): each slot gets what
 * session_load() gives for its cookie -- a live session, nothing for an
 * unknown, ended, expired or malformed one, or for none -- the same
 * session twice in one group included, on a real SQLite file. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "social/session.h"
#include "store/db.h"
#include "tmpdb.h"

static struct tmpdb tdb;
static struct db *d;
static char alice[SID_MAX + 1], bob[SID_MAX + 1], old[SID_MAX + 1];
static char ended[SID_MAX + 1];
static char acsrf[TOKEN_LEN + 1], bcsrf[TOKEN_LEN + 1];

static int
setup(void **state)
{
	char csrf[TOKEN_LEN + 1], sql[160];

	(void)state;
	if (auth_init() != 0 || tmpdb_make_t(&tdb, "sessmany") == -1 ||
	    (d = db_new(tdb.path)) == NULL)
		return -1;
	snprintf(sql, sizeof(sql), "INSERT INTO users(id, login, name, "
	    "pwhash, is_admin, created_at) VALUES(7, 'alice', 'A', 'x', 1, "
	    "%lld), (9, 'bob', 'B', 'x', 0, 0)", clock_wall_ms());
	if (db_exec(d, sql) == -1 ||
	    session_create(d, 7, 3600, alice, acsrf, NULL) == -1 ||
	    session_create(d, 9, 3600, bob, bcsrf, NULL) == -1 ||
	    session_create(d, 9, 3600, ended, csrf, NULL) == -1 ||
	    session_delete(d, ended) == -1 ||
	    session_create(d, 7, -60, old, csrf, NULL) == -1)	/* expired */
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	db_free(d);
	return tmpdb_remove(&tdb);
}

static void
test_each_as_alone(void **state)
{
	const char *sids[8] = { alice, NULL, bob, "12.short", ended, alice,
	    old, "99.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" };
	struct session out[8], one;
	int rc[8], i;

	(void)state;
	assert_int_equal(session_load_many(d, sids, 8, out, rc), 0);
	assert_int_equal(rc[0], 1);
	assert_true(out[0].user_id == 7);
	assert_string_equal(out[0].login, "alice");
	assert_string_equal(out[0].csrf, acsrf);
	assert_int_equal(out[0].is_admin, 1);
	assert_int_equal(rc[2], 1);
	assert_true(out[2].user_id == 9);
	assert_string_equal(out[2].csrf, bcsrf);
	assert_int_equal(rc[5], 1);	/* alice again: the same row */
	assert_string_equal(out[5].csrf, acsrf);
	for (i = 0; i < 8; i++) {
		if (sids[i] != NULL)
			assert_int_equal(session_load(d, sids[i], &one), rc[i]);
		if (i != 0 && i != 2 && i != 5) {
			assert_int_equal(rc[i], 0);
			assert_true(out[i].user_id == 0);
		}
	}
}

static void
test_full_and_empty(void **state)
{
	const char *sids[SESSION_MANY];
	struct session out[SESSION_MANY];
	int rc[SESSION_MANY], i;

	(void)state;
	for (i = 0; i < SESSION_MANY; i++)
		sids[i] = i % 2 ? bob : alice;
	assert_int_equal(session_load_many(d, sids, SESSION_MANY, out, rc), 0);
	for (i = 0; i < SESSION_MANY; i++) {
		assert_int_equal(rc[i], 1);
		assert_true(out[i].user_id == (i % 2 ? 9 : 7));
	}
	for (i = 0; i < SESSION_MANY; i++)
		sids[i] = NULL;
	assert_int_equal(session_load_many(d, sids, SESSION_MANY, out, rc), 0);
	for (i = 0; i < SESSION_MANY; i++)
		assert_int_equal(rc[i], 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_as_alone),
		cmocka_unit_test(test_full_and_empty),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
