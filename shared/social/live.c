/* live.c -- live badges: who is told; see live.h. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/log.h"
#include "count/cname.h"
#include "social/live.h"
#include "store/dbq.h"
#include "store/key.h"

void
live_user(struct app *a, long long uid)
{
	char flag[KEY_MAX];

	cname_live_flag(uid, flag, sizeof(flag));
	liveq_tell_user(a->rds, uid, flag);
}

int
live_join(struct app *a, long long uid, long long until_ms)
{
	char flag[KEY_MAX];

	cname_live_flag(uid, flag, sizeof(flag));
	return liveq_join(a->rds, uid, until_ms, flag);
}

int
live_renew(struct app *a, long long uid, long long until_ms)
{
	char flag[KEY_MAX];

	cname_live_flag(uid, flag, sizeof(flag));
	return liveq_renew(a->rds, uid, until_ms, flag);
}

void
live_everyone(struct app *a)
{
	liveq_push(a->rds, 'g', 0);
}


static int
in(const long long *v, int n, long long x)
{
	int lo = 0, hi = n - 1, mid;

	while (lo <= hi) {
		mid = lo + (hi - lo) / 2;
		if (v[mid] == x)
			return 1;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

/* Whether follower follows followee: 1, 0, or -1.  follow_exists() says
 * the same, but social/follow.h is above this module (follow -> bcache ->
 * live): calling it would close an include cycle. */
static int
follows(struct app *a, long long follower, long long followee)
{
	struct dbq *s = dbq_stmt(a->db, STMT_IS_FOLLOWING);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, follower);
	dbq_bind_i64(s, 2, followee);
	rc = dbq_step(s);
	dbq_done(s);
	return rc == DBQ_ROW ? 1 : rc == DBQ_DONE ? 0 : -1;
}

static int
by_id(const void *x, const void *y)
{
	long long p = *(const long long *)x, q = *(const long long *)y;

	return p < q ? -1 : p > q;
}

int
live_targets(struct app *a, const struct liveq_batch *b,
    const long long *live, int nlive, long long **out)
{
	long long users[LIVEQ_TAKE_MAX];
	int i, j, n = 0, f, hit;

	memcpy(users, b->users, sizeof(users));
	qsort(users, (size_t)b->nusers, sizeof(users[0]), by_id);
	*out = xcalloc((size_t)nlive + 1, sizeof(**out));
	for (i = 0; i < nlive; i++) {
		hit = b->everyone || in(users, b->nusers, live[i]);
		/* a stream per live user is few: one indexed look-up each */
		for (j = 0; !hit && j < b->nauthors; j++) {
			if ((f = follows(a, live[i], b->authors[j])) == -1) {
				free(*out);
				*out = NULL;
				return -1;
			}
			hit = f;
		}
		if (hit)
			(*out)[n++] = live[i];
	}
	return n;
}

struct pubsub *
live_publisher(struct app *a)
{
	/* process state: one kept-alive connection, opened at first use */
	static struct pubsub ps;
	static int open;

	if (!open && access(a->cfg.live_sock, F_OK) == 0 &&
	    pubsub_open(&ps, a->cfg.live_sock) == 0)
		open = 1;
	return open ? &ps : NULL;
}

void
live_close(struct app *a, long long uid)
{
	struct pubsub *ps = live_publisher(a);
	char channel[32];

	/* nginx's publisher is on another machine (handler hosts): the
	 * tally-live beside it closes them, told through the queue */
	if (ps == NULL) {
		if (liveq_push(a->rds, 'c', uid) == -1)
			log_warn("live: the streams of user %lld could not be "
			    "closed (Redis)", uid);
		return;
	}
	snprintf(channel, sizeof(channel), "u%lld", uid);
	if (pubsub_drop(ps, channel) == -1)
		log_warn("live: the streams of user %lld could not be closed",
		    uid);
}
