/* capply.c -- counter deltas into Redis: one script per bucket for all
 * the rows of a call; see cstore.h.
 *
 * A group commit's likes (web/batch.h) are often on one author's posts:
 * the author's "likes" and "unread" and the topic rating are the same
 * counters in every row.  Row by row, each like was its own script of
 * ~18 commands (~40 us of Redis a like; docs/BENCHMARKS.md, "A group's
 * counters, one script a bucket").  Here the rows of one bucket go in one
 * script, which marks each row (at most once, as before), then adds up
 * what the marked rows change per counter and moves each counter once:
 * a group of 16 likes on one author is 16 marks, 16 post counters and 3
 * author counters, not 16 x 4.  Rows on different authors cost what they
 * did.  While a reconciliation watches the bucket (meta w, moved.h), the
 * seq field (cstore.h) is bumped by the number of changes, so it moves
 * with every change the run must see; unwatched, nothing reads it, and a
 * like writes (and each replica applies) one command a counter less.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fault.h"
#include "base/log.h"
#include "count/ckeep.h"
#include "count/cstore.h"
#include "store/key.h"
#include "store/liveq.h"

/* KEYS: pending, meta, outbox marks, seq, fence, fence log, live
 * hashes...  ARGV: the number of rows R, their R outbox row ids ("0":
 * none), then per delta (row 1..R, live key index, field, pending field,
 * delta).  A row applies once per bucket (marked in the outbox set; ids
 * up to meta o are finished, outbox.h): the rows' marks are read in one
 * ZMSCORE and the new ones written in one ZADD, not a ZADD a row (each
 * call from Lua costs Redis about as much as the command itself).  A
 * counter under a correction's fence (settle.h) also gets each applied
 * delta written to the fence's log with its row id; a fence older than
 * CSTORE_FENCE_MS (10 s: its settler died) is dropped instead.  With no fence in the
 * bucket that is one EXISTS.  seq moves only when meta w is set (read
 * with o in one HMGET).  -> per row 1 applied, or 0 refused. */
static struct rds_script apply_lua = { .src =
	"#!lua\n"
	"local nr, ok, res = tonumber(ARGV[1]), {}, {}\n"
	"local m = redis.call('HMGET', KEYS[2], 'o', 'w')\n"
	"local o, watched = tonumber(m[1] or '0'), m[2]\n"
	"local had, seen, add = nil, {}, {}\n"
	"for r = 1, nr do\n"
	"  local id = tonumber(ARGV[r + 1])\n"
	"  if id > 0 and had == nil then\n"
	"    had = redis.call('ZMSCORE', KEYS[3], unpack(ARGV, 2, nr + 1)) end\n"
	"  if id == 0 or (id > o and not had[r] and not seen[id]) then\n"
	"    if id > 0 then\n"
	"      seen[id] = true; add[#add + 1] = id; add[#add + 1] = ARGV[r + 1] end\n"
	"    ok[r] = true; res[r] = 1\n"
	"  else res[r] = 0 end\n"
	"end\n"
	"if #add > 0 then redis.call('ZADD', KEYS[3], 'NX', unpack(add)) end\n"
	"local fz, fon, now = redis.call('EXISTS', KEYS[5]) == 1, {}, nil\n"
	"local sum, ord = {}, {}\n"
	"for i = nr + 2, #ARGV, 5 do\n"
	"  local r = tonumber(ARGV[i])\n"
	"  if ok[r] then\n"
	"    local e = sum[ARGV[i + 3]]\n"
	"    if e == nil then\n"
	"      e = { KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2], ARGV[i + 3], 0, 0 }\n"
	"      sum[ARGV[i + 3]] = e; ord[#ord + 1] = e end\n"
	"    e[4] = e[4] + tonumber(ARGV[i + 4]); e[5] = e[5] + 1\n"
	"    if fz then\n"
	"      local pf = ARGV[i + 3]\n"
	"      if fon[pf] == nil then\n"
	"        local f = redis.call('HGET', KEYS[5], pf)\n"
	"        fon[pf] = false\n"
	"        if f then\n"
	"          if now == nil then local t = redis.call('TIME')\n"
	"            now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) end\n"
	"          if now - tonumber(string.match(f, '|(%d+)$')) < 10000 then\n"
	"            fon[pf] = true\n"
	"          else redis.call('HDEL', KEYS[5], pf); redis.call('HDEL', KEYS[6], pf) end\n"
	"        end\n"
	"      end\n"
	"      if fon[pf] then\n"
	"        redis.call('HSET', KEYS[6], pf, (redis.call('HGET', KEYS[6], pf) or '') ..\n"
	"          ARGV[r + 1] .. ':' .. ARGV[i + 4] .. ';') end\n"
	"    end\n"
	"  end\n"
	"end\n"
	"for j = 1, #ord do\n"
	"  local e = ord[j]\n"
	"  if e[4] ~= 0 then\n"
	"    if redis.call('HEXISTS', e[1], e[2]) == 1 then\n"
	"      redis.call('HINCRBY', e[1], e[2], e[4]) end\n"
	"    if redis.call('HINCRBY', KEYS[1], e[3], e[4]) == 0 then\n"
	"      redis.call('HDEL', KEYS[1], e[3]) end\n"
	"  end\n"
	"  if watched then redis.call('HINCRBY', KEYS[4], e[3], e[5]) end\n"
	"end\n"
	"return res\n" };

struct ent {			/* one delta, with its Redis names */
	int	script;			/* its bucket's, in call.scripts */
	char	hash[48], field[48], pfield[64], num[LL_CHARS];
	char	lrow[LL_CHARS], kidx[LL_CHARS];	/* its row and live key in
						   the script */
	int	pos;			/* that row's place in the script */
};

struct script {			/* one bucket's call */
	int	bucket, nrows, *rows;	/* the call's rows it names, in order */
};

struct call {
	int		 nents, nscripts;
	struct ent	*ents;
	struct script	*scripts;
	char		(*ids)[LL_CHARS];
};

static void
call_free(struct call *c)
{
	int i;

	for (i = 0; i < c->nscripts; i++)
		free(c->scripts[i].rows);
	free(c->scripts);
	free(c->ents);
	free(c->ids);
}

/* Names every delta and gives each bucket its script. */
static void
call_make(struct call *c, const long long *ids,
    const struct delta *const *ds, const int *n, int rows)
{
	struct ent *e;
	int r, i, s, bucket, total = 0;

	for (r = 0; r < rows; r++)
		total += n[r];
	memset(c, 0, sizeof(*c));
	c->ids = xcalloc((size_t)rows + 1, sizeof(*c->ids));
	c->ents = xcalloc((size_t)total + 1, sizeof(*c->ents));
	c->scripts = xcalloc((size_t)total + 1, sizeof(*c->scripts));
	for (r = 0; r < rows; r++) {
		buf_fmt_ll(c->ids[r], ids[r]);
		for (i = 0; i < n[r]; i++) {
			e = &c->ents[c->nents++];
			bucket = cname_bucket(&ds[r][i]);
			cname_of(&ds[r][i], e->hash, sizeof(e->hash),
			    e->field, sizeof(e->field));
			cname_pfield(&ds[r][i], e->pfield, sizeof(e->pfield));
			buf_fmt_ll(e->num, ds[r][i].d);
			for (s = 0; s < c->nscripts; s++)
				if (c->scripts[s].bucket == bucket)
					break;
			if (s == c->nscripts) {
				c->scripts[s].bucket = bucket;
				c->scripts[s].rows = xcalloc((size_t)rows,
				    sizeof(int));
				c->nscripts++;
			}
			e->script = s;
			if (c->scripts[s].nrows == 0 ||
			    c->scripts[s].rows[c->scripts[s].nrows - 1] != r)
				c->scripts[s].rows[c->scripts[s].nrows++] = r;
			e->pos = c->scripts[s].nrows - 1;
			buf_fmt_ll(e->lrow, c->scripts[s].nrows);
		}
	}
}

/* Queues script s of c.  0, or -1 when Redis is down. */
static int
queue_one(struct app *a, struct call *c, int s)
{
	struct script *sc = &c->scripts[s];
	struct cname_keys bk;
	char marks[32];
	const char **keys = xcalloc((size_t)c->nents + 6, sizeof(*keys));
	const char **args = xcalloc((size_t)sc->nrows + 1 +
	    5 * (size_t)c->nents, sizeof(*args));
	char nr[LL_CHARS];
	struct ent *e;
	int i, k, nkeys = 6, nargs = 0, rc;

	cname_bucket_keys(sc->bucket, &bk);
	cname_bucket_key(sc->bucket, "outbox", marks, sizeof(marks));
	keys[0] = bk.pending;
	keys[1] = bk.meta;
	keys[2] = marks;
	keys[3] = bk.seq;
	keys[4] = bk.fence;
	keys[5] = bk.flog;
	buf_fmt_ll(nr, sc->nrows);
	args[nargs++] = nr;
	for (i = 0; i < sc->nrows; i++)
		args[nargs++] = c->ids[sc->rows[i]];
	for (i = 0; i < c->nents; i++) {
		e = &c->ents[i];
		if (e->script != s)
			continue;
		for (k = 6; k < nkeys; k++)	/* each live hash once */
			if (strcmp(keys[k], e->hash) == 0)
				break;
		if (k == nkeys)
			keys[nkeys++] = e->hash;
		buf_fmt_ll(e->kidx, k + 1);
		args[nargs++] = e->lrow;
		args[nargs++] = e->kidx;
		args[nargs++] = e->field;
		args[nargs++] = e->pfield;
		args[nargs++] = e->num;
	}
	rc = rds_append_eval(a->rds, &apply_lua, nkeys, keys, nargs, args);
	free(keys);
	free(args);
	return rc;
}

/* The live badges (store/liveq.h): every user whose unread count the
 * rows move, each once, asked whether they listen, the question queued
 * behind the scripts on the node of the user's counters (no round trip
 * of its own).  The users asked into who; how many. */
static int
ask_live(struct app *a, const struct delta *const *ds, const int *n,
    int rows, long long *who)
{
	char flag[KEY_MAX];
	int r, i, j, k = 0;

	for (r = 0; r < rows; r++)
		for (i = 0; i < n[r]; i++) {
			if (ds[r][i].fam != FAM_USER_UNREAD)
				continue;
			for (j = 0; j < k && who[j] != ds[r][i].k1; j++)
				;
			if (j < k || k == DELTA_MAX)
				continue;
			cname_live_flag(ds[r][i].k1, flag, sizeof(flag));
			if (liveq_ask(a->rds, flag) == -1)
				break;
			who[k++] = ds[r][i].k1;
		}
	return k;
}

/* The answers to ask_live()'s k questions read; those who listen told,
 * in one more round trip (only when someone does). */
static void
tell_live(struct app *a, const long long *who, int k)
{
	int i, q = 0, got;
	int yes[DELTA_MAX];

	for (i = 0; i < k; i++)
		yes[i] = liveq_answer(a->rds);
	for (i = 0; i < k; i++)
		if (yes[i] == 1 && (got = liveq_append(a->rds, 'u',
		    who[i])) > 0)
			q += got;
	if (q > 0)
		rds_collect(a->rds, q);
}

void
cstore_apply_once_n(struct app *a, const long long *ids,
    const struct delta *const *ds, const int *n, int rows, int *rc)
{
	cstore_apply_once_in(a, ids, ds, n, rows, rc, NULL);
}

void
cstore_apply_once_in(struct app *a, const long long *ids,
    const struct delta *const *ds, const int *n, int rows, int *rc,
    unsigned char *in)
{
	struct call c;
	rds_reply *rep;
	long long who[DELTA_MAX];
	int s, i, k, r, q, asked;

	assert(rows >= 0);
	call_make(&c, ids, ds, n, rows);
	for (k = 0; in != NULL && k < c.nents; k++)
		in[k] = 0;
	/* a row is 0 until a script applies it (1); -1 once any of its
	 * scripts failed, whatever its others did */
	for (r = 0; r < rows; r++)
		rc[r] = 0;
	/* all queued, then all replies read: one round trip */
	for (q = 0; q < c.nscripts; q++)
		if (queue_one(a, &c, q) == -1)
			break;
	asked = q == c.nscripts ? ask_live(a, ds, n, rows, who) : 0;
	for (s = 0; s < c.nscripts; s++) {
		struct script *sc = &c.scripts[s];

		rep = NULL;
		if (s >= q || rds_get_reply(a->rds, &rep) == -1 ||
		    rds_type(rep) != RDS_ARRAY || rds_n(rep) != (size_t)sc->nrows) {
			for (i = 0; i < sc->nrows; i++)
				rc[sc->rows[i]] = -1;
		} else {
			for (i = 0; i < sc->nrows; i++) {
				r = sc->rows[i];
				if (rds_type(rds_at(rep, i)) != RDS_INTEGER)
					rc[r] = -1;
				else if (rds_int(rds_at(rep, i)) == 1 &&
				    rc[r] == 0)
					rc[r] = 1;
			}
			/* its deltas whose row it answered for: in Redis,
			 * applied now or before */
			for (k = 0; in != NULL && k < c.nents; k++)
				if (c.ents[k].script == s && rds_type(rds_at(rep,
				    (size_t)c.ents[k].pos)) == RDS_INTEGER)
					in[k] = 1;
		}
		if (rep != NULL)
			rds_free(rep);
	}
	tell_live(a, who, asked);
	call_free(&c);
}

int
cstore_apply_once(struct app *a, long long id, const struct delta *ds, int n)
{
	int rc;

	cstore_apply_once_n(a, &id, &ds, &n, 1, &rc);
	return rc;
}

int
cstore_apply_once_1(struct app *a, long long id, const struct delta *ds,
    int n, unsigned char *in)
{
	int rc;

	cstore_apply_once_in(a, &id, &ds, &n, 1, &rc, in);
	return rc;
}

/* The end of a row-less delta's script (token_lua, view_lua), once it
 * is to count.  KEYS: pending, seq, -, live, meta.  ARGV: -, -, field,
 * pending field, delta. */
#define ONE_DELTA_LUA \
	"local d = tonumber(ARGV[5])\n" \
	"if d ~= 0 then\n" \
	"  if redis.call('HEXISTS', KEYS[4], ARGV[3]) == 1 then\n" \
	"    redis.call('HINCRBY', KEYS[4], ARGV[3], d) end\n" \
	"  if redis.call('HINCRBY', KEYS[1], ARGV[4], d) == 0 then\n" \
	"    redis.call('HDEL', KEYS[1], ARGV[4]) end\n" \
	"end\n" \
	"if redis.call('HEXISTS', KEYS[5], 'w') == 1 then\n" \
	"  redis.call('HINCRBY', KEYS[2], ARGV[4], 1) end\n" \
	"return 1\n"

/* A row-less delta, once per token.  KEYS: pending, seq, tokens, live,
 * meta.  ARGV: token, now (ms), field, pending field, delta.  -> 1
 * applied, 0 the token was applied before.  seq moves only while a
 * reconciliation watches the bucket (meta w), as in apply_lua. */
static struct rds_script token_lua = { .src =
	"#!lua\n"
	"if redis.call('ZSCORE', KEYS[3], ARGV[1]) then return 0 end\n"
	"redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])\n"
	"redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf',\n"
	"  tonumber(ARGV[2]) - 3600000)\n"
	ONE_DELTA_LUA };

int
cstore_apply_token(struct app *a, const char *token, const struct delta *d)
{
	struct cname_keys k;
	char tokens[32], now[LL_CHARS], num[LL_CHARS];
	const char *keys[5] = { k.pending, k.seq, tokens, k.live, k.meta };
	const char *args[5] = { token, now, k.field, k.pfield, num };
	rds_reply *rep;
	int rc;

	cname_keys(d, &k);
	cname_bucket_key(cname_bucket(d), "tokens", tokens, sizeof(tokens));
	buf_fmt_ll(now, clock_wall_ms());
	buf_fmt_ll(num, d->d);
	if ((rep = rds_eval(a->rds, &token_lua, 5, keys, 5, args)) == NULL)
		return -1;
	rc = rds_type(rep) == RDS_INTEGER ? (int)rds_int(rep) : -1;
	rds_free(rep);
	return rc;
}

/* A signed-in viewer's view: the viewer's key (posting.h) and the count in
 * one script, in the slot of the counter's bucket.  KEYS: pending, seq,
 * viewer's key, live, meta.  ARGV: window (ms), -, field, pending
 * field, 1.  -> 1 counted, 0 the viewer's key was there.  No token:
 * nothing retries it.  A script that timed out was run by Redis or was
 * not (the view then is lost as when Redis is down), never run twice;
 * and with no moment between the key and the count, a process killed
 * there cannot leave a viewer's key without its view. */
static struct rds_script view_lua = { .src =
	"#!lua\n"
	"if not redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[1]) then"
	" return 0 end\n"
	ONE_DELTA_LUA };

int
cstore_view_send(struct app *a, const struct delta *d, const char *viewer,
    const char *window_ms)
{
	struct cname_keys k;
	const char *keys[5] = { k.pending, k.seq, viewer, k.live, k.meta };
	const char *args[5] = { window_ms, "", k.field, k.pfield, "1" };

	assert(d->d == 1);
	cname_keys(d, &k);
	/* the script known to this connection first (a SCRIPT LOAD after a
	 * reconnect), so that what follows the fault point is one command */
	if (rds_script_ready(a->rds, &view_lua, 5, keys) == -1)
		return -1;
	/* The count this process may keep of the post (count/ckeep.h) is
	 * older than this view, and a page shows the view it counts: the
	 * change's own invalidation comes on the process's next sync, after
	 * the page (a reader group's sync comes before its pages).
	 * Forgotten before the page's counts are asked for, with the script
	 * or after it, whatever the script does. */
	ckeep_drop(k.live, strlen(k.live));
	fault_point("view-delta");	/* nothing of this view sent yet */
	return rds_append_eval(a->rds, &view_lua, 5, keys, 5, args);
}

int
cstore_view_recv(struct app *a)
{
	rds_reply *rep = NULL;
	int rc = -1;

	if (rds_get_reply(a->rds, &rep) == 0 && rep != NULL &&
	    rds_type(rep) == RDS_INTEGER)
		rc = (int)rds_int(rep);
	rds_free(rep);
	return rc;
}

int
cstore_apply_view(struct app *a, const struct delta *d, const char *viewer,
    const char *window_ms)
{
	if (cstore_view_send(a, d, viewer, window_ms) == -1)
		return -1;
	return cstore_view_recv(a);
}
