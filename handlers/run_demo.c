/* run_demo.c -- the demo data of a first start; see run_demo.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "count/lb.h"
#include "count/recount.h"
#include "run_demo.h"
#include "social/account.h"
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

/* 1 when an earlier start's seed left its rows (the demo's first login
 * is taken) but not its mark, 0 not, -1 on error. */
static int
demo_left(struct app *a)
{
	struct account u;

	return account_by_login(a->db, "alice", &u);
}

/* The counters of the demo's rows, as the seed writes them (Redis holds
 * none of them yet: nothing has served).  0, or -1. */
static int
demo_counters(struct app *a)
{
	if (recount_write_all(a) == -1)
		return -1;
	lb_invalidate(a);
	return 0;
}

/* The demo's own notices, through the admin's code, so that every badge
 * shows something on a first login; once (demo_notices).  0, or -1. */
static int
demo_notices(struct app *a)
{
	long long nid;

	if (dbq_setting(a->db, "demo_notices", 0) != 0)
		return 0;
	if (badges_notice(a, "Welcome to tally", "Every count you see here "
	    "is exact: likes, followers, views and these badges. Try liking "
	    "a post, then watch the numbers.", &nid) == -1 ||
	    badges_notice(a, "New: find people", "Search for people by name "
	    "or login on the People page, or browse Topics.", &nid) == -1)
		return -1;
	return dbq_setting_put(a->db, "demo_notices", 1);
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
	int resumed;

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
	/* A start killed after the seed's rows committed (its counters not
	 * yet written, or its notices) left the demo's logins taken: a
	 * second seed failed at every start, and every count read 0 until a
	 * reconciliation.  Such a start's seed is finished instead. */
	if ((resumed = demo_left(&a)) == -1)
		goto out;
	if (resumed)
		log_warn("demo: an earlier start's seed was cut short: its "
		    "counters are written again from its rows");
	if ((resumed ? demo_counters(&a) : seed_run(&a, &o)) == -1 ||
	    demo_notices(&a) == -1 || badges_light(&a) == -1) {
		log_err("demo: seeding failed (see above); tried again at "
		    "the next start");
		goto out;
	}
	dbq_setting_put(a.db, "demo_seeded", 1);
	printf("tally: demo data: 60 people (alice, bob, carol, ...; "
	    "password \"password\"), 400 posts\n");
out:
	app_close(&a);
}
