/* test-ckeep.c -- the counts a process keeps (count/ckeep.h): a value is
 * found only under its own hash and field; a key Redis says changed
 * forgets every field of that hash and no other; forgetting all forgets
 * all; a value read before a drop was processed is refused (it may be
 * the changed one); a full window replaces its least used entry; the
 * benchmark's 30,000 posts are all but all kept. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "count/ckeep.h"

static void
test_found_under_its_name(void **state)
{
	long long v = -1;

	(void)state;
	ckeep_drop(NULL, 0);
	ckeep_put("{c1}:p5", "likes", 7, ckeep_epoch());
	ckeep_put("{c1}:p5", "views", 70, ckeep_epoch());
	assert_int_equal(ckeep_get("{c1}:p5", "likes", &v), 1);
	assert_int_equal(v, 7);
	assert_int_equal(ckeep_get("{c1}:p5", "views", &v), 1);
	assert_int_equal(v, 70);
	assert_int_equal(ckeep_get("{c1}:p5", "comments", &v), 0);
	assert_int_equal(ckeep_get("{c1}:p50", "likes", &v), 0);
	assert_int_equal(ckeep_get("{c1}:p", "5\nlikes", &v), 0);
	/* a second read of the same counter replaces the first */
	ckeep_put("{c1}:p5", "likes", 8, ckeep_epoch());
	assert_int_equal(ckeep_get("{c1}:p5", "likes", &v), 1);
	assert_int_equal(v, 8);
}

static void
test_drop_forgets_one_hash(void **state)
{
	long long v = -1;

	(void)state;
	ckeep_drop(NULL, 0);
	ckeep_put("{c1}:p5", "likes", 7, ckeep_epoch());
	ckeep_put("{c1}:p5", "views", 70, ckeep_epoch());
	ckeep_put("{c1}:p55", "likes", 1, ckeep_epoch());
	ckeep_put("{c2}:u9", "followers", 3, ckeep_epoch());
	ckeep_drop("{c1}:p5", strlen("{c1}:p5"));
	assert_int_equal(ckeep_get("{c1}:p5", "likes", &v), 0);
	assert_int_equal(ckeep_get("{c1}:p5", "views", &v), 0);
	assert_int_equal(ckeep_get("{c1}:p55", "likes", &v), 1);
	assert_int_equal(v, 1);
	assert_int_equal(ckeep_get("{c2}:u9", "followers", &v), 1);
	ckeep_drop(NULL, 0);
	assert_int_equal(ckeep_get("{c1}:p55", "likes", &v), 0);
	assert_int_equal(ckeep_get("{c2}:u9", "followers", &v), 0);
}

static void
test_read_before_a_drop_is_refused(void **state)
{
	unsigned long long at;
	long long v = -1;

	(void)state;
	ckeep_drop(NULL, 0);
	at = ckeep_epoch();		/* the HMGET is sent */
	ckeep_drop("{c3}:p1", 7);	/* a sync reads a change meanwhile */
	ckeep_put("{c1}:p5", "likes", 7, at);	/* its reply */
	assert_int_equal(ckeep_get("{c1}:p5", "likes", &v), 0);
	ckeep_put("{c1}:p5", "likes", 7, ckeep_epoch());
	assert_int_equal(ckeep_get("{c1}:p5", "likes", &v), 1);
}

static void
test_a_full_table_keeps_what_is_used(void **state)
{
	char hash[32];
	long long v = -1, hits = 0;
	int i;

	(void)state;
	ckeep_drop(NULL, 0);
	ckeep_put("{c0}:p1", "likes", 11, ckeep_epoch());
	/* twice the table's size of other posts, the first read between */
	for (i = 2; i < 2 * CKEEP_SLOTS; i++) {
		snprintf(hash, sizeof(hash), "{c%d}:p%d", i % 1024, i);
		ckeep_put(hash, "likes", i, ckeep_epoch());
		hits += ckeep_get("{c0}:p1", "likes", &v);
	}
	assert_int_equal(hits, 2 * CKEEP_SLOTS - 2);
	assert_int_equal(v, 11);
	/* and what is kept is what was put */
	for (i = 2, hits = 0; i < 2 * CKEEP_SLOTS; i++) {
		snprintf(hash, sizeof(hash), "{c%d}:p%d", i % 1024, i);
		if (ckeep_get(hash, "likes", &v) == 1) {
			assert_int_equal(v, i);
			hits++;
		}
	}
	assert_true(hits > CKEEP_SLOTS / 2);
}

/* The traffic benchmark's 10,000 users: 30,000 posts, four counters each
 * (the table under half full), all put.  Each hash's fields share a
 * window of slots, and windows overlap: with windows of 8 (two posts
 * fill one), 92 % were kept, and on the benchmark most feeds of 30
 * posts sent a second round trip for a counter evicted; with 16, 98 %
 * (BENCHMARKS.md). */
static void
test_the_benchmark_s_posts_are_kept(void **state)
{
	static const char *const f[4] = { "likes", "comments", "reposts",
	    "views" };
	char hash[48];
	long long v, kept = 0, n = 0;
	int p, i;

	(void)state;
	ckeep_drop(NULL, 0);
	for (p = 1; p <= 30000; p++) {
		snprintf(hash, sizeof(hash), "{c%d}:p%d", (p * 7) % 1024, p);
		for (i = 0; i < 4; i++)
			ckeep_put(hash, f[i], p + i, ckeep_epoch());
	}
	for (p = 1; p <= 30000; p++) {
		snprintf(hash, sizeof(hash), "{c%d}:p%d", (p * 7) % 1024, p);
		for (i = 0; i < 4; i++, n++)
			if (ckeep_get(hash, f[i], &v) == 1) {
				assert_int_equal(v, p + i);
				kept++;
			}
	}
	printf("# kept %lld of %lld\n", kept, n);
	assert_true(kept * 100 >= n * 97);
}

static void
test_a_name_too_long_is_not_kept(void **state)
{
	char hash[200];
	long long v = -1;

	(void)state;
	memset(hash, 'x', sizeof(hash) - 1);
	hash[sizeof(hash) - 1] = '\0';
	ckeep_put(hash, "likes", 1, ckeep_epoch());
	assert_int_equal(ckeep_get(hash, "likes", &v), 0);
	ckeep_drop(hash, strlen(hash));
}

/* The longest names tally makes with ids of ten digits fit. */
static void
test_a_post_counter_with_long_ids_is_kept(void **state)
{
	const char *hash = "{c1023}:p9999999999@9999999999";
	long long v = -1;

	(void)state;
	ckeep_put(hash, "rating:9999999999", 7, ckeep_epoch());
	assert_int_equal(ckeep_get(hash, "rating:9999999999", &v), 1);
	assert_int_equal(v, 7);
	ckeep_drop(hash, strlen(hash));
}

/* A lookup in parts (the hash's part once, its slots asked for ahead)
 * finds what a whole lookup finds, and misses what it misses: a field
 * of another hash, a hash never kept, a value dropped. */
static void
test_a_lookup_in_parts_is_a_lookup(void **state)
{
	const char *fields[] = { "comments", "reposts", "likes", "views" };
	char hash[32];
	unsigned long long hk;
	long long v, w;
	int p, f;

	(void)state;
	ckeep_drop(NULL, 0);
	for (p = 1; p <= 200; p++) {
		snprintf(hash, sizeof(hash), "{c%d}:p%d", p % 7, p);
		for (f = 0; f < 3; f++)
			ckeep_put(hash, fields[f], p * 10 + f, ckeep_epoch());
	}
	for (p = 1; p <= 201; p++) {
		snprintf(hash, sizeof(hash), "{c%d}:p%d", p % 7, p);
		hk = ckeep_hash(hash);
		ckeep_prefetch(hk);
		for (f = 0; f < 4; f++)
			ckeep_prefetch_field(hk, fields[f]);
		for (f = 0; f < 4; f++) {
			v = w = -1;
			assert_int_equal(ckeep_get_hk(hash, hk, fields[f], &v),
			    ckeep_get(hash, fields[f], &w));
			assert_true(v == w);
			assert_true(v == (p <= 200 && f < 3 ? p * 10 + f : -1));
		}
	}
	snprintf(hash, sizeof(hash), "{c%d}:p%d", 5 % 7, 5);
	ckeep_drop(hash, strlen(hash));
	assert_int_equal(ckeep_get_hk(hash, ckeep_hash(hash), "likes", &v), 0);
	/* with another hash's part, a kept hash is not found */
	assert_int_equal(ckeep_get_hk("{c6}:p6", ckeep_hash("{c0}:p7"),
	    "likes", &v), 0);
	assert_int_equal(ckeep_get("{c6}:p6", "likes", &v), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found_under_its_name),
		cmocka_unit_test(test_drop_forgets_one_hash),
		cmocka_unit_test(test_read_before_a_drop_is_refused),
		cmocka_unit_test(test_a_full_table_keeps_what_is_used),
		cmocka_unit_test(test_the_benchmark_s_posts_are_kept),
		cmocka_unit_test(test_a_name_too_long_is_not_kept),
		cmocka_unit_test(test_a_post_counter_with_long_ids_is_kept),
		cmocka_unit_test(test_a_lookup_in_parts_is_a_lookup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
