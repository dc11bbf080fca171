/* test-rds-script.c -- Lua scripts on one real redis-server (rds.h):
 * a script's first use on a connection loads it and runs it in one round
 * trip (SCRIPT LOAD and EVAL together), every later use is one EVALSHA,
 * a server that lost its scripts (SCRIPT FLUSH) still runs the call (EVAL
 * on NOSCRIPT), and a new connection loads again in one round trip.  A
 * process's first page would otherwise pay a round trip per script. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "store/rds.h"
#include "store/rds_int.h"
#include "tmpredis.h"

#define fix tmpredis_fix

static int
setup(void **state)
{
	return tmpredis_setup(state, "rdsscript");
}

static int
teardown(void **state)
{
	return tmpredis_teardown(state);
}

static long long
calls(struct fix *f, const char *cmd)
{
	return tmpredis_calls(&f->rds, cmd);
}

/* Runs s (INCRBY KEYS[1] ARGV[1]) once; the round trips it took. */
static unsigned long long
incr(struct fix *f, struct rds_script *s, const char *by, long long want)
{
	const char *keys[] = { "{t}:n" };
	const char *args[] = { by };
	unsigned long long t0 = rds_ntrips(&f->rds);
	rds_reply *r = rds_eval(&f->rds, s, 1, keys, 1, args);

	assert_non_null(r);
	assert_int_equal(r->type, REDIS_REPLY_INTEGER);
	assert_int_equal(r->integer, want);
	rds_free(r);
	return rds_ntrips(&f->rds) - t0;
}

static void
test_first_use_one_trip(void **state)
{
	struct fix *f = *state;
	struct rds_script s = {
		"return redis.call('INCRBY', KEYS[1], ARGV[1])", "", NULL, 0 };

	rds_free(rds_cmdv(&f->rds, "CONFIG", "RESETSTAT", NULL));
	assert_int_equal(incr(f, &s, "2", 2), 1);
	assert_int_equal(strlen(s.sha), 40);
	assert_int_equal(incr(f, &s, "3", 5), 1);
	assert_int_equal(incr(f, &s, "4", 9), 1);
	assert_int_equal(calls(f, "script|load"), 1);
	assert_int_equal(calls(f, "eval"), 1);
	assert_int_equal(calls(f, "evalsha"), 2);
}

static void
test_flushed_scripts_still_run(void **state)
{
	struct fix *f = *state;
	struct rds_script s = {
		"return redis.call('INCRBY', KEYS[1], ARGV[1]) + 0", "", NULL,
		0 };

	assert_int_equal(incr(f, &s, "1", 1), 1);
	rds_free(rds_cmdv(&f->rds, "SCRIPT", "FLUSH", NULL));
	/* NOSCRIPT, then EVAL: two round trips, counted once */
	assert_int_equal(incr(f, &s, "1", 2), 2);
	assert_int_equal(incr(f, &s, "1", 3), 1);
}

static void
test_new_connection_loads_in_one_trip(void **state)
{
	struct fix *f = *state;
	struct rds_script s = {
		"return redis.call('INCRBY', KEYS[1], ARGV[1]) + 0 * 0", "",
		NULL, 0 };
	rds_reply *r;
	unsigned gen;
	int i;

	assert_int_equal(incr(f, &s, "5", 5), 1);
	gen = rds_gen(&f->rds);
	rds_free(rds_cmdv(&f->rds, "CLIENT", "KILL", "SKIPME", "no", NULL));
	/* a command after finds the connection closed; the next connects */
	for (i = 0; i < 100 && rds_gen(&f->rds) == gen; i++) {
		rds_free(rds_cmdv(&f->rds, "PING", NULL));
		usleep(10 * 1000);
	}
	assert_int_not_equal(rds_gen(&f->rds), gen);
	r = rds_cmdv(&f->rds, "CONFIG", "RESETSTAT", NULL);
	assert_non_null(r);
	rds_free(r);
	assert_int_equal(incr(f, &s, "5", 10), 1);
	assert_int_equal(calls(f, "script|load"), 1);
	assert_int_equal(calls(f, "eval"), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_first_use_one_trip, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_flushed_scripts_still_run,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_new_connection_loads_in_one_trip, setup, teardown),
	};

	/* a write to the killed connection: an error, as in the handlers */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
