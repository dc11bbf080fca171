/* rtrack.c -- Redis's invalidation messages for a page cache (rtrack.h). */
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "base/clock.h"
#include "base/log.h"
#include "store/rds_int.h"
#include "store/rtrack.h"

#define RTRACK_RETRY_MS	1000	/* after a failure, keep nothing this long */

static int
is_str(const redisReply *r, const char *s)
{
	return r != NULL && (r->type == REDIS_REPLY_STRING ||
	    r->type == REDIS_REPLY_STATUS) && strcmp(r->str, s) == 0;
}

static void
reset(struct rtrack *t)
{
	if (t->sub != NULL)
		redisFree(t->sub);
	t->sub = NULL;
	t->gen = 0;
}

/* A subscriber, and the data connection's reads redirected to it. */
static int
start(struct rtrack *t, struct rds *rd)
{
	redisReply *rep;
	char id[32];
	int ok;

	if (rconn_connect(&rd->one) == -1 ||
	    (t->sub = rconn_dial_another(&rd->one)) == NULL)
		return -1;
	rep = redisCommand(t->sub, "CLIENT ID");
	ok = rep != NULL && rep->type == REDIS_REPLY_INTEGER;
	if (ok)
		snprintf(id, sizeof(id), "%lld", rep->integer);
	if (rep != NULL)
		freeReplyObject(rep);
	if (!ok)
		return -1;
	rep = redisCommand(t->sub, "SUBSCRIBE __redis__:invalidate");
	ok = rep != NULL && rep->type == REDIS_REPLY_ARRAY;
	if (rep != NULL)
		freeReplyObject(rep);
	if (!ok)
		return -1;
	rep = rds_cmdv(rd, "CLIENT", "TRACKING", "on", "REDIRECT", id, NULL);
	ok = rep != NULL && rep->type == REDIS_REPLY_STATUS;
	if (rep != NULL && !ok && rep->type == REDIS_REPLY_ERROR)
		log_warn("redis: CLIENT TRACKING: %s", rep->str);
	rds_free(rep);
	if (!ok || rd->one.c == NULL)
		return -1;
	t->gen = rd->one.gen;
	return 0;
}

/* One message: 1 the PING's answer, 0 an invalidation, -1 not known. */
static int
message(const redisReply *m, rtrack_drop_fn drop, void *arg)
{
	const redisReply *keys;
	size_t i;

	if (m->type != REDIS_REPLY_ARRAY || m->elements < 2)
		return -1;
	if (is_str(m->element[0], "pong"))
		return 1;
	if (m->elements != 3 || !is_str(m->element[0], "message"))
		return -1;
	keys = m->element[2];
	if (keys->type == REDIS_REPLY_NIL) {	/* FLUSHALL, FLUSHDB */
		drop(arg, NULL, 0);
		return 0;
	}
	if (keys->type != REDIS_REPLY_ARRAY)
		return -1;
	for (i = 0; i < keys->elements; i++) {
		if (keys->element[i]->type != REDIS_REPLY_STRING)
			return -1;
		drop(arg, keys->element[i]->str, keys->element[i]->len);
	}
	return 0;
}

/* After a failure: keep nothing, and for a while do not try again. */
static void
failed(struct rtrack *t, rtrack_drop_fn drop, void *arg)
{
	drop(arg, NULL, 0);
	reset(t);
	/* a second, doubling while it keeps failing (a Redis that refuses
	 * CLIENT TRACKING is asked once a minute at most) */
	t->retry_at_ms = clock_mono_ms() + (RTRACK_RETRY_MS <<
	    (t->fails < 6 ? t->fails : 6));
	t->fails++;
}

int
rtrack_sync_send(struct rtrack *t, struct rds *rd, rtrack_drop_fn drop,
    void *arg)
{
	int done = 0;

	if (rd->cl != NULL)
		return -1;
	/* A data connection the server closed (a restart, CLIENT KILL) lost
	 * its tracking, and says nothing of it: it reads as closed. */
	if (rtrack_still(t, rd) && rd->one.pending == 0 &&
	    poll(&(struct pollfd){ rd->one.c->fd, POLLIN, 0 }, 1, 0) != 0)
		rconn_close(&rd->one);
	if (!rtrack_still(t, rd)) {
		if (t->sub != NULL || t->gen != 0)
			drop(arg, NULL, 0);
		reset(t);
		if (clock_mono_ms() < t->retry_at_ms)
			return -1;
		if (start(t, rd) == -1) {
			failed(t, drop, arg);
			return -1;
		}
	}
	if (redisAppendCommand(t->sub, "PING") != REDIS_OK)
		goto fail;
	while (!done)
		if (redisBufferWrite(t->sub, &done) != REDIS_OK)
			goto fail;
	return 0;
fail:
	failed(t, drop, arg);
	return -1;
}

int
rtrack_sync_recv(struct rtrack *t, rtrack_drop_fn drop, void *arg)
{
	void *p;
	int rc = 0;

	if (t->sub == NULL)
		return -1;
	while (rc == 0) {
		if (redisGetReply(t->sub, &p) != REDIS_OK || p == NULL) {
			failed(t, drop, arg);
			return -1;
		}
		rc = message(p, drop, arg);
		freeReplyObject(p);
	}
	if (rc == -1) {
		failed(t, drop, arg);
		return -1;
	}
	t->nsyncs++;
	t->fails = 0;
	return 0;
}

int
rtrack_still(const struct rtrack *t, const struct rds *rd)
{
	return t->sub != NULL && rd->cl == NULL && rd->one.c != NULL &&
	    rd->one.gen == t->gen;
}
