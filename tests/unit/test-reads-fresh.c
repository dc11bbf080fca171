/* test-reads-fresh.c -- what a reader copies into a Redis cache is read
 * from SQLite as it is now, not in the read snapshot its group of
 * requests took before (store/db.h db_reads_together()).
 *   - session_load() (social/session.h): what it reads may go to Redis
 *     under a generation read just before it (social/sesscache.h); a
 *     logout committed after the group's snapshot and before that
 *     generation was read once found its session still there, and the
 *     ended session's copy came back under the new generation;
 *   - the profile cache (social/pcache.h): a rename and its
 *     invalidation after the group's snapshot, then a page that missed
 *     the entry and rebuilt it from that snapshot: the old name, cached
 *     for an hour (badges.c and timeline.c's rebuilds have the same
 *     guard). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/auth.h"
#include "social/account.h"
#include "social/session.h"
#include "social/pcache.h"
#include "store/app.h"
#include "store/db.h"
#include "store/dbq.h"
#include "store/rds.h"
#include "store/rds_int.h"
#include "tmpdb.h"
#include "tmpredis.h"

static struct tmpdb tdb;

static int
setup(void **state)
{
	(void)state;
	return tmpdb_make_t(&tdb, "sessfresh");
}

static int
teardown(void **state)
{
	(void)state;
	return tmpdb_remove(&tdb);
}

/* Any read of d: with db_reads_together() on, it opens the snapshot. */
static void
read_something(struct db *d)
{
	struct dbq *s = dbq_stmt(d, STMT_SETTING_GET);

	assert_non_null(s);
	dbq_bind_text(s, 1, "k", -1);
	assert_int_not_equal(dbq_step(s), DBQ_ERR);
	dbq_done(s);
}

static void
a_logout_after_the_groups_snapshot_is_seen(void **state)
{
	struct db reader, web;
	struct session ss;
	char sid[SID_MAX + 1], csrf[TOKEN_LEN + 1];
	long long uid;

	(void)state;
	assert_int_equal(db_open(&reader, tdb.path), 0);
	assert_int_equal(db_open(&web, tdb.path), 0);
	uid = account_create(&web, "sf_user", "S F", "password-123", 12, 0, 1);
	assert_true(uid > 0);
	assert_int_equal(session_create(&web, uid, 3600, sid, csrf, NULL), 0);

	db_reads_together(&reader, 1);
	read_something(&reader);		/* the group's snapshot */
	assert_int_equal(session_load(&reader, sid, &ss), 1);
	read_something(&reader);		/* a later page's, shared */
	assert_int_equal(session_delete(&web, sid), 0);	/* the logout */
	assert_int_equal(session_load(&reader, sid, &ss), 0);
	db_reads_end(&reader);

	db_close(&web);
	db_close(&reader);
}

static void
a_rename_after_the_groups_snapshot_is_cached(void **state)
{
	struct tmpredis srv;
	struct rds r;
	struct db reader, web;
	struct app a;
	struct account u;
	long long uid;

	(void)state;
	assert_int_equal(tmpredis_start(&srv, "readsfresh", &r), 0);
	assert_int_equal(db_open(&reader, tdb.path), 0);
	assert_int_equal(db_open(&web, tdb.path), 0);
	memset(&a, 0, sizeof(a));
	a.db = &reader;
	a.rds = &r;
	uid = account_create(&web, "pf_user", "Old Name", "password-123", 12,
	    0, 1);
	assert_true(uid > 0);

	db_reads_together(&reader, 1);
	read_something(&reader);		/* the group's snapshot */
	/* the rename, its invalidation (handlers/web.c), then the page */
	{
		struct app w = { .db = &web, .rds = &r };

		assert_int_equal(account_rename(&w, uid, "New Name"), 1);
		pcache_invalidate(&w, "pf_user");
	}
	assert_int_equal(pcache_get(&a, "pf_user", &u), 1);
	assert_string_equal(u.name, "New Name");
	db_reads_end(&reader);
	/* and what it cached */
	assert_int_equal(pcache_get(&a, "pf_user", &u), 1);
	assert_string_equal(u.name, "New Name");

	db_close(&web);
	db_close(&reader);
	assert_int_equal(tmpredis_stop(&srv, &r), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    a_logout_after_the_groups_snapshot_is_seen, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    a_rename_after_the_groups_snapshot_is_cached, setup,
		    teardown),
	};

	auth_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
