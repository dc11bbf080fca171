/* test-counters-catalog.c -- the counter catalog: family names round-trip, counters_key "42" / "42:7", Redis names (live hash, field, pending field, bucket; a post's counters in its author's bucket) and cname_pfield + cname_parse round-trip for every family. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "count/counters.h"
#include "count/cstore.h"

/* What each family is called in SQLite and Redis, for k1 42, k2 7
 * (bucket 980) and, for a post's counters, owner 7 (their author: bucket
 * 334): live hash, field, and field in the pending hash. */
static const struct {
	enum family	 fam;
	const char	*name, *key, *hash, *field, *pfield;
} known[] = {
	{ FAM_USER_POSTS, "user_posts", "42", "{c980}:u42", "posts", "u42:posts" },
	{ FAM_USER_FOLLOWERS, "user_followers", "42", "{c980}:u42", "followers",
	  "u42:followers" },
	{ FAM_USER_FOLLOWING, "user_following", "42", "{c980}:u42", "following",
	  "u42:following" },
	{ FAM_USER_LIKES, "user_likes", "42", "{c980}:u42", "likes", "u42:likes" },
	{ FAM_POST_LIKES, "post_likes", "42", "{c334}:p42", "likes", "p42@7:likes" },
	{ FAM_POST_COMMENTS, "post_comments", "42", "{c334}:p42", "comments",
	  "p42@7:comments" },
	{ FAM_POST_REPOSTS, "post_reposts", "42", "{c334}:p42", "reposts",
	  "p42@7:reposts" },
	{ FAM_POST_VIEWS, "post_views", "42", "{c334}:p42", "views", "p42@7:views" },
	{ FAM_TOPIC_POSTS, "topic_posts", "42", "{c980}:t42", "posts", "t42:posts" },
	{ FAM_UT_POSTS, "user_topic_posts", "42:7", "{c980}:ut42", "posts:7",
	  "ut42:posts:7" },
	{ FAM_UT_RATING, "user_topic_rating", "42:7", "{c980}:ut42", "rating:7",
	  "ut42:rating:7" },
	{ FAM_USER_UNREAD, "user_unread", "42", "{c980}:u42", "unread",
	  "u42:unread" },
};

static void
test_family_names_round_trip(void **state)
{
	int i, j;

	(void)state;
	for (i = 0; i < FAM__MAX; i++) {
		assert_non_null(families[i].name);
		assert_non_null(families[i].field);
		assert_true(strlen(families[i].name) > 0);
		assert_int_equal(counters_family(families[i].name), i);
		for (j = 0; j < i; j++)
			assert_string_not_equal(families[i].name,
			    families[j].name);
	}
	/* a new family is named here too */
	assert_int_equal(sizeof(known) / sizeof(known[0]), FAM__MAX);
	for (i = 0; i < (int)(sizeof(known) / sizeof(known[0])); i++) {
		assert_string_equal(families[known[i].fam].name, known[i].name);
		assert_int_equal(counters_family(known[i].name), known[i].fam);
	}
}

/* Every family with truth rows has a recount; views have none. */
static void
test_recount_queries(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < FAM__MAX; i++)
		if (i == FAM_POST_VIEWS) {
			assert_int_equal(families[i].recount, NO_RECOUNT);
			assert_int_equal(families[i].recount_one, NO_RECOUNT);
		} else {
			assert_true(families[i].recount < STMT__MAX);
			assert_true(families[i].recount_one < STMT__MAX);
			assert_int_not_equal(families[i].recount,
			    families[i].recount_one);
			/* a family's every key is a scan of its table: read
			 * rows at a time on PostgreSQL (sql.h), never whole;
			 * one key's is one row */
			assert_int_equal(sql_stream[families[i].recount], 1);
			assert_int_equal(sql_stream[families[i].recount_one], 0);
		}
}

/* One field per counter in an object's hash, or cname_parse could not
 * tell them apart; fields are plain lowercase words. */
static void
test_fields_unique_per_object(void **state)
{
	const char *f;
	int i, j;

	(void)state;
	for (i = 0; i < FAM__MAX; i++) {
		f = families[i].field;
		assert_true(strlen(f) > 0 && strlen(f) < 32);
		assert_int_equal(strspn(f, "abcdefghijklmnopqrstuvwxyz"),
		    strlen(f));
		for (j = 0; j < i; j++)
			if (families[i].obj == families[j].obj &&
			    strcmp(f, families[j].field) == 0)
				fail_msg("%s and %s share field %s",
				    families[i].name, families[j].name, f);
	}
}

static void
test_counter_key(void **state)
{
	struct delta d = { .fam = FAM_USER_POSTS, .k1 = 42, .d = 5 };
	char key[48], small[3];
	int i;

	(void)state;
	counters_key(&d, key, sizeof(key));
	assert_string_equal(key, "42");
	d.fam = FAM_UT_POSTS;
	d.k2 = 7;
	counters_key(&d, key, sizeof(key));
	assert_string_equal(key, "42:7");
	d.fam = FAM_UT_RATING;
	counters_key(&d, key, sizeof(key));
	assert_string_equal(key, "42:7");
	/* every family, by hand */
	for (i = 0; i < (int)(sizeof(known) / sizeof(known[0])); i++) {
		d.fam = known[i].fam;
		d.k1 = 42;
		d.k2 = families[d.fam].obj == OBJ_USER_TOPIC ? 7 : 0;
		counters_key(&d, key, sizeof(key));
		assert_string_equal(key, known[i].key);
	}
	/* the largest ids fit; a short buffer is cut, never overrun */
	d.fam = FAM_UT_RATING;
	d.k1 = LLONG_MAX;
	d.k2 = LLONG_MAX;
	counters_key(&d, key, sizeof(key));
	assert_string_equal(key, "9223372036854775807:9223372036854775807");
	d.k1 = LLONG_MIN;
	d.k2 = 0;
	counters_key(&d, key, sizeof(key));
	assert_string_equal(key, "-9223372036854775808:0");
	d.fam = FAM_USER_POSTS;
	d.k1 = -17;
	counters_key(&d, key, sizeof(key));
	assert_string_equal(key, "-17");
	d.k1 = 12345;
	counters_key(&d, small, sizeof(small));
	assert_string_equal(small, "12");
}

static void
test_cstore_names(void **state)
{
	struct delta d;
	char hash[48], field[48], pfield[64], key[32];
	int i;

	(void)state;
	for (i = 0; i < (int)(sizeof(known) / sizeof(known[0])); i++) {
		memset(&d, 0, sizeof(d));
		d.fam = known[i].fam;
		d.k1 = 42;
		d.k2 = families[d.fam].obj == OBJ_USER_TOPIC ? 7 : 0;
		d.owner = families[d.fam].obj == OBJ_POST ? 7 : 0;
		cname_of(&d, hash, sizeof(hash), field, sizeof(field));
		cname_pfield(&d, pfield, sizeof(pfield));
		assert_string_equal(hash, known[i].hash);
		assert_string_equal(field, known[i].field);
		assert_string_equal(pfield, known[i].pfield);
		assert_int_equal(cname_bucket(&d),
		    families[d.fam].obj == OBJ_POST ? 334 : 980);
		/* and back, the stored delta (d) not carried */
		d.d = 99;
		assert_int_equal(cname_parse(pfield, strlen(pfield), &d), 0);
		assert_int_equal(d.fam, known[i].fam);
		assert_int_equal(d.k1, 42);
		assert_int_equal(d.k2, families[d.fam].obj == OBJ_USER_TOPIC ?
		    7 : 0);
		assert_int_equal(d.owner, families[d.fam].obj == OBJ_POST ?
		    7 : 0);
		assert_int_equal(d.d, 0);
	}
	/* a post's field written before owners: the counter, owner 0 */
	assert_int_equal(cname_parse("p42:likes", 9, &d), 0);
	assert_int_equal(d.fam, FAM_POST_LIKES);
	assert_int_equal(d.k1, 42);
	assert_int_equal(d.owner, 0);
	assert_true(cname_ownerless(&d));
	d.owner = 7;
	assert_false(cname_ownerless(&d));
	/* an owner only after a post's id, and a whole one */
	assert_int_equal(cname_parse("u42@7:likes", 11, &d), -1);
	assert_int_equal(cname_parse("p42@:likes", 10, &d), -1);
	assert_int_equal(cname_parse("p42@07:likes", 12, &d), -1);
	assert_int_equal(cname_parse("p42@7", 5, &d), -1);
	/* a bucket's own keys share its tag */
	cname_bucket_key(7, "pending", key, sizeof(key));
	assert_string_equal(key, "{c7}:pending");
	/* by hand: (id x 2654435761 mod 2^32) >> 22 */
	memset(&d, 0, sizeof(d));
	d.k1 = 7;
	assert_int_equal(cname_bucket(&d), 334);
	d.k1 = 1031;
	assert_int_equal(cname_bucket(&d), 197);
	cname_of(&d, hash, sizeof(hash), field, sizeof(field));
	assert_int_equal(strncmp(hash, "{c197}:", 7), 0);
}

/* Neighbouring ids spread over the buckets: 1024 ids in a row use most
 * of them, and every bucket is in range. */
static void
test_buckets_spread(void **state)
{
	struct delta d = { .fam = FAM_USER_LIKES };
	int used[CSTORE_BUCKETS] = { 0 }, n = 0, b;
	long long id;

	(void)state;
	for (id = 1; id <= CSTORE_BUCKETS; id++) {
		d.k1 = id;
		b = cname_bucket(&d);
		assert_true(b >= 0 && b < CSTORE_BUCKETS);
		n += used[b]++ == 0;
	}
	assert_true(n > CSTORE_BUCKETS / 2);
	d.k1 = LLONG_MAX;
	b = cname_bucket(&d);
	assert_true(b >= 0 && b < CSTORE_BUCKETS);
}

/* cname_pfield then cname_parse gives the counter back, every family,
 * small and huge ids; its live hash is in the same bucket. */
static void
test_cstore_round_trip(void **state)
{
	static const long long ids[] = { 0, 1, 7, 42, 1000000007LL,
	    9007199254740993LL, LLONG_MAX };
	struct delta in, out;
	char pfield[64], again[64], hash[48], field[48], tag[24];
	size_t a, b;
	int f, n = 0;

	(void)state;
	for (f = 0; f < FAM__MAX; f++)
		for (a = 0; a < sizeof(ids) / sizeof(ids[0]); a++)
			for (b = 0; b < sizeof(ids) / sizeof(ids[0]); b++) {
				memset(&in, 0, sizeof(in));
				in.fam = (enum family)f;
				in.k1 = ids[a];
				if (families[f].obj == OBJ_USER_TOPIC)
					in.k2 = ids[b];
				else if (families[f].obj == OBJ_POST)
					in.owner = ids[b];
				else if (b > 0)
					continue;
				in.d = -3;
				cname_pfield(&in, pfield, sizeof(pfield));
				if (cname_parse(pfield, strlen(pfield), &out)
				    != 0)
					fail_msg("%s %lld:%lld: %s does not "
					    "parse", families[f].name, in.k1,
					    in.k2, pfield);
				assert_int_equal(out.fam, in.fam);
				assert_true(out.k1 == in.k1);
				assert_true(out.k2 == in.k2);
				assert_true(out.owner == in.owner);
				cname_pfield(&out, again, sizeof(again));
				assert_string_equal(again, pfield);
				cname_of(&in, hash, sizeof(hash), field,
				    sizeof(field));
				snprintf(tag, sizeof(tag), "{c%d}:",
				    cname_bucket(&in));
				assert_int_equal(strncmp(hash, tag, strlen(tag)),
				    0);
				n++;
			}
	assert_true(n >= FAM__MAX * 7);
}

/* Counters of one object share its hash (one Lua script, one slot). */
static void
test_one_hash_per_object(void **state)
{
	struct delta d;
	char h1[48], h2[48], f1[48], f2[48];
	int i, j;

	(void)state;
	for (i = 0; i < FAM__MAX; i++)
		for (j = 0; j < FAM__MAX; j++) {
			memset(&d, 0, sizeof(d));
			d.fam = (enum family)i;
			d.k1 = 5;
			d.k2 = families[i].obj == OBJ_USER_TOPIC ? 3 : 0;
			d.owner = families[i].obj == OBJ_POST ? 11 : 0;
			cname_of(&d, h1, sizeof(h1), f1, sizeof(f1));
			d.fam = (enum family)j;
			d.k2 = families[j].obj == OBJ_USER_TOPIC ? 3 : 0;
			d.owner = families[j].obj == OBJ_POST ? 11 : 0;
			cname_of(&d, h2, sizeof(h2), f2, sizeof(f2));
			if (families[i].obj == families[j].obj)
				assert_string_equal(h1, h2);
			else
				assert_string_not_equal(h1, h2);
			if (i != j && strcmp(h1, h2) == 0)
				assert_string_not_equal(f1, f2);
		}
}

/* A like, a repost, a comment: every counter the change moves is in one
 * bucket, the author's -- one script on one Redis Cluster node --
 * whoever acts and whatever the post's id.  A post's publication too,
 * but for its topic's count. */
static void
test_post_changes_one_bucket(void **state)
{
	static const enum row_kind kinds[] = { ROW_POST, ROW_LIKE, ROW_REPOST,
	    ROW_COMMENT };
	struct delta ds[DELTA_MAX], author = { .fam = FAM_USER_LIKES };
	struct row r;
	long long post, who;
	size_t k;
	int i, n, other = 0;

	(void)state;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		for (post = 1; post < 300; post += 7)
			for (who = 1; who < 40; who += 3) {
				memset(&r, 0, sizeof(r));
				r.kind = kinds[k];
				r.id = post;
				r.user = kinds[k] == ROW_POST ? who : who + 1;
				r.other = kinds[k] == ROW_POST ? 0 : who;
				r.topic = 3;
				r.visible = 1;
				r.likes = 2;
				n = counters_deltas(NULL, &r, ds);
				assert_true(n > 0);
				author.k1 = who;
				for (i = 0; i < n; i++) {
					if (families[ds[i].fam].obj == OBJ_TOPIC)
						continue;
					if (families[ds[i].fam].obj == OBJ_POST)
						assert_true(ds[i].owner == who);
					assert_int_equal(cname_bucket(&ds[i]),
					    cname_bucket(&author));
				}
				/* the post's id alone would have split them */
				author.k1 = post;
				other += cname_bucket(&author) !=
				    cname_bucket(&ds[0]);
			}
	assert_true(other > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_names_round_trip),
		cmocka_unit_test(test_recount_queries),
		cmocka_unit_test(test_fields_unique_per_object),
		cmocka_unit_test(test_counter_key),
		cmocka_unit_test(test_cstore_names),
		cmocka_unit_test(test_cstore_round_trip),
		cmocka_unit_test(test_buckets_spread),
		cmocka_unit_test(test_one_hash_per_object),
		cmocka_unit_test(test_post_changes_one_bucket),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
