/* liveq.c -- the live badges' queue and open streams; see liveq.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "base/buf.h"
#include "store/key.h"
#include "store/liveq.h"

#define CAP_STR	"-100000"	/* LTRIM's start: the newest LIVEQ_CAP */

int
liveq_append(struct rds *r, char kind, long long id)
{
	char item[24];
	const char *push[3] = { "RPUSH", KEY_LIVE_QUEUE, item };
	const char *trim[4] = { "LTRIM", KEY_LIVE_QUEUE, CAP_STR, "-1" };

	if (kind == 'g')
		snprintf(item, sizeof(item), "g");
	else
		snprintf(item, sizeof(item), "%c%lld", kind, id);
	if (rds_append_strs(r, 3, push) == -1)
		return -1;
	if (rds_append_strs(r, 4, trim) == -1) {
		rds_collect(r, 1);
		return -1;
	}
	return 2;
}

int
liveq_push(struct rds *r, char kind, long long id)
{
	int n = liveq_append(r, kind, id);

	return n < 0 ? -1 : rds_collect(r, n);
}

int
liveq_ask(struct rds *r, const char *flag)
{
	const char *exists[2] = { "EXISTS", flag };

	return rds_append_strs(r, 2, exists) == -1 ? -1 : 1;
}

int
liveq_answer(struct rds *r)
{
	rds_reply *rep;
	int yes;

	if (rds_get_reply(r, &rep) == -1)
		return -1;
	yes = rep->type == RDS_INTEGER ? rep->integer > 0 : -1;
	rds_free(rep);
	return yes;
}

int
liveq_tell_user(struct rds *r, long long uid, const char *flag)
{
	int yes;

	if (liveq_ask(r, flag) == -1 || (yes = liveq_answer(r)) == -1)
		return -1;
	return yes ? liveq_push(r, 'u', uid) : 0;
}

/* uid's flag and registration until until_ms, and, when opened, "o<uid>"
 * queued: 0 or -1. */
static int
mark(struct rds *r, long long uid, long long until_ms, const char *flag,
    int opened)
{
	rds_reply *rep;
	char score[24], member[24], ttl[24];
	int ok, told;

	const char *set[5] = { "SET", flag, "1", "PX", ttl };
	const char *zadd[5] = { "ZADD", KEY_LIVE_SET, "GT", score, member };

	snprintf(score, sizeof(score), "%lld", until_ms);
	snprintf(member, sizeof(member), "%lld", uid);
	snprintf(ttl, sizeof(ttl), "%d", LIVEQ_STREAM_MS);
	/* the flag first: a change applied after it is asked about and
	 * told; one applied before it is in the badges the caller reads
	 * next (same node as the change, so ordered with it) */
	if (rds_append_strs(r, 5, set) == -1)
		return -1;
	if (rds_append_strs(r, 5, zadd) == -1) {
		rds_collect(r, 1);
		return -1;
	}
	told = opened ? liveq_append(r, 'o', uid) : 0;
	if (rds_get_reply(r, &rep) == -1)
		return -1;
	ok = rep->type == RDS_STATUS;
	rds_free(rep);
	if (rds_get_reply(r, &rep) == -1)
		return -1;
	ok = ok && rep->type == RDS_INTEGER;
	rds_free(rep);
	if (told > 0)
		rds_collect(r, told);
	return ok ? 0 : -1;
}

int
liveq_join(struct rds *r, long long uid, long long until_ms,
    const char *flag)
{
	return mark(r, uid, until_ms, flag, 1);
}

int
liveq_renew(struct rds *r, long long uid, long long until_ms,
    const char *flag)
{
	return mark(r, uid, until_ms, flag, 0);
}

static int
add_id(long long *v, int *n, long long id)
{
	int i;

	for (i = 0; i < *n; i++)
		if (v[i] == id)
			return 0;
	if (*n == LIVEQ_TAKE_MAX)
		return -1;
	v[(*n)++] = id;
	return 0;
}

int
liveq_parse(const char *item, size_t len, struct liveq_batch *b)
{
	char buf[24], *end;
	long long id;

	if (len == 1 && item[0] == 'g') {
		b->everyone = 1;
		return 0;
	}
	if (len < 2 || len >= sizeof(buf) ||
	    (item[0] != 'u' && item[0] != 'a' && item[0] != 'o' &&
	    item[0] != 'c'))
		return -1;
	memcpy(buf, item + 1, len - 1);
	buf[len - 1] = '\0';
	id = strtoll(buf, &end, 10);
	if (*end != '\0' || id <= 0 || buf[0] < '0' || buf[0] > '9')
		return -1;
	if (item[0] == 'u')
		return add_id(b->users, &b->nusers, id);
	if (item[0] == 'o')
		return add_id(b->opened, &b->nopened, id);
	if (item[0] == 'c')
		return add_id(b->closed, &b->nclosed, id);
	return add_id(b->authors, &b->nauthors, id);
}

static void
take_reply(const rds_reply *rep, struct liveq_batch *b)
{
	size_t i;

	if (rep->type == RDS_STRING)
		liveq_parse(rep->str, rep->len, b);
	for (i = 0; rep->type == RDS_ARRAY && i < rep->elements; i++)
		if (rep->element[i]->type == RDS_STRING)
			liveq_parse(rep->element[i]->str,
			    rep->element[i]->len, b);
}

int
liveq_take(struct rds *r, int wait_ms, int coalesce_ms, struct liveq_batch *b)
{
	rds_reply *rep;
	char secs[24], count[16];

	memset(b, 0, sizeof(*b));
	if (wait_ms > LIVEQ_WAIT_MAX_MS)
		wait_ms = LIVEQ_WAIT_MAX_MS;
	snprintf(secs, sizeof(secs), "%d.%03d", wait_ms / 1000, wait_ms % 1000);
	if ((rep = rds_cmdv(r, "BLPOP", KEY_LIVE_QUEUE, secs, NULL)) == NULL)
		return -1;
	if (rep->type == RDS_ERROR) {
		rds_free(rep);
		return -1;
	}
	if (rep->type != RDS_ARRAY || rep->elements != 2) {
		rds_free(rep);		/* nil: the wait ran out */
		return 0;
	}
	take_reply(rep->element[1], b);
	rds_free(rep);
	/* what comes within a few milliseconds goes out as one event */
	if (coalesce_ms > 0) {
		struct timespec ts = { 0, (long)coalesce_ms * 1000000L };

		nanosleep(&ts, NULL);
	}
	/* one taken already: a batch holds LIVEQ_TAKE_MAX items at most
	 * (distinct users, a burst of a fan-out: the one more was lost) */
	snprintf(count, sizeof(count), "%d", LIVEQ_TAKE_MAX - 1);
	if ((rep = rds_cmdv(r, "LPOP", KEY_LIVE_QUEUE, count, NULL)) == NULL)
		return 1;		/* the first is taken: tell it */
	take_reply(rep, b);
	rds_free(rep);
	return 1;
}

int
liveq_members(struct rds *r, long long now_ms, long long **uids)
{
	rds_reply *rep;
	char from[24];
	size_t i;
	int n = 0;

	*uids = NULL;
	snprintf(from, sizeof(from), "(%lld", now_ms);
	if ((rep = rds_cmdv(r, "ZRANGEBYSCORE", KEY_LIVE_SET, from, "+inf",
	    NULL)) == NULL)
		return -1;
	if (rep->type != RDS_ARRAY) {
		rds_free(rep);
		return -1;
	}
	*uids = xcalloc(rep->elements + 1, sizeof(**uids));
	for (i = 0; i < rep->elements; i++)
		if (rep->element[i]->type == RDS_STRING)
			(*uids)[n++] = strtoll(rep->element[i]->str, NULL, 10);
	rds_free(rep);
	return n;
}

int
liveq_filter(struct rds *r, long long now_ms, long long *uids, int n)
{
	const char **argv;
	char (*num)[24];
	rds_reply *rep;
	int i, k = 0;

	if (n == 0)
		return 0;
	argv = xcalloc((size_t)n + 2, sizeof(*argv));
	num = xcalloc((size_t)n, sizeof(*num));
	argv[0] = "ZMSCORE";
	argv[1] = KEY_LIVE_SET;
	for (i = 0; i < n; i++) {
		snprintf(num[i], sizeof(num[i]), "%lld", uids[i]);
		argv[i + 2] = num[i];
	}
	rep = rds_cmd(r, n + 2, argv, NULL);
	free(argv);
	free(num);
	if (rep == NULL || rep->type != RDS_ARRAY || rep->elements != (size_t)n) {
		if (rep != NULL)
			rds_free(rep);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (rep->element[i]->type == RDS_STRING &&
		    strtoll(rep->element[i]->str, NULL, 10) > now_ms)
			uids[k++] = uids[i];
	rds_free(rep);
	return k;
}

int
liveq_expire(struct rds *r, long long now_ms)
{
	rds_reply *rep;
	char to[24];
	int ok;

	snprintf(to, sizeof(to), "(%lld", now_ms);
	rep = rds_cmdv(r, "ZREMRANGEBYSCORE", KEY_LIVE_SET, "-inf", to, NULL);
	ok = rep != NULL && rep->type == RDS_INTEGER;
	if (rep != NULL)
		rds_free(rep);
	return ok ? 0 : -1;
}
