/* test-rds-record.c -- the keys a stretch of work names (rds_record()):
 * what a kept feed depends on (web/keep.h).  A key left out would be a
 * page kept after Redis changed it, so every way a command leaves rds
 * records its keys: a command, an appended one, a script's KEYS (appended
 * or waited for), with or without argument lengths.  Redis is down here
 * (no server at the path): the keys are recorded before the sending. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "store/rds.h"
#include "store/rds_int.h"

static unsigned long long
h(const char *k)
{
	return rds_key_hash(k, strlen(k));
}

static void
test_every_path_records(void **state)
{
	struct rds r;
	struct rds_keys k;
	struct rds_script s = { "return 1", "", NULL, 0 };
	const char *hm[] = { "HMGET", "{c1}:p5", "likes", "views" };
	const char *keys[] = { "{u7}:home", "{u7}:home:ok" };
	const char *args[] = { "0", "29" };
	const char *get[] = { "GET", "{tally}:gen" };

	(void)state;
	rds_init(&r, "/nonexistent/redis.sock", 50);
	rds_record(&r, &k);
	(void)rds_append_strs(&r, 4, hm);
	(void)rds_append_eval(&r, &s, 2, keys, 2, args);
	rds_free(rds_cmd(&r, 2, get, NULL));
	rds_free(rds_cmdv(&r, "HGET", "{c9}:u7:ss", "g", NULL));
	rds_free(rds_eval(&r, &s, 1, keys, 0, NULL));
	rds_record(&r, NULL);
	rds_free(rds_cmdv(&r, "GET", "not recorded", NULL));
	assert_int_equal(k.n, 6);
	assert_false(k.over);
	assert_true(k.h[0] == h("{c1}:p5"));
	assert_true(k.h[1] == h("{u7}:home"));
	assert_true(k.h[2] == h("{u7}:home:ok"));
	assert_true(k.h[3] == h("{tally}:gen"));
	assert_true(k.h[4] == h("{c9}:u7:ss"));
	assert_true(k.h[5] == h("{u7}:home"));
	rds_close(&r);
}

static void
test_too_many_is_said(void **state)
{
	struct rds r;
	struct rds_keys k;
	char key[32];
	int i;

	(void)state;
	rds_init(&r, "/nonexistent/redis.sock", 50);
	rds_record(&r, &k);
	for (i = 0; i <= RDS_KEYS_MAX; i++) {
		snprintf(key, sizeof(key), "{c%d}:p%d", i, i);
		rds_free(rds_cmdv(&r, "HMGET", key, "likes", NULL));
	}
	assert_int_equal(k.n, RDS_KEYS_MAX);
	assert_true(k.over);
	/* a new recording starts empty */
	rds_record(&r, &k);
	assert_int_equal(k.n, 0);
	assert_false(k.over);
	rds_record(&r, NULL);
	rds_close(&r);
}

/* rds_cmdv() takes at most 32 arguments: one more is an error, never a
 * command cut short and sent (an HMGET of 33 fields came back with 30
 * values, a DEL of 33 keys deleted 31).  Nothing is sent, so nothing is
 * recorded. */
#define A8(x) x, x, x, x, x, x, x, x
static void
test_past_the_argument_limit_is_an_error(void **state)
{
	struct rds r;
	struct rds_keys k;

	(void)state;
	rds_init(&r, "/nonexistent/redis.sock", 50);
	rds_record(&r, &k);
	/* 32: sent (recorded), fails only because no server answers */
	assert_null(rds_cmdv(&r, "HMGET", "{c1}:p32", A8("f"), A8("f"),
	    A8("f"), "f", "f", "f", "f", "f", "f", NULL));
	assert_int_equal(k.n, 1);
	/* 33: refused before anything is sent */
	assert_null(rds_cmdv(&r, "HMGET", "{c1}:p33", A8("f"), A8("f"),
	    A8("f"), "f", "f", "f", "f", "f", "f", "f", NULL));
	assert_int_equal(k.n, 1);
	rds_record(&r, NULL);
	rds_close(&r);
}

static void
test_hash_is_fnv1a(void **state)
{
	(void)state;
	/* FNV-1a 64 of "" and "a", the published values */
	assert_true(rds_key_hash("", 0) == 0xcbf29ce484222325ULL);
	assert_true(rds_key_hash("a", 1) == 0xaf63dc4c8601ec8cULL);
	assert_true(h("{c1}:p5") != h("{c1}:p6"));
	/* in parts: the hash of a name goes on from its first part's */
	assert_true(rds_key_hash_more(h("{c1}:p5"), "\nlikes", 6) ==
	    h("{c1}:p5\nlikes"));
	assert_true(rds_key_hash_more(h(""), "a", 1) == h("a"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_path_records),
		cmocka_unit_test(test_too_many_is_said),
		cmocka_unit_test(test_past_the_argument_limit_is_an_error),
		cmocka_unit_test(test_hash_is_fnv1a),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
