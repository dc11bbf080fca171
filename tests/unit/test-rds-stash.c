/* test-rds-stash.c -- replies read ahead (rds_stash_*, store/rds.h), on a
 * real redis-server: the first round trips of a reader's group are sent
 * at once and read in one wait (web/batch.h), each page's replies kept
 * for its load.  Each stash hands out its own replies in order, then the
 * connection is read again (a page's later commands); what a stash did
 * not hand out is freed; in one round trip for all; a stash filled
 * while Redis is gone hands out failures, as the connection would have;
 * and the uses are counted (/metrics). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store/rds.h"
#include "store/rds_int.h"
#include "tmpredis.h"

static int
setup(void **state)
{
	return tmpredis_setup(state, "rdsstash");
}

static int
teardown(void **state)
{
	return tmpredis_teardown(state);
}

static void
append(struct rds *r, const char *a, const char *b)
{
	const char *argv[] = { a, b };

	assert_int_equal(rds_append_strs(r, 2, argv), 0);
}

/* the next reply, a bulk string */
static void
expect(struct rds *r, const char *want)
{
	tmpredis_expect(r, RDS_STRING, want);
}

static void
test_each_its_own_in_one_trip(void **state)
{
	struct tmpredis_fix *f = *state;
	struct rds *r = &f->rds;
	struct rds_stash a = { 0 }, b = { 0 };
	unsigned long long trips, uses = rds_nstashes(r);

	rds_free(rds_cmdv(r, "MSET", "k1", "one", "k2", "two", "k3", "three",
	    NULL));
	trips = rds_ntrips(r);
	/* page a: two commands, page b: one */
	append(r, "GET", "k1");
	append(r, "GET", "k2");
	assert_int_equal(rds_queued(r), 2);
	append(r, "GET", "k3");
	assert_int_equal(rds_queued(r), 3);
	rds_stash_fill(r, &a, 2);
	rds_stash_fill(r, &b, 1);
	assert_int_equal(rds_queued(r), 0);
	assert_int_equal(rds_ntrips(r) - trips, 1);	/* one wait for all */
	/* b's load first: its own reply, then the connection again */
	rds_stash_use(r, &b);
	expect(r, "three");
	append(r, "GET", "k1");
	expect(r, "one");
	rds_stash_use(r, NULL);
	/* a's: its two, in order */
	rds_stash_use(r, &a);
	expect(r, "one");
	expect(r, "two");
	rds_stash_use(r, NULL);
	rds_stash_free(&a);
	rds_stash_free(&b);
	assert_int_equal(rds_nstashes(r) - uses, 2);
}

/* A stash never used (the page was sent as kept) or used in part: freed
 * whole (the sanitizers' build finds a leak). */
static void
test_unread_freed(void **state)
{
	struct tmpredis_fix *f = *state;
	struct rds *r = &f->rds;
	struct rds_stash a = { 0 }, b = { 0 };

	append(r, "PING", "x");
	append(r, "PING", "y");
	append(r, "PING", "z");
	rds_stash_fill(r, &a, 2);
	rds_stash_fill(r, &b, 1);
	rds_stash_use(r, &a);
	expect(r, "x");
	rds_stash_use(r, NULL);
	rds_stash_free(&a);
	rds_stash_free(&b);
	/* the connection reads its own replies again */
	{
		rds_reply *rep = rds_cmdv(r, "ECHO", "after", NULL);

		assert_non_null(rep);
		assert_string_equal(rds_str(rep), "after");
		rds_free(rep);
	}
}

/* Redis gone between the sends and the wait: every reply of every
 * stash is a failure, as the connection's own read would be. */
static void
test_gone_hands_out_failures(void **state)
{
	struct tmpredis_fix *f = *state;
	struct rds *r = &f->rds;
	struct rds_stash a = { 0 };
	rds_reply *rep = NULL;

	append(r, "PING", "x");
	append(r, "PING", "y");
	kill(f->srv.pid, SIGKILL);	/* reaped by tmpredis_stop() */
	usleep(200 * 1000);		/* its socket closed with it */
	rds_stash_fill(r, &a, 2);
	rds_stash_use(r, &a);
	assert_int_equal(rds_get_reply(r, &rep), -1);
	assert_int_equal(rds_get_reply(r, &rep), -1);
	rds_stash_use(r, NULL);
	rds_stash_free(&a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_each_its_own_in_one_trip,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_unread_freed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_gone_hands_out_failures,
		    setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);	/* as the handlers: a write to a gone
					   server fails, it does not kill */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
