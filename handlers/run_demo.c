/* run_demo.c -- the demo data of a first start; see run_demo.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "run_demo.h"
#include "social/badges.h"
#include "social/seed.h"
#include "store/app.h"
#include "store/rds.h"

/* 1 when Redis answers a PING within about 10 s. */
static int
redis_answers(struct app *a)
{
	rds_reply *rep;
	int i, ok = 0;

	/* a failure leaves Redis alone for a backoff (store/rconn.h):
	 * the tries in it cost nothing */
	for (i = 0; i < 100 && !ok; i++) {
		rep = rds_cmdv(a->rds, "PING", NULL);
		ok = rep != NULL && rds_type(rep) == RDS_STATUS;
		if (rep != NULL)
			rds_free(rep);
		if (!ok)
			usleep(100 * 1000);
	}
	return ok;
}

void
run_demo(void)
{
	/* Enough follows that a demo user's feed is mostly the people
	 * they follow; views, three a like or comment and some more. */
	struct seed_opts o = { .users = 60, .posts = 400, .follows = 1500,
	    .likes = 1500, .comments = 300, .reposts = 150, .views = 3,
	    .rng = 42, .demo = 1, .quiet = 1 };
	const char *demo = getenv("DEMO");
	struct app a;
	long long nid;

	if (demo != NULL && strcmp(demo, "0") == 0)
		return;
	if (app_open(&a, "tally-run") == -1)
		return;
	if (dbq_setting(a.db, "demo_seeded", 0) != 0)
		goto out;
	if (!redis_answers(&a)) {
		log_warn("demo: Redis does not answer: no views seeded");
		o.views = 0;
	}
	/* The demo's own notices and red dot, through the admin's code, so
	 * every badge shows something on a first login. */
	if (seed_run(&a, &o) == 0 &&
	    badges_notice(&a, "Welcome to tally", "Every count you see "
	    "here is exact: likes, followers, views and these badges. "
	    "Try liking a post, then watch the numbers.", &nid) == 0 &&
	    badges_notice(&a, "New: find people", "Search for people by "
	    "name or login on the People page, or browse Topics.",
	    &nid) == 0 && badges_light(&a) == 0) {
		dbq_setting_put(a.db, "demo_seeded", 1);
		printf("tally: demo data: 60 people (alice, bob, carol, ...; "
		    "password \"password\"), 400 posts\n");
	} else
		log_err("demo: seeding failed (see above); tried again at "
		    "the next start");
out:
	app_close(&a);
}
