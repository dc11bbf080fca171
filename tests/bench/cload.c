/* cload.c -- counter load for the coalescing and flush benchmarks.
 *
 * Applies counter increments through tally's own cstore_apply_once() (the
 * apply script per bucket of shared/count/cstore.c, linked
 * from build/libtally.a), so what the flusher finds is exactly what the
 * handlers leave behind.  Finds Redis and SQLite like every tally program
 * (RUN_DIR, TALLY_REDIS, TALLY_DB).
 *
 *   cload incr NKEYS TOTAL BASE
 *       TOTAL increments of +1, round robin over the "likes" counters of
 *       posts BASE .. BASE+NKEYS-1 (one script call per increment, up to
 *       DELTA_MAX of them per pipelined round trip)
 *   cload dirty NOBJ PASSES BASE
 *       gives 2*NOBJ counters pending deltas: "likes" and "views" of posts
 *       BASE .. BASE+NOBJ-1, each incremented by +1 PASSES times
 *
 * A post's counters live in its author's bucket (count/cname.h): post p is
 * given author 1 + p mod 10007, so they spread over the buckets as a
 * site's many authors' do.
 *
 * Prints one line: "<increments> <counters> <seconds>".  Exit status 1
 * when Redis refused or failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/app.h"
#include "count/counters.h"
#include "count/cstore.h"

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long long
num(const char *s, long long min, long long max)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "cload: bad number %s\n", s);
		exit(2);
	}
	return v;
}

static long long
author(long long post)
{
	return 1 + post % 10007;
}

int
main(int argc, char *argv[])
{
	struct delta ds[DELTA_MAX];
	struct app a;
	long long nkeys, total, base, i, k, done = 0, counters;
	int n = 0, incr;
	double t0, t1;

	if (argc != 5 || (strcmp(argv[1], "incr") != 0 &&
	    strcmp(argv[1], "dirty") != 0)) {
		fprintf(stderr, "usage: cload incr NKEYS TOTAL BASE | "
		    "cload dirty NOBJ PASSES BASE\n");
		return 2;
	}
	incr = strcmp(argv[1], "incr") == 0;
	nkeys = num(argv[2], 1, 100000000);
	total = num(argv[3], 1, 1000000000);
	base = num(argv[4], 1, 1000000000000LL);
	if (app_open(&a, "cload") == -1)
		return 1;
	t0 = now_s();
	if (incr) {
		/* Consecutive increments go to different keys, so a round
		 * trip carries DELTA_MAX separate script calls. */
		counters = nkeys;
		for (i = 0; i < total; i++) {
			ds[n].fam = FAM_POST_LIKES;
			ds[n].k1 = base + i % nkeys;
			ds[n].k2 = 0;
			ds[n].d = 1;
			ds[n].owner = author(ds[n].k1);
			if (++n == DELTA_MAX || i + 1 == total ||
			    (nkeys < DELTA_MAX && n == nkeys)) {
				if (cstore_apply_once(&a, 0, ds, n) == -1)
					goto fail;
				done += n;
				n = 0;
			}
		}
	} else {
		/* Per round trip DELTA_MAX / 2 posts, two fields each. */
		counters = 2 * nkeys;
		for (k = 0; k < total; k++)
			for (i = 0; i < nkeys; i++) {
				ds[n].fam = FAM_POST_LIKES;
				ds[n].k1 = base + i;
				ds[n].k2 = 0;
				ds[n].owner = author(base + i);
				ds[n++].d = 1;
				ds[n].fam = FAM_POST_VIEWS;
				ds[n].k1 = base + i;
				ds[n].k2 = 0;
				ds[n].owner = author(base + i);
				ds[n++].d = 1;
				if (n == DELTA_MAX || i + 1 == nkeys) {
					if (cstore_apply_once(&a, 0, ds, n) == -1)
						goto fail;
					done += n;
					n = 0;
				}
			}
	}
	t1 = now_s();
	printf("%lld %lld %.6f\n", done, counters, t1 - t0);
	app_close(&a);
	return 0;
fail:
	fprintf(stderr, "cload: Redis failed after %lld increments\n", done);
	app_close(&a);
	return 1;
}
