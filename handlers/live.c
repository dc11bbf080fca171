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
 * A user is published to at most once in LIVE_GAP_MS: a change within
 * that time of the last event waits for its end, and whatever else came
 * meanwhile goes in the same event (read when it is sent, so always the
 * badges then).  Without it, a busy author (thousands of likes a second)
 * cost nginx a write to each of their streams every few milliseconds:
 * with 100 of them open, a like cost nginx a third more
 * (docs/BENCHMARKS.md, "Live badges").  An event still comes within
 * LIVE_GAP_MS + a publish of any change.
 *
 * Only a tally-live that reaches nginx's publisher socket takes changes:
 * on a handler host whose nginx is another machine's, it waits (the one
 * beside nginx publishes; a session ended there is closed through the
 * queue, "c<uid>": social/live.h).  Taking and dropping its share lost
 * the events it took.
 *
 * Redis down, or refusing writes: nothing can be taken nor read (or
 * queued), and the streams would stay open and silent.  Their channels are deleted instead, which closes
 * them: each page polls /badges.json until a new stream opens, which
 * /badges/live refuses (503) until Redis answers again.  A stream this
 * process had not heard of when Redis failed (opened a moment before,
 * its news still in the queue) stays open; once Redis answers, every
 * stream open is sent its badges, so none keeps what the outage hid
 * (and meanwhile the page's slow poll is the net).
 *
 * Environment: as every program (base/cfg.h); the socket nginx's
 * publisher listens on is TALLY_LIVE_SOCK, or $RUN_DIR/live.sock
 * (nginx-conf/tally-live.conf.in).
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/pace.h"
#include "social/badges.h"
#include "social/live.h"
#include "store/app.h"
#include "store/liveq.h"
#include "store/pubsub.h"
#include "web/bjson.h"

#define LIVE_WAIT_MS		LIVEQ_WAIT_MAX_MS	/* a wait for the queue */
#define LIVE_COALESCE_MS	5	/* what comes meanwhile is one event */
#define LIVE_EXPIRE_MS		10000	/* lapsed registrations dropped */
#define LIVE_GAP_MS		100	/* a user's events, this far apart */

/* When each user was last published to (base/pace.h). */
static struct pace sent = { .gap_ms = LIVE_GAP_MS };
static long long waiting[PACE_SLOTS];	/* uids whose event waits */
static int nwaiting;

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
	int n = liveq_members(a->rds, clock_wall_ms(), &uids);

	if (n < 0)
		return -1;
	qsort(uids, (size_t)n, sizeof(*uids), by_id);
	free(*known);
	*known = uids;
	return n;
}

/* Streams that opened since the last refresh: known at once (*known
 * stays ascending, each user once). */
static void
learn(long long **known, int *n, const long long *opened, int nopened)
{
	int i, lo, hi, mid;

	for (i = 0; i < nopened; i++) {
		lo = 0;
		hi = *n;
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if ((*known)[mid] < opened[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < *n && (*known)[lo] == opened[i])
			continue;
		*known = xrealloc(*known, (size_t)(*n + 1) * sizeof(**known));
		memmove(*known + lo + 1, *known + lo,
		    (size_t)(*n - lo) * sizeof(**known));
		(*known)[lo] = opened[i];
		(*n)++;
	}
}

/* Publishes uid's badges now. */
static void
publish(struct app *a, struct pubsub *ps, long long uid)
{
	struct badges bd;
	const char *json, *etag;
	char channel[32];
	int heard;

	snprintf(channel, sizeof(channel), "u%lld", uid);
	if (badges_get(a, uid, &bd) == -1 ||
	    bjson_get(&bd, &json, &etag) == -1 ||
	    (heard = pubsub_publish(ps, channel, json, strlen(json))) == -1) {
		metrics_live(a->metrics, METRICS_LIVE_FAILED);
		return;
	}
	metrics_live(a->metrics, METRICS_LIVE_PUBLISHED);
	/* nginx keeps a stream 10 minutes after its last message: heard,
	 * the streams are registered that long again (store/liveq.h) */
	if (heard > 0)
		live_renew(a, uid, clock_wall_ms() + LIVEQ_STREAM_MS);
}

/* uid's badges moved: published now, or once its gap ends. */
static void
offer(struct app *a, struct pubsub *ps, long long uid, long long now)
{
	struct pace_slot *e = pace_slot(&sent, uid, now);

	if (e == NULL || e->at == 0 || now - e->at >= LIVE_GAP_MS) {
		publish(a, ps, uid);
		if (e != NULL)
			e->at = now;
	} else if (!e->waiting) {
		e->waiting = 1;
		waiting[nwaiting++] = uid;
	}
}

/* Publishes the waiting users whose gap is over; how long until the
 * next one's is (LIVE_WAIT_MS when none waits). */
static int
send_due(struct app *a, struct pubsub *ps, long long now)
{
	struct pace_slot *e;
	long long left, soonest = LIVE_WAIT_MS;
	int i, k = 0;

	for (i = 0; i < nwaiting; i++) {
		e = pace_slot(&sent, waiting[i], now);	/* waiting: still its own */
		left = e->at + LIVE_GAP_MS - now;
		if (left <= 0) {
			publish(a, ps, waiting[i]);
			e->at = now;
			e->waiting = 0;
			continue;
		}
		if (left < soonest)
			soonest = left;
		waiting[k++] = waiting[i];
	}
	nwaiting = k;
	return (int)soonest;
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
		log_warn("live: Redis failed or refuses writes; %d streams "
		    "closed, their pages poll", n);
}

int
main(void)
{
	struct app a;
	struct pubsub ps;
	struct liveq_batch b;
	long long *known = NULL, *targets, expire_at = 0, refresh_at = 0, now;
	struct timespec nap = { 0, 500 * 1000 * 1000 };
	int nknown = 0, rc, n, i, down = 0, wait = LIVE_WAIT_MS, idle = 0;
	int refusing, refused = 0;

	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	signal(SIGPIPE, SIG_IGN);
	if (app_open(&a, "live") == -1)
		return 1;
	a.metrics = metrics_open(&a.cfg);
	if (pubsub_open(&ps, a.cfg.live_sock) == -1)
		return 1;
	log_info("live: publishing to %s", a.cfg.live_sock);
	while (!stopping) {
		/* nginx's publisher not here (a handler host: its nginx is
		 * another machine's, whose tally-live publishes; or nginx
		 * not started yet): nothing is taken, which only a
		 * tally-live that can publish may */
		if (access(a.cfg.live_sock, F_OK) == -1) {
			if (!idle++)
				log_info("live: no publisher at %s; the "
				    "changes are left to the tally-live "
				    "beside nginx", a.cfg.live_sock);
			nanosleep(&nap, NULL);
			continue;
		}
		if (idle)
			log_info("live: %s is there; publishing",
			    a.cfg.live_sock);
		idle = 0;
		rc = liveq_take(a.rds, wait > 0 ? wait : 1, LIVE_COALESCE_MS,
		    &b);
		if (rc == -1) {
			if (!down)
				close_all(&ps, known, nknown);
			down = 1;
			nanosleep(&nap, NULL);
			continue;
		}
		/* Redis refusing writes (out of memory, noeviction; the
		 * host's processes met it: rds_refusing()) answers a take,
		 * a read, but no change can be queued: the streams open
		 * would stay silent, their pages polling slowly.  As it
		 * begins to refuse, they are closed, every one registered
		 * (reads are answered) and those just opened among them;
		 * a stream cannot open again until Redis takes writes (its
		 * registration is one), and then hears as any. */
		if ((refusing = rds_refusing(a.rds)) && !refused) {
			if (rc == 1)
				learn(&known, &nknown, b.opened, b.nopened);
			if ((n = refresh(&a, &known)) >= 0)
				nknown = n;
			close_all(&ps, known, nknown);
		}
		refused = refusing;
		now = clock_mono_ms();
		if (down && (n = refresh(&a, &known)) >= 0) {
			/* Redis is back: the streams still open missed what
			 * changed meanwhile (nothing could be queued) */
			nknown = n;
			refresh_at = now + 1000;
			for (i = 0; i < nknown && !stopping; i++)
				offer(&a, &ps, known[i], clock_mono_ms());
		}
		down = 0;
		if (now >= expire_at) {
			liveq_expire(a.rds, clock_wall_ms());
			expire_at = now + LIVE_EXPIRE_MS;
		}
		/* every stream open: for everyone or an author's followers,
		 * and each second for close_all(); a change to a few users
		 * asks about them alone */
		if ((rc == 1 && (b.everyone || b.nauthors > 0)) ||
		    now >= refresh_at) {
			if ((n = refresh(&a, &known)) >= 0)
				nknown = n;
			refresh_at = now + 1000;
		}
		if (rc == 1)
			learn(&known, &nknown, b.opened, b.nopened);
		/* sessions ended on a host without the publisher */
		for (i = 0; rc == 1 && i < b.nclosed; i++) {
			char channel[32];

			snprintf(channel, sizeof(channel), "u%lld",
			    b.closed[i]);
			pubsub_drop(&ps, channel);
		}
		if (rc == 1 && !b.everyone && b.nauthors == 0 &&
		    (n = liveq_filter(a.rds, clock_wall_ms(), b.users,
		    b.nusers)) > 0) {
			for (i = 0; i < n && !stopping; i++)
				offer(&a, &ps, b.users[i], clock_mono_ms());
		} else if (rc == 1 && (b.everyone || b.nauthors > 0) &&
		    nknown > 0 && (n = live_targets(&a, &b, known, nknown,
		    &targets)) >= 0) {
			for (i = 0; i < n && !stopping; i++)
				offer(&a, &ps, targets[i], clock_mono_ms());
			free(targets);
		}
		wait = send_due(&a, &ps, clock_mono_ms());
	}
	pubsub_close(&ps);
	free(known);
	app_close(&a);
	return 0;
}
