/* test-capply.c -- counter deltas into a real redis-server (count/
 * capply.c, cstore.h): the rows of one call share one script per bucket,
 * each row applies at most once however often it comes, a shared counter
 * moves once for the whole group (its seq by the number of changes while
 * a reconciliation watches the bucket, not at all otherwise), a
 * loaded live value moves with its pending delta, an unloaded one stays
 * unloaded, rows a drain finished are refused, a signed-in viewer's view
 * counts once per viewer's key, and a Redis that does not answer is -1
 * for every row. */
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

#include "count/ckeep.h"
#include "count/cstore.h"
#include "store/app.h"
#include "store/rds_int.h"
#include "tmpredis.h"

struct fix {
	struct app	a;
	struct rds	rds;
	struct tmpredis	srv;
};

static int
setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	f->a.rds = &f->rds;
	if (tmpredis_start(&f->srv, "capply", f->a.rds) == -1)
		return -1;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fix *f = *state;
	int rc = tmpredis_stop(&f->srv, f->a.rds);

	free(f);
	return rc;
}

static void
flushall(struct fix *f)
{
	rds_free(rds_cmdv(f->a.rds, "FLUSHALL", NULL));
	rds_free(rds_cmdv(f->a.rds, "CONFIG", "RESETSTAT", NULL));
}

/* A hash field as a number; -1 when absent. */
static long long
hget(struct fix *f, const char *key, const char *field)
{
	rds_reply *r = rds_cmdv(f->a.rds, "HGET", key, field, NULL);
	long long v;

	assert_non_null(r);
	v = rds_type(r) == RDS_STRING ? strtoll(rds_str(r), NULL, 10) : -1;
	rds_free(r);
	return v;
}

/* Where counter d lives: its live hash and field, its pending field, and
 * its bucket's pending and seq keys. */
struct where {
	char	hash[48], field[48], pfield[64];
	struct cname_keys k;
};

static void
where(const struct delta *d, struct where *w)
{
	cname_of(d, w->hash, sizeof(w->hash), w->field, sizeof(w->field));
	cname_pfield(d, w->pfield, sizeof(w->pfield));
	cname_keys(d, &w->k);
}

static long long
pending(struct fix *f, const struct delta *d)
{
	struct where w;

	where(d, &w);
	return hget(f, w.k.pending, w.pfield);
}

static long long
seq(struct fix *f, const struct delta *d)
{
	struct where w;

	where(d, &w);
	return hget(f, w.k.seq, w.pfield);
}

static long long
live(struct fix *f, const struct delta *d)
{
	struct where w;

	where(d, &w);
	return hget(f, w.hash, w.field);
}

/* A reconciliation watches d's bucket (meta w, moved.h). */
static void
watch(struct fix *f, const struct delta *d)
{
	struct where w;

	where(d, &w);
	rds_free(rds_cmdv(f->a.rds, "HSET", w.k.meta, "w", "run-1", NULL));
}

static void
load(struct fix *f, const struct delta *d, const char *v)
{
	struct where w;

	where(d, &w);
	rds_free(rds_cmdv(f->a.rds, "HSET", w.hash, w.field, v, NULL));
}

static long long
calls(struct fix *f, const char *cmd)
{
	return tmpredis_calls(f->a.rds, cmd);
}

#define ROWS	7
#define AUTHOR	7
#define TOPIC	3
#define LIKER	9

static struct delta ds[ROWS][DELTA_MAX];
static int nds[ROWS];
static const struct delta *dp[ROWS];

/* Rows 1-6 like posts 101-106 of one author; row 7 takes back the like
 * of post 101. */
static void
likes(void)
{
	struct row r = { .kind = ROW_LIKE, .user = LIKER, .other = AUTHOR,
	    .topic = TOPIC, .visible = 1 };
	int i;

	for (i = 0; i < ROWS; i++) {
		r.id = i < 6 ? 101 + i : 101;
		nds[i] = i < 6 ? counters_deltas(NULL, &r, ds[i]) :
		    counters_deltas(&r, NULL, ds[i]);
		assert_true(nds[i] > 0);
		dp[i] = ds[i];
	}
}

static const struct delta *
find(int row, enum family fam)
{
	int i;

	for (i = 0; i < nds[row]; i++)
		if (ds[row][i].fam == fam)
			return &ds[row][i];
	fail_msg("row %d has no delta of family %d", row, (int)fam);
	return NULL;
}

/* The group of likes(), applied with the bucket watched or not. */
static void
group_on_one_author(struct fix *f, int watched)
{
	long long ids[ROWS] = { 1, 2, 3, 4, 5, 6, 7 };
	const struct delta *ulikes, *p101, *p102, *p103;
	int rc[ROWS], i, nshared = 0, nposts;

	flushall(f);
	likes();
	ulikes = find(0, FAM_USER_LIKES);
	p101 = find(0, FAM_POST_LIKES);
	p102 = find(1, FAM_POST_LIKES);
	p103 = find(2, FAM_POST_LIKES);
	load(f, ulikes, "100");		/* loaded: moves with the deltas */
	load(f, p102, "10");
	if (watched)
		watch(f, ulikes);
	cstore_apply_once_n(&f->a, ids, dp, nds, ROWS, rc);
	for (i = 0; i < ROWS; i++)
		assert_int_equal(rc[i], 1);
	assert_int_equal(pending(f, ulikes), 5);	/* 6 likes, 1 unlike */
	assert_int_equal(live(f, ulikes), 105);
	assert_int_equal(live(f, p102), 11);
	assert_int_equal(pending(f, p102), 1);
	assert_int_equal(live(f, p103), -1);		/* not loaded: stays so */
	assert_int_equal(pending(f, p103), 1);
	assert_int_equal(pending(f, p101), -1);		/* +1 -1: nothing left */
	if (watched) {
		assert_int_equal(seq(f, ulikes), 7);	/* 7 changes */
		assert_int_equal(seq(f, p101), 2);	/* but two changes */
	} else {
		assert_int_equal(seq(f, ulikes), -1);	/* nobody reads them */
		assert_int_equal(seq(f, p101), -1);
	}
	/* Each counter moved once for the group: per counter with a net
	 * change a pending HINCRBY (and the live one when loaded), and
	 * when watched a seq HINCRBY per counter, with a net change or
	 * not.  Row by row it was 2 or 3 for each of the 7 rows' deltas. */
	for (i = 0; i < nds[0]; i++)
		if (ds[0][i].fam != FAM_POST_LIKES)
			nshared++;
	nposts = 5;			/* 102..106; 101 is back at 0 */
	assert_int_equal(calls(f, "hincrby"), (nshared + nposts) +
	    (watched ? nshared + nposts + 1 /* p101's seq */ : 0) +
	    2 /* loaded */);
	assert_int_equal(calls(f, "evalsha") + calls(f, "eval"), 1);
	/* the 7 rows' marks: read in one call, written in one */
	assert_int_equal(calls(f, "zmscore"), 1);
	assert_int_equal(calls(f, "zadd"), 1);
}

static void
test_group_on_one_author(void **state)
{
	group_on_one_author(*state, 0);
}

static void
test_group_watched(void **state)
{
	group_on_one_author(*state, 1);
}

static void
test_at_most_once(void **state)
{
	struct fix *f = *state;
	long long ids[ROWS] = { 1, 2, 3, 4, 5, 6, 7 }, twice[2] = { 8, 8 };
	const struct delta *ulikes, *two[2];
	int rc[ROWS], i, n2[2];

	flushall(f);
	likes();
	ulikes = find(0, FAM_USER_LIKES);
	watch(f, ulikes);
	cstore_apply_once_n(&f->a, ids, dp, nds, ROWS, rc);
	cstore_apply_once_n(&f->a, ids, dp, nds, ROWS, rc);	/* again */
	for (i = 0; i < ROWS; i++)
		assert_int_equal(rc[i], 0);
	assert_int_equal(pending(f, ulikes), 5);
	assert_int_equal(seq(f, ulikes), 7);
	/* one row twice in one call: the second is refused */
	two[0] = two[1] = ds[1];
	n2[0] = n2[1] = nds[1];
	cstore_apply_once_n(&f->a, twice, two, n2, 2, rc);
	assert_int_equal(rc[0], 1);
	assert_int_equal(rc[1], 0);
	assert_int_equal(pending(f, ulikes), 6);
	assert_int_equal(cstore_apply_once(&f->a, 8, ds[1], nds[1]), 0);
	assert_int_equal(pending(f, ulikes), 6);
}

static void
test_finished_rows_refused(void **state)
{
	struct fix *f = *state;
	struct cname_keys k;
	const struct delta *ulikes;

	flushall(f);
	likes();
	ulikes = find(0, FAM_USER_LIKES);
	cname_keys(ulikes, &k);
	/* the drain finished every row up to 20 (outbox.h) */
	rds_free(rds_cmdv(f->a.rds, "HSET", k.meta, "o", "20", NULL));
	assert_int_equal(cstore_apply_once(&f->a, 15, ds[0], nds[0]), 0);
	assert_int_equal(pending(f, ulikes), -1);
	assert_int_equal(cstore_apply_once(&f->a, 21, ds[0], nds[0]), 1);
	assert_int_equal(pending(f, ulikes), 1);
}

static void
test_rows_across_buckets(void **state)
{
	struct fix *f = *state;
	struct row fo = { .kind = ROW_FOLLOW, .user = 1 };
	struct delta fds[2][DELTA_MAX], views = { .fam = FAM_POST_VIEWS,
	    .k1 = 500, .d = 3, .owner = 2 };
	const struct delta *fp[2];
	long long ids[2] = { 30, 31 }, cand = 2;
	int n[2], rc[2], i, j;

	flushall(f);
	/* user 1 follows two users whose buckets differ from its own */
	for (i = 0; i < 2; i++) {
		struct delta a = { .fam = FAM_USER_FOLLOWERS }, b = {
		    .fam = FAM_USER_FOLLOWING, .k1 = 1 };

		for (a.k1 = cand; cname_bucket(&a) == cname_bucket(&b);)
			a.k1++;
		fo.other = a.k1;
		cand = a.k1 + 1;
		n[i] = counters_deltas(NULL, &fo, fds[i]);
		assert_int_equal(n[i], 2);
		fp[i] = fds[i];
	}
	cstore_apply_once_n(&f->a, ids, fp, n, 2, rc);
	assert_int_equal(rc[0], 1);
	assert_int_equal(rc[1], 1);
	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++)		/* 2 followings, 1 follower */
			assert_int_equal(pending(f, &fds[i][j]),
			    fds[i][j].fam == FAM_USER_FOLLOWING ? 2 : 1);
	cstore_apply_once_n(&f->a, ids, fp, n, 2, rc);
	assert_int_equal(rc[0], 0);
	assert_int_equal(rc[1], 0);
	/* no outbox row (a backlog row's): once per token, however often it comes
	 * (a write that timed out, then the backlog's) */
	assert_int_equal(cstore_apply_token(&f->a, "v-1", &views), 1);
	assert_int_equal(cstore_apply_token(&f->a, "v-1", &views), 0);
	assert_int_equal(pending(f, &views), views.d);
	assert_int_equal(cstore_apply_token(&f->a, "v-2", &views), 1);
	assert_int_equal(pending(f, &views), 2 * views.d);
	assert_int_equal(seq(f, &views), -1);		/* not watched */
	watch(f, &views);
	assert_int_equal(cstore_apply_token(&f->a, "v-3", &views), 1);
	assert_int_equal(seq(f, &views), 1);		/* watched: counted */
	/* a row without deltas changes nothing */
	assert_int_equal(cstore_apply_once(&f->a, 40, NULL, 0), 0);
}

/* A signed-in viewer's view: the viewer's key and the count in one
 * script; the key kept for the window, the count moved once per key, a
 * loaded live value with it, seq only while watched. */
static void
test_view_once_per_viewer(void **state)
{
	struct fix *f = *state;
	struct delta v = { .fam = FAM_POST_VIEWS, .k1 = 700, .d = 1,
	    .owner = 9 };
	struct where w;
	char k1[64], k2[64];
	long long n;
	rds_reply *r;

	flushall(f);
	where(&v, &w);
	cname_bucket_key(cname_bucket(&v), "v700:u1", k1, sizeof(k1));
	cname_bucket_key(cname_bucket(&v), "v700:u2", k2, sizeof(k2));
	load(f, &v, "5");
	assert_int_equal(cstore_apply_view(&f->a, &v, k1, "1800000"), 1);
	assert_int_equal(cstore_apply_view(&f->a, &v, k1, "1800000"), 0);
	assert_int_equal(pending(f, &v), 1);
	assert_int_equal(hget(f, w.hash, w.field), 6);
	assert_int_equal(seq(f, &v), -1);		/* not watched */
	r = rds_cmdv(f->a.rds, "PTTL", k1, NULL);
	assert_non_null(r);
	assert_true(rds_int(r) > 1790000 && rds_int(r) <= 1800000);
	rds_free(r);
	watch(f, &v);
	assert_int_equal(cstore_apply_view(&f->a, &v, k2, "1800000"), 1);
	assert_int_equal(pending(f, &v), 2);
	assert_int_equal(hget(f, w.hash, w.field), 7);
	assert_int_equal(seq(f, &v), 1);		/* watched: counted */
	/* the key gone (expired, Redis emptied): the viewer counts again */
	rds_free(rds_cmdv(f->a.rds, "DEL", k1, NULL));
	assert_int_equal(cstore_apply_view(&f->a, &v, k1, "1800000"), 1);
	assert_int_equal(pending(f, &v), 3);
	/* the count this process kept is older than the view it counted: a
	 * page that counted it shows it (count/ckeep.h), not the kept one */
	ckeep_put(w.hash, w.field, 8, ckeep_epoch());
	assert_int_equal(ckeep_get(w.hash, w.field, &n), 1);
	cname_bucket_key(cname_bucket(&v), "v700:u3", k2, sizeof(k2));
	assert_int_equal(cstore_apply_view(&f->a, &v, k2, "1800000"), 1);
	assert_int_equal(ckeep_get(w.hash, w.field, &n), 0);
	/* queued, a view's script goes with the reads after it, which see
	 * it (a post page's counts): its reply first, then theirs */
	cname_bucket_key(cname_bucket(&v), "v700:u4", k2, sizeof(k2));
	assert_int_equal(cstore_view_send(&f->a, &v, k2, "1800000"), 0);
	assert_int_equal(rds_append_strs(f->a.rds, 3,
	    (const char *[]){ "HGET", w.hash, w.field }), 0);
	assert_int_equal(cstore_view_recv(&f->a), 1);
	r = NULL;
	assert_int_equal(rds_get_reply(f->a.rds, &r), 0);
	assert_non_null(r);
	assert_string_equal(rds_str(r), "10");
	rds_free(r);
	assert_int_equal(pending(f, &v), 5);
}

static void
test_redis_down(void **state)
{
	struct fix *f = *state;
	struct app down;
	struct rds down_rds;
	char path[128];
	int rc[ROWS], i;
	long long ids[ROWS] = { 1, 2, 3, 4, 5, 6, 7 };

	likes();
	memset(&down, 0, sizeof(down));
	down.rds = &down_rds;
	snprintf(path, sizeof(path), "%s/nobody.sock", f->srv.dir);
	rds_init(down.rds, path, 200);
	cstore_apply_once_n(&down, ids, dp, nds, ROWS, rc);
	for (i = 0; i < ROWS; i++)
		assert_int_equal(rc[i], -1);
	rds_close(down.rds);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_on_one_author),
		cmocka_unit_test(test_group_watched),
		cmocka_unit_test(test_at_most_once),
		cmocka_unit_test(test_finished_rows_refused),
		cmocka_unit_test(test_rows_across_buckets),
		cmocka_unit_test(test_view_once_per_viewer),
		cmocka_unit_test(test_redis_down),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
