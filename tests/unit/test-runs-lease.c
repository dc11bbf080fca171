/* test-runs-lease.c -- a reconciliation run's owner and its lease
 * (runs.h, issue 49) on a real SQLite file: a run is taken only once
 * its owner's lease lapsed, whatever the pid numbers say (the same pid
 * on another host is someone else); the owner renews it; one that
 * stalled past its lease and lost the run can renew it no more, and a
 * run that is over is nobody's to take. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "count/runs.h"
#include "store/db.h"
#include "tmpdb.h"

static struct tmpdb tdb;

#define T0	1700000000000LL		/* a wall clock, ms */
#define A	"hosta:4242:1"		/* two owners with one pid */
#define B	"hostb:4242:2"

static int
setup(void **state)
{
	static struct db d;

	if (tmpdb_make(&tdb, "runlease") == -1 || db_open(&d, tdb.path) == -1)
		return -1;
	*state = &d;
	return 0;
}

static int
teardown(void **state)
{
	db_close(*state);
	return tmpdb_remove(&tdb);
}

static long long
new_run(struct db *d)
{
	long long id, active = 0;

	id = runs_start(d, 0, "unit", &active);
	assert_true(id > 0);
	return id;
}

static void
test_lease_decides(void **state)
{
	struct db *d = *state;
	long long id = new_run(d);
	struct run r;
	char host[64];

	assert_int_equal(runs_claim(d, id, A, 4242, T0), 1);
	assert_int_equal(runs_get(d, id, &r), 1);
	assert_string_equal(r.state, "running");
	assert_string_equal(r.owner_name, A);
	assert_int_equal(r.owner, 4242);
	assert_int_equal(r.lease_until, T0 + RUNS_LEASE_MS);
	runs_owner_host(&r, host, sizeof(host));
	assert_string_equal(host, "hosta");
	/* the same pid on another host, while A's lease holds: refused */
	assert_int_equal(runs_claim(d, id, B, 4242, T0 + 1), 0);
	assert_int_equal(runs_claim(d, id, B, 4242, T0 + RUNS_LEASE_MS), 0);
	/* renewed, it holds on */
	assert_int_equal(runs_renew(d, id, A, T0 + 3000), 1);
	assert_int_equal(runs_claim(d, id, B, 4242, T0 + RUNS_LEASE_MS + 1), 0);
	/* A stalls past it: B takes the run */
	assert_int_equal(runs_claim(d, id, B, 4242,
	    T0 + 3000 + RUNS_LEASE_MS + 1), 1);
	assert_int_equal(runs_get(d, id, &r), 1);
	assert_string_equal(r.owner_name, B);
	assert_string_equal(r.state, "running");
	/* A wakes: its renewal and its claim find the run B's */
	assert_int_equal(runs_renew(d, id, A, T0 + 9000), 0);
	assert_int_equal(runs_claim(d, id, A, 4242, T0 + 9000), 0);
	assert_int_equal(runs_get(d, id, &r), 1);
	assert_string_equal(r.owner_name, B);
	/* its owner takes its own run again at once (a jobs process started
	 * again for the same worker) */
	assert_int_equal(runs_claim(d, id, B, 4242, T0 + 9001), 1);
	/* over: nobody's */
	assert_int_equal(db_exec(d, "UPDATE reconcile_runs SET state = 'done'"),
	    0);
	assert_int_equal(runs_renew(d, id, B, T0 + 9002), 0);
	assert_int_equal(runs_claim(d, id, A, 4242, T0 + 99999), 0);
}

/* A queued run is anyone's (no owner, no lease yet). */
static void
test_queued_is_free(void **state)
{
	struct db *d = *state;
	long long id = new_run(d);
	struct run r;

	assert_int_equal(runs_get(d, id, &r), 1);
	assert_string_equal(r.owner_name, "");
	assert_int_equal(r.lease_until, 0);
	assert_int_equal(runs_renew(d, id, A, T0), 0);	/* not A's */
	assert_int_equal(runs_claim(d, id, B, 1, T0), 1);
	assert_int_equal(db_exec(d, "UPDATE reconcile_runs SET state = 'done'"),
	    0);
}

/* A run tallyctl starts is its own from the transaction that creates
 * it: the worker, which looks for queued runs each second, cannot take
 * it between its creation and tallyctl's claim; only once the lease
 * lapsed. */
static void
test_started_mine(void **state)
{
	struct app a;
	struct run r;
	long long id, active = 0, now;

	memset(&a, 0, sizeof(a));
	a.db = *state;
	a.pid = 4242;
	snprintf(a.owner, sizeof(a.owner), "%s", A);
	now = clock_wall_ms();
	id = runs_start_mine(&a, 0, "unit", &active);
	assert_true(id > 0);
	assert_int_equal(runs_get(a.db, id, &r), 1);
	assert_string_equal(r.state, "running");
	assert_string_equal(r.owner_name, A);
	assert_true(r.lease_until >= now + RUNS_LEASE_MS);
	assert_int_equal(runs_claim(a.db, id, B, 1, clock_wall_ms()), 0);
	/* one active run at a time, as runs_start() */
	assert_int_equal(runs_start_mine(&a, 0, "unit", &active), 0);
	assert_int_equal(active, id);
	assert_int_equal(runs_claim(a.db, id, B, 1,
	    r.lease_until + 1), 1);
	assert_int_equal(db_exec(a.db, "UPDATE reconcile_runs SET state = "
	    "'done'"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lease_decides),
		cmocka_unit_test(test_queued_is_free),
		cmocka_unit_test(test_started_mine),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, setup, teardown);
}
