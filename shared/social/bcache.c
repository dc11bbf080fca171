/* bcache.c -- the badge cache in Redis; see bcache.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "count/cname.h"
#include "count/counters.h"
#include "count/cstore.h"
#include "social/bcache.h"
#include "social/live.h"
#include "social/sesscache.h"
#include "store/dbq.h"
#include "store/key.h"
#include "store/liveq.h"

/* KEYS: {u}:bm.  ARGV: gen, seen, visited, fb, fbe, at. */
static struct rds_script fill_lua = { .src =
	"#!lua\n"
	"if (redis.call('HGET', KEYS[1], 'gen') or '0') ~= ARGV[1] then"
	" return 0 end\n"
	"redis.call('HSET', KEYS[1], 'fg', ARGV[1], 'seen', ARGV[2],"
	" 'visited', ARGV[3], 'fb', ARGV[4], 'fbe', ARGV[5], 'at', ARGV[6])\n"
	"redis.call('PEXPIRE', KEYS[1], 86400000)\n"
	"return 1\n" };

/* KEYS: a copy of the global part.  ARGV: latest, lit, at (each merged with max; -1
 * leaves a field alone). */
static struct rds_script globals_lua = { .src =
	"#!lua\n"
	"local f = {'latest', 'lit', 'at'}\n"
	"for i = 1, 3 do\n"
	"  local v = tonumber(ARGV[i])\n"
	"  if v >= 0 and v > tonumber(redis.call('HGET', KEYS[1], f[i])"
	" or '-1') then redis.call('HSET', KEYS[1], f[i], ARGV[i]) end\n"
	"end\n"
	"return 1\n" };

/* KEYS: a copy of the global part.  ARGV: a fresh epoch, bump (1/0),
 * step.  A missing epoch restarts far above any value it had (now in
 * microseconds, times the number of copies), so no fb stored against an
 * old epoch can ever match again.  Copy k's epochs are k modulo the
 * number of copies, and a bump adds that number: an fb stored against
 * one copy never matches another's epoch.  The value goes back as Redis
 * holds it (a string): 16 x now in microseconds is past 2^53, where a Lua
 * number would round it. */
static struct rds_script epoch_lua = { .src =
	"#!lua\n"
	"redis.call('HSETNX', KEYS[1], 'epoch', ARGV[1])\n"
	"if ARGV[2] == '1' then"
	" return redis.call('HINCRBY', KEYS[1], 'epoch', ARGV[3]) end\n"
	"return redis.call('HGET', KEYS[1], 'epoch')\n" };

/* KEYS: {u}:bm. */
static struct rds_script forget_lua = { .src =
	"#!lua\n"
	"redis.call('HINCRBY', KEYS[1], 'gen', 1)\n"
	"redis.call('PEXPIRE', KEYS[1], 86400000)\n"
	"return 1\n" };

/* 1 and *v when the element holds a number. */
static int
num(const rds_reply *e, long long *v)
{
	char *end;

	if (rds_type(e) == RDS_INTEGER) {
		*v = rds_int(e);
		return 1;
	}
	if (rds_type(e) != RDS_STRING || rds_len(e) == 0)
		return 0;
	*v = strtoll(rds_str(e), &end, 10);
	return *end == '\0';
}

/* How many copies of the global part there are: one on one Redis, one
 * in each sixteenth of the slot space on a cluster (key.h). */
static int
ncopies(const struct app *a)
{
	return rds_is_cluster(a->rds) ? KEY_BADGE_COPIES : 1;
}

static void
copy_name(const struct app *a, int k, char *out, size_t sz)
{
	if (ncopies(a) == 1)
		snprintf(out, sz, "%s", KEY_BADGE_GLOBAL);
	else
		key_badge_copy(out, sz, k);
}

/* The copy a reader whose keys include ukey reads: one on ukey's node,
 * so that a poll is one node's round trip (copy 0 when the slot map has
 * none there: correct, one node more). */
static int
near_copy(const struct app *a, const char *ukey, char *out, size_t sz)
{
	int k, n = ncopies(a);

	for (k = 0; k < n; k++) {
		copy_name(a, k, out, sz);
		if (rds_same_node(a->rds, ukey, out))
			return k;
	}
	copy_name(a, 0, out, sz);
	return 0;
}

/* Queues epoch_lua on copy k (bump: 1/0): 0, or -1 when Redis is down. */
static int
append_epoch(struct app *a, int k, int bump)
{
	char key[KEY_MAX], fresh[24], step[8];
	const char *keys[1] = { key }, *args[3] = { fresh, bump ? "1" : "0",
	    step };
	int n = ncopies(a);

	copy_name(a, k, key, sizeof(key));
	snprintf(fresh, sizeof(fresh), "%lld", clock_wall_ms() * 1000 * n + k);
	snprintf(step, sizeof(step), "%d", n);
	return rds_append_eval(a->rds, &epoch_lua, 1, keys, 3, args);
}

/* The epoch of copy k, set when missing; -1 when Redis failed. */
static long long
epoch(struct app *a, int k)
{
	rds_reply *rep;
	long long v = -1;

	if (append_epoch(a, k, 0) == -1)
		return -1;
	if (rds_get_reply(a->rds, &rep) == -1)
		return -1;
	if (!num(rep, &v))
		v = -1;
	rds_free(rep);
	return v;
}

void
bcache_send(struct app *a, long long uid, const char *hex,
    struct bcache_q *q)
{
	char kss[KEY_MAX], kn[KEY_MAX], kbm[KEY_MAX], kg[KEY_MAX], field[48];
	const char *ss[3], *n[3], *bm[9], *g[6] = { "HMGET", kg, "latest",
	    "lit", "at", "epoch" };
	struct delta d = { .fam = FAM_USER_UNREAD, .k1 = uid };
	const char **cmd[4] = { ss, n, bm, g };
	const int argc[4] = { 3, 3, 9, 6 };
	int i;

	memset(q, 0, sizeof(*q));
	q->hex = hex != NULL;
	q->t = clock_wall_ms();
	cname_user_cache(uid, "ss", kss, sizeof(kss));
	cname_of(&d, kn, sizeof(kn), field, sizeof(field));
	cname_user_cache(uid, "bm", kbm, sizeof(kbm));
	q->copy = near_copy(a, kbm, kg, sizeof(kg));
	ss[0] = "HGET", ss[1] = kss, ss[2] = hex;
	n[0] = "HGET", n[1] = kn, n[2] = field;
	bm[0] = "HMGET", bm[1] = kbm, bm[2] = "gen", bm[3] = "fg", bm[4] = "at",
	    bm[5] = "fbe", bm[6] = "seen", bm[7] = "visited", bm[8] = "fb";
	/* One round trip: plain commands (cheaper for Redis than a script),
	 * all sent before the first reply is read. */
	for (i = !q->hex; i < 4; i++) {
		if (rds_append_strs(a->rds, argc[i], cmd[i]) == -1)
			return;		/* bcache_read() reads what is queued */
		q->queued++;
	}
}

void
bcache_read(struct app *a, struct bcache_q *q)
{
	int i;

	for (i = 0; i < q->queued; i++)
		if (rds_get_reply(a->rds, &q->rep[!q->hex + i]) == -1)
			break;		/* the transport failed: all gone */
	q->whole = i == 4 - !q->hex;
	if (!q->whole)
		bcache_drop(q);
}

void
bcache_drop(struct bcache_q *q)
{
	int i;

	for (i = 0; i < 4; i++) {
		if (q->rep[i] != NULL)
			rds_free(q->rep[i]);
		q->rep[i] = NULL;
	}
}

int
bcache_end(struct app *a, struct bcache_q *q, struct badges *b,
    struct bcache_stamp *st)
{
	rds_reply **rep = q->rep;
	struct session ss;
	long long t = q->t, v[8] = { 0 }, gv[4] = { 0 };
	int i, have[8], ghave[4], rc = q->hex ? -1 : 0, refusing;

	st->ok = 0;
	st->have_unread = 0;
	st->at = t;
	st->copy = q->copy;
	if (!q->whole)
		goto out;
	if (q->hex && (rds_type(rep[0]) != RDS_STRING ||
	    !sesscache_parse(rds_str(rep[0]), rds_len(rep[0]), t, 0, &ss)))
		goto out;		/* no session here, or past its time */
	if (rds_type(rep[2]) != RDS_ARRAY || rds_n(rep[2]) != 7 ||
	    rds_type(rep[3]) != RDS_ARRAY || rds_n(rep[3]) != 4)
		goto out;		/* error replies: ask SQLite */
	rc = 0;
	/* a server that refuses writes: its unread may be behind the
	 * backlog (rds_refusing()), and so may what the cache says */
	refusing = rds_refusing(a->rds);
	have[0] = num(rep[1], &v[0]) && !refusing;
	st->have_unread = have[0];
	st->unread = v[0];
	for (i = 1; i < 8; i++)
		have[i] = num(rds_at(rep[2], i - 1), &v[i]);
	for (i = 0; i < 4; i++)
		ghave[i] = num(rds_at(rep[3], i), &gv[i]);
	/* v: unread gen fg at fbe seen visited fb; gv: latest lit at epoch */
	st->gen = have[1] ? v[1] : 0;
	st->epoch = ghave[3] ? gv[3] : epoch(a, st->copy);
	st->ok = st->epoch >= 0;
	if (have[0] && have[2] && v[2] == st->gen && have[3] &&
	    t - v[3] <= clock_spread(BCACHE_USER_MS, v[3]) && have[4] &&
	    ghave[3] &&
	    v[4] == gv[3] && have[5] && have[6] && have[7] && ghave[0] &&
	    ghave[1] && ghave[2] && t - gv[2] <= BCACHE_GLOBAL_MS) {
		b->notifications = v[0] > 0 ? v[0] : 0;
		b->notices = gv[0] > v[5] ? gv[0] - v[5] : 0;
		b->red_dot = gv[1] > 0 && gv[1] > v[6];
		b->followed = v[7];
		rc = 1;
	}
out:
	bcache_drop(q);
	return rc;
}

int
bcache_get(struct app *a, long long uid, const char *hex, struct badges *b,
    struct bcache_stamp *st)
{
	struct bcache_q q;

	bcache_send(a, uid, hex, &q);
	bcache_read(a, &q);
	return bcache_end(a, &q, b, st);
}

void
bcache_fill(struct app *a, long long uid, const struct bcache_stamp *st,
    long long seen, long long visited, long long fb, long long latest,
    long long lit)
{
	char kbm[KEY_MAX], kg[KEY_MAX], s[6][24];
	const char *keys[1], *args[6];
	long long vals[6];
	int i, queued;

	if (!st->ok)
		return;
	/* "at" is the stamp's own time, not now: the values were read after
	 * it, so their age is never understated. */
	vals[0] = st->gen;
	vals[1] = seen;
	vals[2] = visited;
	vals[3] = fb;
	vals[4] = st->epoch;
	vals[5] = st->at;
	for (i = 0; i < 6; i++) {
		snprintf(s[i], sizeof(s[i]), "%lld", vals[i]);
		args[i] = s[i];
	}
	cname_user_cache(uid, "bm", kbm, sizeof(kbm));
	copy_name(a, st->copy, kg, sizeof(kg));
	/* Both scripts in one round trip (an append copies its arguments);
	 * the global part into the copy the poll read (its node's).  The
	 * second is appended behind a pending reply, where it could only go
	 * as its whole source: loaded first, while nothing is pending. */
	keys[0] = kg;
	rds_script_ready(a->rds, &globals_lua, 1, keys);
	keys[0] = kbm;
	if (rds_append_eval(a->rds, &fill_lua, 1, keys, 6, args) == -1)
		return;
	snprintf(s[0], sizeof(s[0]), "%lld", latest);
	snprintf(s[1], sizeof(s[1]), "%lld", lit);
	snprintf(s[2], sizeof(s[2]), "%lld", st->at);
	keys[0] = kg;
	queued = 1 + (rds_append_eval(a->rds, &globals_lua, 1, keys, 3,
	    args) == 0);
	rds_collect(a->rds, queued);
}

/* Every copy gets the change: one pipeline (on a cluster, each node's
 * copies in one round trip), then every open stream is told.  On one
 * server the telling rides in the same round trip (one connection keeps
 * the order); on a cluster the copies' nodes answer apart, and a "g"
 * taken before one of them ran its write read the old value there and
 * told it (no event came after): it is queued once every copy answered. */
void
bcache_globals(struct app *a, long long latest, long long lit)
{
	char key[KEY_MAX], s[2][24];
	const char *keys[1] = { key }, *args[3] = { s[0], s[1], "-1" };
	int k, n = ncopies(a), queued = 0, told;

	snprintf(s[0], sizeof(s[0]), "%lld", latest);
	snprintf(s[1], sizeof(s[1]), "%lld", lit);
	for (k = 0; k < n; k++) {
		copy_name(a, k, key, sizeof(key));
		if (rds_append_eval(a->rds, &globals_lua, 1, keys, 3,
		    args) == 0)
			queued++;
	}
	if (rds_is_cluster(a->rds)) {
		rds_collect(a->rds, queued);
		queued = 0;
	}
	if ((told = liveq_append(a->rds, 'g', 0)) > 0)
		queued += told;
	rds_collect(a->rds, queued);
}

/* A bump that did not reach Redis: journaled in SQLite, where the worker
 * finds it once Redis answers again (bcache_replay()). */
static void
missed(struct app *a)
{
	dbq_setting_put(a->db, BCACHE_MISSED, clock_wall_ms());
}

void
bcache_forget(struct app *a, long long uid)
{
	char kbm[KEY_MAX];
	const char *keys[1];
	rds_reply *rep;
	int ok;

	cname_user_cache(uid, "bm", kbm, sizeof(kbm));
	keys[0] = kbm;
	rep = rds_eval(a->rds, &forget_lua, 1, keys, 0, NULL);
	ok = rep != NULL && rds_type(rep) != RDS_ERROR;
	if (rep != NULL)
		rds_free(rep);
	if (!ok)
		missed(a);
	else
		live_user(a, uid);	/* its stream, if one is open */
}

/* Bumps the epoch of every copy: 0, or -1 when one was not bumped. */
static int
bump_all(struct app *a)
{
	int k, n = ncopies(a), queued = 0;

	for (k = 0; k < n; k++)
		if (append_epoch(a, k, 1) == 0)
			queued++;
	return rds_collect(a->rds, queued) == 0 && queued == n ? 0 : -1;
}

void
bcache_readers_changed(struct app *a, const long long *uids, int n)
{
	char kbm[KEY_MAX], flag[KEY_MAX];
	const char *hv[4] = { "HINCRBY", kbm, "gen", "1" };
	const char *ev[3] = { "PEXPIRE", kbm, "86400000" };
	rds_reply *rep;
	int *yes = xcalloc((size_t)(n > 0 ? n : 1), sizeof(*yes));
	int i, k, queued = 0, told = 0, ok = n >= 0;

	/* forget_lua's two commands, plain (no script to run per reader),
	 * and whether the reader listens (live.h); each command is
	 * formatted when queued: kbm and flag are written again */
	for (i = 0; i < n && ok; i++) {
		cname_user_cache(uids[i], "bm", kbm, sizeof(kbm));
		cname_live_flag(uids[i], flag, sizeof(flag));
		ok = rds_append_strs(a->rds, 4, hv) == 0 &&
		    rds_append_strs(a->rds, 3, ev) == 0 &&
		    liveq_ask(a->rds, flag) == 1;
		if (ok)
			queued++;
	}
	/* a reader whose three replies did not all come is not told */
	for (i = 0; i < queued; i++) {
		for (k = 0; k < 2; k++) {
			rep = NULL;
			if (rds_get_reply(a->rds, &rep) == -1 ||
			    rds_type(rep) == RDS_ERROR)
				ok = 0;
			rds_free(rep);
		}
		yes[i] = liveq_answer(a->rds) == 1;
	}
	if (!ok || queued < n)
		missed(a);
	/* their streams, read after the bumps (one more round trip, only
	 * when someone listens) */
	for (i = 0; i < queued; i++)
		if (yes[i] && (k = liveq_append(a->rds, 'u', uids[i])) > 0)
			told += k;
	if (told > 0)
		rds_collect(a->rds, told);
	free(yes);
}

int
bcache_replay(struct app *a)
{
	long long since = dbq_setting(a->db, BCACHE_MISSED, 0);

	if (since == 0)
		return 0;
	if (bump_all(a) == -1)
		return -1;
	/* Cleared only if no new miss came meanwhile. */
	if (dbq_setting(a->db, BCACHE_MISSED, 0) == since)
		dbq_setting_put(a->db, BCACHE_MISSED, 0);
	return 1;
}
