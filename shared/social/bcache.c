/* bcache.c -- the badge cache in Redis; see bcache.h. */
#include <stdio.h>
#include <stdlib.h>

#include "base/clock.h"
#include "count/counters.h"
#include "count/cstore.h"
#include "social/bcache.h"
#include "store/keys.h"

/* KEYS: {u}:bm.  ARGV: gen, seen, visited, fb, fbe, at. */
static struct rds_script fill_lua = { .src =
	"#!lua\n"
	"if (redis.call('HGET', KEYS[1], 'gen') or '0') ~= ARGV[1] then"
	" return 0 end\n"
	"redis.call('HSET', KEYS[1], 'fg', ARGV[1], 'seen', ARGV[2],"
	" 'visited', ARGV[3], 'fb', ARGV[4], 'fbe', ARGV[5], 'at', ARGV[6])\n"
	"redis.call('PEXPIRE', KEYS[1], 86400000)\n"
	"return 1\n" };

/* KEYS: {g}:badge.  ARGV: latest, lit, at (each merged with max; -1
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

/* KEYS: {g}:badge.  ARGV: a fresh epoch, bump (1/0).  A missing epoch
 * restarts far above any value it had (now in microseconds), so no fb
 * stored against an old epoch can ever match again. */
static struct rds_script epoch_lua = { .src =
	"#!lua\n"
	"redis.call('HSETNX', KEYS[1], 'epoch', ARGV[1])\n"
	"if ARGV[2] == '1' then"
	" return redis.call('HINCRBY', KEYS[1], 'epoch', 1) end\n"
	"return tonumber(redis.call('HGET', KEYS[1], 'epoch'))\n" };

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

	if (e->type == RDS_INTEGER) {
		*v = e->integer;
		return 1;
	}
	if (e->type != RDS_STRING || e->len == 0)
		return 0;
	*v = strtoll(e->str, &end, 10);
	return *end == '\0';
}

static long long
epoch(struct app *a, int bump)
{
	const char *keys[1] = { KEY_BADGE_GLOBAL }, *args[2];
	char fresh[24];
	rds_reply *rep;
	long long v = -1;

	snprintf(fresh, sizeof(fresh), "%lld", clock_wall_ms() * 1000);
	args[0] = fresh;
	args[1] = bump ? "1" : "0";
	if ((rep = rds_eval(&a->rds, &epoch_lua, 1, keys, 2, args)) == NULL)
		return -1;
	if (!num(rep, &v))
		v = -1;
	rds_free(rep);
	return v;
}

int
bcache_get(struct app *a, long long uid, const char *hex, struct badges *b,
    struct bcache_stamp *st)
{
	char kss[KEY_MAX], kn[KEY_MAX], kbm[KEY_MAX], field[48];
	const char *ss[3], *n[3], *bm[9], *g[6] = { "HMGET", KEY_BADGE_GLOBAL,
	    "latest", "lit", "at", "epoch" };
	struct delta d = { .fam = FAM_USER_UNREAD, .k1 = uid };
	rds_reply *rep[4] = { NULL, NULL, NULL, NULL };
	const char **cmd[4] = { ss, n, bm, g };
	const int argc[4] = { 3, 3, 9, 6 };
	long long t = clock_wall_ms(), v[8] = { 0 }, gv[4] = { 0 }, until;
	int i, have[8], ghave[4], first = hex != NULL ? 0 : 1;
	int rc = hex != NULL ? -1 : 0;

	st->ok = 0;
	st->at = t;
	key_user(kss, sizeof(kss), uid, "ss", NULL);
	cstore_name(&d, kn, sizeof(kn), field, sizeof(field));
	key_user(kbm, sizeof(kbm), uid, "bm", NULL);
	ss[0] = "HGET", ss[1] = kss, ss[2] = hex;
	n[0] = "HGET", n[1] = kn, n[2] = field;
	bm[0] = "HMGET", bm[1] = kbm, bm[2] = "gen", bm[3] = "fg", bm[4] = "at",
	    bm[5] = "fbe", bm[6] = "seen", bm[7] = "visited", bm[8] = "fb";
	/* One round trip: plain commands (cheaper for Redis than a script),
	 * all sent before the first reply is read. */
	for (i = first; i < 4; i++)
		if (rds_append_strs(&a->rds, argc[i], cmd[i]) == -1) {
			rds_collect(&a->rds, i - first);
			return rc;
		}
	for (i = first; i < 4; i++)
		if (rds_get_reply(&a->rds, &rep[i]) == -1)
			goto out;
	if (hex != NULL && (rep[0]->type != RDS_STRING ||
	    !num(rep[0], &until) || until <= t))
		goto out;		/* no session here, or past its time */
	if (rep[2]->type != RDS_ARRAY || rep[2]->elements != 7 ||
	    rep[3]->type != RDS_ARRAY || rep[3]->elements != 4)
		goto out;		/* error replies: ask SQLite */
	rc = 0;
	have[0] = num(rep[1], &v[0]);
	for (i = 1; i < 8; i++)
		have[i] = num(rep[2]->element[i - 1], &v[i]);
	for (i = 0; i < 4; i++)
		ghave[i] = num(rep[3]->element[i], &gv[i]);
	/* v: unread gen fg at fbe seen visited fb; gv: latest lit at epoch */
	st->gen = have[1] ? v[1] : 0;
	st->epoch = ghave[3] ? gv[3] : epoch(a, 0);
	st->ok = st->epoch >= 0;
	if (have[0] && have[2] && v[2] == st->gen && have[3] &&
	    t - v[3] <= BCACHE_USER_MS && have[4] && ghave[3] &&
	    v[4] == gv[3] && have[5] && have[6] && have[7] && ghave[0] &&
	    ghave[1] && ghave[2] && t - gv[2] <= BCACHE_GLOBAL_MS) {
		b->notifications = v[0] > 0 ? v[0] : 0;
		b->notices = gv[0] > v[5] ? gv[0] - v[5] : 0;
		b->red_dot = gv[1] > 0 && gv[1] > v[6];
		b->followed = v[7];
		rc = 1;
	}
out:
	for (i = 0; i < 4; i++)
		if (rep[i] != NULL)
			rds_free(rep[i]);
	return rc;
}

void
bcache_fill(struct app *a, long long uid, const struct bcache_stamp *st,
    long long seen, long long visited, long long fb, long long latest,
    long long lit)
{
	char kbm[KEY_MAX], s[6][24];
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
	key_user(kbm, sizeof(kbm), uid, "bm", NULL);
	keys[0] = kbm;
	/* Both scripts in one round trip (an append copies its arguments). */
	if (rds_append_eval(&a->rds, &fill_lua, 1, keys, 6, args) == -1)
		return;
	snprintf(s[0], sizeof(s[0]), "%lld", latest);
	snprintf(s[1], sizeof(s[1]), "%lld", lit);
	snprintf(s[2], sizeof(s[2]), "%lld", st->at);
	keys[0] = KEY_BADGE_GLOBAL;
	queued = 1 + (rds_append_eval(&a->rds, &globals_lua, 1, keys, 3,
	    args) == 0);
	rds_collect(&a->rds, queued);
}

void
bcache_globals(struct app *a, long long latest, long long lit)
{
	const char *keys[1] = { KEY_BADGE_GLOBAL }, *args[3];
	char s[2][24];
	rds_reply *rep;

	snprintf(s[0], sizeof(s[0]), "%lld", latest);
	snprintf(s[1], sizeof(s[1]), "%lld", lit);
	args[0] = s[0];
	args[1] = s[1];
	args[2] = "-1";
	if ((rep = rds_eval(&a->rds, &globals_lua, 1, keys, 3, args)) != NULL)
		rds_free(rep);
}

void
bcache_forget(struct app *a, long long uid)
{
	char kbm[KEY_MAX];
	const char *keys[1];
	rds_reply *rep;

	key_user(kbm, sizeof(kbm), uid, "bm", NULL);
	keys[0] = kbm;
	if ((rep = rds_eval(&a->rds, &forget_lua, 1, keys, 0, NULL)) != NULL)
		rds_free(rep);
}

void
bcache_timeline_changed(struct app *a)
{
	epoch(a, 1);
}
