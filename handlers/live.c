/* live.c -- tally-live: the live badges' publisher.
 *
 * One process, supervised by tally-run (or systemd).  It waits on the
 * queue of changes (store/liveq.h), takes what came within LIVE_COALESCE_MS
 * of the first (several changes to one user become one event), keeps the
 * users whose stream is open (live.h), reads each one's badges (the cache:
 * mostly one Redis round trip) and publishes them to the user's channel in
 * nginx (store/pubsub.h), which holds the streams: no process of tally
 * sits on a connection.
 *
 * Redis down: nothing can be taken nor read, and the streams would stay
 * open and silent.  Their channels are deleted instead, which closes
 * them: each page polls /badges.json until a new stream opens, which
 * /badges/live refuses (503) until Redis answers again.
 *
 * Environment: as every program (base/cfg.h); the socket nginx's
 * publisher listens on is $RUN_DIR/live.sock (nginx-conf/tally-http.conf).
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/metrics.h"
#include "social/badges.h"
#include "social/live.h"
#include "store/app.h"
#include "store/liveq.h"
#include "store/pubsub.h"
#include "web/bjson.h"

#define LIVE_WAIT_MS		150	/* a wait for the queue (< Redis's 250) */
#define LIVE_COALESCE_MS	5	/* what comes meanwhile is one event */
#define LIVE_EXPIRE_MS		10000	/* lapsed registrations dropped */

static volatile sig_atomic_t stopping;

static void
on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static int
by_id(const void *x, const void *y)
{
	long long p = *(const long long *)x, q = *(const long long *)y;

	return p < q ? -1 : p > q;
}

/* The streams open now, ascending, into *known (its old list freed).
 * How many, or -1 when Redis failed (then *known is left). */
static int
refresh(struct app *a, long long **known)
{
	long long *uids;
	int n = liveq_members(&a->rds, clock_wall_ms(), &uids);

	if (n < 0)
		return -1;
	qsort(uids, (size_t)n, sizeof(*uids), by_id);
	free(*known);
	*known = uids;
	return n;
}

/* Publishes uid's badges now. */
static void
publish(struct app *a, struct pubsub *ps, long long uid)
{
	struct badges bd;
	const char *json, *etag;
	char channel[32];

	snprintf(channel, sizeof(channel), "u%lld", uid);
	if (badges_get(a, uid, &bd) == -1 ||
	    bjson_get(&bd, &json, &etag) == -1 ||
	    pubsub_publish(ps, channel, json, strlen(json)) == -1) {
		metrics_live(a->metrics, METRICS_LIVE_FAILED);
		return;
	}
	metrics_live(a->metrics, METRICS_LIVE_PUBLISHED);
}

/* Redis is gone: every stream known open is closed (its page polls). */
static void
close_all(struct pubsub *ps, const long long *known, int n)
{
	char channel[32];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(channel, sizeof(channel), "u%lld", known[i]);
		pubsub_drop(ps, channel);
	}
	if (n > 0)
		log_warn("live: Redis failed; %d streams closed, their pages "
		    "poll", n);
}

int
main(void)
{
	struct app a;
	struct pubsub ps;
	struct liveq_batch b;
	char sock[PATH_MAX + 16];
	long long *known = NULL, *targets, expire_at = 0, now;
	struct timespec nap = { 0, 500 * 1000 * 1000 };
	int nknown = 0, rc, n, i, down = 0;

	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	signal(SIGPIPE, SIG_IGN);
	if (app_open(&a, "live") == -1)
		return 1;
	a.metrics = metrics_open(&a.cfg);
	if (cfg_path(&a.cfg, "live.sock", sock, sizeof(sock)) == -1 ||
	    pubsub_open(&ps, sock) == -1)
		return 1;
	log_info("live: publishing to %s", sock);
	while (!stopping) {
		rc = liveq_take(&a.rds, LIVE_WAIT_MS, LIVE_COALESCE_MS, &b);
		if (rc == -1) {
			if (!down)
				close_all(&ps, known, nknown);
			down = 1;
			nanosleep(&nap, NULL);
			continue;
		}
		down = 0;
		now = clock_mono_ms();
		if (now >= expire_at) {
			liveq_expire(&a.rds, clock_wall_ms());
			expire_at = now + LIVE_EXPIRE_MS;
		}
		if ((n = refresh(&a, &known)) >= 0)
			nknown = n;
		if (rc == 0 || nknown == 0)
			continue;
		if ((n = live_targets(&a, &b, known, nknown, &targets)) == -1)
			continue;
		for (i = 0; i < n && !stopping; i++)
			publish(&a, &ps, targets[i]);
		free(targets);
	}
	pubsub_close(&ps);
	free(known);
	app_close(&a);
	return 0;
}
