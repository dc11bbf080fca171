/* test-rcl-cluster.c -- the Redis Cluster client (store/rcl.h) on a real
 * cluster of two masters (tmpcluster.h):
 *  - a pipeline keeps every reply with its command when the slot map is
 *    read again in the middle of it.  A map that went stale while a
 *    pipeline was being queued (a master failed) was read again from a
 *    node that held queued commands: its CLUSTER SLOTS read their replies
 *    first and dropped them, and the pipeline's first entry took the
 *    reply of a command queued after it -- a page showed another post's
 *    counts during a failover;
 *  - a pipeline on a cluster that says it is down waits once, within
 *    the caller's budget, and reads the map at its rate;
 *  - a pipeline after one whose first entry failed keeps its replies:
 *    the failure's mark outlived its pipeline, and the next one's
 *    replies were dropped as the failed one's;
 *  - the signature of who serves what (the worker's job_topology()) is
 *    known for a cluster of many slot ranges, and changes when a master
 *    restarts.  Past ~43 ranges it outgrew its text and failed, every
 *    second, silently: failovers went unnoticed, unrepaired. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "store/rcl.h"
#include "tmpcluster.h"

/* The first "<prefix><i>" whose slot is in [lo, hi), into out. */
static void
key_in(const char *prefix, int lo, int hi, char *out, size_t sz)
{
	int i;

	for (i = 0; i < 100000; i++) {
		snprintf(out, sz, "%s%d", prefix, i);
		if (rcl_keyslot(out, strlen(out)) >= lo &&
		    rcl_keyslot(out, strlen(out)) < hi)
			return;
	}
	fail_msg("no key of %s in %d-%d", prefix, lo, hi);
}

static redisReply *
cmd(struct rcl *cl, const char *a, const char *b, const char *c)
{
	const char *argv[3] = { a, b, c };

	return rcl_cmd(cl, c != NULL ? 3 : 2, argv, NULL);
}

static int
append_get(struct rcl *cl, const char *key)
{
	const char *argv[2] = { "GET", key };

	return rcl_append(cl, 2, argv, NULL, NULL);
}

static void
expect_reply(struct rcl *cl, const char *want)
{
	redisReply *rep = NULL;

	assert_int_equal(rcl_get_reply(cl, &rep), 0);
	assert_non_null(rep);
	assert_int_equal(rep->type, REDIS_REPLY_STRING);
	assert_string_equal(rep->str, want);
	freeReplyObject(rep);
}

/* Two masters (node 0 serves slots 0-8191 and is the first seed, node 1
 * the rest), a client, keys ka and kc of node 0 set to "A" and "C", kx
 * one of node 1's. */
static struct rcl *
two_nodes(struct tmpcluster *t, const char *name, char *ka, char *kc,
    char *kx)
{
	struct rcl *cl;
	redisReply *rep;

	assert_int_equal(tmpcluster_start(t, name, 2, 1), 0);
	assert_non_null(cl = rcl_open(t->seeds, 300, NULL, NULL));
	key_in("a", 0, 8192, ka, 32);
	key_in("c", 0, 8192, kc, 32);
	key_in("x", 8192, 16384, kx, 32);
	assert_non_null(rep = cmd(cl, "SET", ka, "A"));
	freeReplyObject(rep);
	assert_non_null(rep = cmd(cl, "SET", kc, "C"));
	freeReplyObject(rep);
	return cl;
}

/* two_nodes(), then a GET on each node, node 1 killed before its reply:
 * the first read failed, node 0's reply still queued. */
static struct rcl *
failed_first(struct tmpcluster *t, const char *name, char *ka, char *kc,
    char *kx)
{
	struct rcl *cl = two_nodes(t, name, ka, kc, kx);
	redisReply *rep = NULL;

	assert_non_null(rep = cmd(cl, "SET", kx, "X"));
	freeReplyObject(rep);
	assert_int_equal(append_get(cl, kx), 0);
	assert_int_equal(append_get(cl, ka), 0);
	tmpcluster_kill(t, 1);		/* before its reply */
	assert_int_equal(rcl_get_reply(cl, &rep), -1);
	return cl;
}

static void
test_refresh_mid_pipeline(void **state)
{
	struct tmpcluster t;
	struct rcl *cl;
	redisReply *rep;
	char ka[32], kc[32], kx[32];

	(void)state;
	cl = two_nodes(&t, "rcl-pipe", ka, kc, kx);

	/* node 1 crashes; the cluster has not noticed (its node timeout is
	 * a minute): the map still has it */
	tmpcluster_kill(&t, 1);
	assert_null(cmd(cl, "GET", kx, NULL));
	usleep(110 * 1000);		/* past the map's refresh limit */
	assert_int_equal(append_get(cl, ka), 0);
	/* an append to the dead node fails and marks the map stale ... */
	assert_int_equal(append_get(cl, kx), -1);
	usleep(110 * 1000);
	/* ... so the next append reads the map again, with node 0's reply
	 * to the first GET still queued */
	assert_int_equal(append_get(cl, kc), 0);
	expect_reply(cl, "A");
	expect_reply(cl, "C");
	assert_int_equal(rcl_pending(cl), 0);

	/* and the map is read once the pipeline is over */
	assert_non_null(rep = cmd(cl, "GET", kc, NULL));
	assert_string_equal(rep->str, "C");
	freeReplyObject(rep);
	rcl_close(cl);
	assert_int_equal(tmpcluster_stop(&t), 0);
}

/* A pipeline whose first entry failed (its node crashed) and whose last
 * came back left the client "failed" with nothing pending; the next
 * pipeline's first look at it (rcl_drop_failed(), as rds's does before a
 * script is loaded) read and dropped that pipeline's own replies: its
 * first read got the reply of the command after it, or none. */
static void
test_failed_then_whole(void **state)
{
	struct tmpcluster t;
	struct rcl *cl;
	char ka[32], kc[32], kx[32];

	(void)state;
	cl = failed_first(&t, "rcl-failed", ka, kc, kx);
	expect_reply(cl, "A");
	assert_int_equal(rcl_pending(cl), 0);
	/* the next pipeline: its replies are its own */
	assert_int_equal(append_get(cl, kc), 0);
	assert_int_equal(append_get(cl, ka), 0);
	rcl_drop_failed(cl);
	assert_int_equal(rcl_pending(cl), 2);
	expect_reply(cl, "C");
	expect_reply(cl, "A");
	rcl_close(cl);
	assert_int_equal(tmpcluster_stop(&t), 0);
}

/* A caller that stops at a failed reply (cstore's load, a board's read,
 * a badge poll) leaves the rest of its pipeline queued: another node's
 * reply.  The next pipeline's first reply was that one, and every reply
 * after it the one before's.  The leftovers go before the next append. */
static void
test_failed_left_unread(void **state)
{
	struct tmpcluster t;
	struct rcl *cl;
	char ka[32], kc[32], kx[32];

	(void)state;
	cl = failed_first(&t, "rcl-left", ka, kc, kx);
	/* the caller gives up here: A is not read */
	assert_int_equal(append_get(cl, kc), 0);
	expect_reply(cl, "C");
	assert_int_equal(rcl_pending(cl), 0);
	rcl_close(cl);
	assert_int_equal(tmpcluster_stop(&t), 0);
}

/* CLUSTER SLOTS calls node port answered so far (INFO commandstats). */
static long
slots_calls(int port)
{
	redisReply *rep = tmpcluster_cmd(port, "INFO commandstats", NULL);
	const char *at;
	long n = 0;

	if (rep != NULL && rep->type == REDIS_REPLY_STRING &&
	    (at = strstr(rep->str, "cmdstat_cluster|slots:calls=")) != NULL)
		n = strtol(at + strlen("cmdstat_cluster|slots:calls="), NULL, 10);
	if (rep != NULL)
		freeReplyObject(rep);
	return n;
}

/* A cluster that says it is down (CLUSTERDOWN: a slot no node serves)
 * answers a pipeline of 20 commands.  Each entry waited its own half of
 * the timeout for the cluster to come back, one after another (20 of
 * them: seconds for one request), past the caller's wait budget, and
 * read the slot map again at every pause, past its rate limit (a
 * CLUSTER SLOTS storm on a cluster in trouble).  A pipeline now waits
 * once, within the budget, the map read at its rate. */
static void
test_down_waits_once(void **state)
{
	struct tmpcluster t;
	struct rcl *cl;
	redisReply *rep;
	char keys[20][48], slot[8], tag[16];
	long long t0;
	long calls;
	int i, n = 0;

	(void)state;
	assert_int_equal(tmpcluster_start(&t, "rcl-down", 2, 1), 0);
	assert_non_null(cl = rcl_open(t.seeds, 300, NULL, NULL));
	/* 20 keys of slot 0 (one hash tag) */
	key_in("z", 0, 1, tag, sizeof(tag));
	for (i = 0; i < 20; i++)
		snprintf(keys[i], sizeof(keys[i]), "{%s}%d", tag, i);
	assert_non_null(rep = cmd(cl, "GET", keys[0], NULL));
	freeReplyObject(rep);
	/* a slot of node 1's served by none, every slot asked for: the
	 * whole cluster says it is down, node 0 still serving slot 0 */
	snprintf(slot, sizeof(slot), "%d", RCL_SLOTS - 1);
	for (i = 0; i < 2; i++) {
		assert_non_null(rep = tmpcluster_cmd(t.port[i], "CONFIG SET "
		    "cluster-require-full-coverage %s", "yes"));
		freeReplyObject(rep);
		assert_non_null(rep = tmpcluster_cmd(t.port[i],
		    "CLUSTER DELSLOTS %s", slot));
		freeReplyObject(rep);
	}
	for (i = 0; i < 100 && !n; i++) {
		assert_non_null(rep = tmpcluster_cmd(t.port[0], "GET %s",
		    keys[0]));
		n = rep->type == REDIS_REPLY_ERROR &&
		    strncmp(rep->str, "CLUSTERDOWN", 11) == 0;
		freeReplyObject(rep);
		usleep(20 * 1000);
	}
	assert_true(n);
	calls = slots_calls(t.port[0]) + slots_calls(t.port[1]);
	rcl_budget(cl, 1);
	t0 = clock_mono_ms();
	for (i = 0; i < 20; i++)
		assert_int_equal(append_get(cl, keys[i]), 0);
	for (i = 0; i < 20; i++) {
		rep = NULL;
		if (rcl_get_reply(cl, &rep) == 0)
			freeReplyObject(rep);
	}
	if (clock_mono_ms() - t0 > 600)
		fail_msg("a pipeline on a cluster down took %lld ms",
		    clock_mono_ms() - t0);
	if (slots_calls(t.port[0]) + slots_calls(t.port[1]) - calls > 6)
		fail_msg("%ld CLUSTER SLOTS for one pipeline",
		    slots_calls(t.port[0]) + slots_calls(t.port[1]) - calls);
	rcl_close(cl);
	assert_int_equal(tmpcluster_stop(&t), 0);
}

static void
test_signature_many_ranges(void **state)
{
	struct tmpcluster t;
	struct rcl *cl;
	unsigned long long h1 = 0, h2 = 0, h3 = 0;
	char sig[4096];

	(void)state;
	/* 80 ranges, dealt in turn to the two masters */
	assert_int_equal(tmpcluster_start(&t, "rcl-sig", 2, 40), 0);
	assert_non_null(cl = rcl_open(t.seeds, 1000, NULL, NULL));
	assert_int_equal(rcl_signature(cl, sig, sizeof(sig), &h1), 0);
	assert_non_null(strstr(sig, "..."));	/* more than fits */
	assert_true(strlen(sig) < sizeof(sig));
	assert_int_equal(rcl_signature(cl, sig, sizeof(sig), &h2), 0);
	assert_true(h1 == h2);
	/* a master restarted (a new run id: it may have lost its last
	 * writes) */
	tmpcluster_kill(&t, 1);
	assert_int_equal(tmpcluster_restart(&t, 1), 0);
	assert_int_equal(rcl_signature(cl, sig, sizeof(sig), &h3), 0);
	assert_true(h3 != h1);
	rcl_close(cl);
	assert_int_equal(tmpcluster_stop(&t), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refresh_mid_pipeline),
		cmocka_unit_test(test_signature_many_ranges),
		cmocka_unit_test(test_failed_then_whole),
		cmocka_unit_test(test_failed_left_unread),
		cmocka_unit_test(test_down_waits_once),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
