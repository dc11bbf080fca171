/* settle.c -- the exact correction of counters that keep changing while
 * it runs: a fence per key; see settle.h.
 *
 * One file: why this file of over 500 lines is one concept --
 * the correction is one protocol -- the three scripts and the
 * five steps of a round that run them share the keys, the token and the
 * round's state, and each step is only right given the others (the
 * snapshot's N means something only to the fix's log test).  Cut in two,
 * a reader would hold both halves open to check either. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fault.h"
#include "base/log.h"
#include "count/cstore.h"
#include "count/outbox.h"
#include "count/settle.h"
#include "store/dbq.h"

#define SETTLE_ROUNDS	12	/* a round fails only when a flush's take
				   or ack, or another settler, came between */
#define SETTLE_PAUSE_MS	10	/* before round r: r times this */

/* The state of a counter's Redis part.  KEYS: live, pending, inflight,
 * meta, seq.  ARGV: field, pending field.  -> { version, live or "",
 * pending, inflight batch or "", its amount, changes or "", watch or ""
 * }.  The version is the bucket's meta v, which every flush take and ack
 * bumps; the changes are the field's in {cB}:seq, which every delta
 * applied to it while the bucket is watched (meta w, its watch) and every
 * correction bumps, and a take drops (cstore.h, moved.h).  (Each
 * script is written out whole, string literals only: cluster.test.mjs
 * reads them from here.) */
static struct rds_script state_lua = { .src =
	"#!lua flags=no-writes\n"
	"local b = redis.call('HGET', KEYS[4], 'b') or ''\n"
	"local fly = '0'\n"
	"if b ~= '' then fly = redis.call('HGET', KEYS[3], ARGV[2]) or '0' end\n"
	"return { redis.call('HGET', KEYS[4], 'v') or '0',\n"
	"  redis.call('HGET', KEYS[1], ARGV[1]) or '',\n"
	"  redis.call('HGET', KEYS[2], ARGV[2]) or '0', b, fly,\n"
	"  redis.call('HGET', KEYS[5], ARGV[2]) or '',\n"
	"  redis.call('HGET', KEYS[4], 'w') or '' }\n" };

/* Fences a counter and reads its state (as state_lua).  KEYS: live,
 * pending, inflight, meta, fence, fence log.  ARGV: field, pending
 * field, token.  From now on every delta applied to the counter is
 * logged with its outbox row id (capply.c).  A fence older than 10 s
 * (CSTORE_FENCE_MS) is a dead settler's.  -> { "busy" } when another
 * settler's live fence holds it; else the state. */
static struct rds_script fence_lua = { .src =
	"#!lua\n"
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
	"local f = redis.call('HGET', KEYS[5], ARGV[2])\n"
	"if f and string.match(f, '^(.*)|') ~= ARGV[3] and\n"
	"   now - tonumber(string.match(f, '|(%d+)$')) < 10000 then\n"
	"  return { 'busy' } end\n"
	"redis.call('HSET', KEYS[5], ARGV[2], ARGV[3] .. '|' .. now)\n"
	"redis.call('HDEL', KEYS[6], ARGV[2])\n"
	"local b = redis.call('HGET', KEYS[4], 'b') or ''\n"
	"local fly = '0'\n"
	"if b ~= '' then fly = redis.call('HGET', KEYS[3], ARGV[2]) or '0' end\n"
	"return { redis.call('HGET', KEYS[4], 'v') or '0',\n"
	"  redis.call('HGET', KEYS[1], ARGV[1]) or '',\n"
	"  redis.call('HGET', KEYS[2], ARGV[2]) or '0', b, fly }\n" };

/* The correction, and the fence's end.  KEYS: live, pending, inflight,
 * meta, seq, fence, fence log.  ARGV: field, pending field, token,
 * version, N (every outbox row up to it is in the recount, or never
 * committed), truth, durable, dry, add the inflight part (1/0), the ids
 * above N that the recount saw (" 12 15 "), the version of the
 * counter's backlog row the snapshot saw ("": none).  KEYS also: the
 * bucket's settled hash, where that version is kept from the correction
 * until the row is deleted (backlog_done()): a reader that computes the
 * value (Redis behind, cstore.c's value_lua) then knows the row's delta
 * is already in pending.
 * The counter's Redis value is durable + pending (+ the inflight part
 * when SQLite has not applied its batch); it should be the truth plus
 * what was applied since the fence by rows the recount did not see
 * (ids above N but those listed; 0: a row-less delta).  The difference goes to pending,
 * and live is set to the right value.
 * -> { "retry" } (the fence is gone or not ours, or a take or ack
 * came between: nothing changed), or { correction, live before or "",
 * live was wrong 1/0, the value Redis held (durable + pending) }. */
static struct rds_script fix_lua = { .src =
	"#!lua\n"
	"local f = redis.call('HGET', KEYS[6], ARGV[2])\n"
	"if not f or string.match(f, '^(.*)|') ~= ARGV[3] then\n"
	"  return { 'retry' } end\n"
	"if (redis.call('HGET', KEYS[4], 'v') or '0') ~= ARGV[4] then\n"
	"  redis.call('HDEL', KEYS[6], ARGV[2]); redis.call('HDEL', KEYS[7], ARGV[2])\n"
	"  return { 'retry' } end\n"
	"local n, after, seen = tonumber(ARGV[5]), 0, {}\n"
	"for id in string.gmatch(ARGV[10], '%d+') do seen[tonumber(id)] = 1 end\n"
	"local log = redis.call('HGET', KEYS[7], ARGV[2]) or ''\n"
	"for id, d in string.gmatch(log, '(%d+):(%-?%d+);') do\n"
	"  id = tonumber(id)\n"
	"  if (id > n and not seen[id]) or id == 0 then\n"
	"    after = after + tonumber(d) end\n"
	"end\n"
	"local p = tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0')\n"
	"if ARGV[9] == '1' then\n"
	"  p = p + tonumber(redis.call('HGET', KEYS[3], ARGV[2]) or '0') end\n"
	"local want = tonumber(ARGV[6]) + after\n"
	"local have = tonumber(ARGV[7]) + p\n"
	"local c = want - have\n"
	"local live = redis.call('HGET', KEYS[1], ARGV[1])\n"
	"local bad = 0\n"
	"if live and tonumber(live) ~= have then bad = 1 end\n"
	"if ARGV[8] == '0' then\n"
	"  if c ~= 0 then\n"
	"    redis.call('HINCRBY', KEYS[5], ARGV[2], 1)\n"
	"    if redis.call('HINCRBY', KEYS[2], ARGV[2], c) == 0 then\n"
	"      redis.call('HDEL', KEYS[2], ARGV[2]) end\n"
	"  end\n"
	"  if not live or tonumber(live) ~= want then\n"
	"    redis.call('HSET', KEYS[1], ARGV[1], want) end\n"
	"  if ARGV[11] ~= '' then redis.call('HSET', KEYS[8], ARGV[2], ARGV[11])\n"
	"  else redis.call('HDEL', KEYS[8], ARGV[2]) end\n"
	"end\n"
	"redis.call('HDEL', KEYS[6], ARGV[2]); redis.call('HDEL', KEYS[7], ARGV[2])\n"
	"return { tostring(c), live or '', tostring(bad), tostring(have) }\n" };

/* Drops a settled mark once its backlog row is deleted, unless another
 * settle's correction has marked a later row since: KEYS settled; ARGV
 * pending field, version. */
static struct rds_script unmark_lua = { .src =
	"#!lua\n"
	"if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then\n"
	"  redis.call('HDEL', KEYS[1], ARGV[1]) end\n"
	"return 1\n" };

/* Releases a fence (after a failure): KEYS fence, fence log; ARGV
 * pending field, token. */
static struct rds_script unfence_lua = { .src =
	"#!lua\n"
	"local f = redis.call('HGET', KEYS[1], ARGV[1])\n"
	"if f and string.match(f, '^(.*)|') == ARGV[2] then\n"
	"  redis.call('HDEL', KEYS[1], ARGV[1]); redis.call('HDEL', KEYS[2], ARGV[1])\n"
	"end\n"
	"return 1\n" };

/* A state reply (state_lua's seven strings, or fence_lua's first five)
 * into st; -1 when it is not one (an error reply, "busy"). */
static int
parse_state(rds_reply *rep, struct rstate *st)
{
	size_t i, n;
	char *end;

	memset(st, 0, sizeof(*st));
	if (rds_type(rep) != RDS_ARRAY || ((n = rds_n(rep)) != 5 && n != 7))
		return -1;
	for (i = 0; i < n; i++)
		if (rds_type(rds_at(rep, i)) != RDS_STRING)
			return -1;
	snprintf(st->ver, sizeof(st->ver), "%s", rds_str(rds_at(rep, 0)));
	st->has_live = rds_len(rds_at(rep, 1)) > 0;
	st->live = strtoll(rds_str(rds_at(rep, 1)), &end, 10);
	if (st->has_live && *end != '\0')
		return -1;
	snprintf(st->pend, sizeof(st->pend), "%s", rds_str(rds_at(rep, 2)));
	snprintf(st->batch, sizeof(st->batch), "%s", rds_str(rds_at(rep, 3)));
	st->fly = strtoll(rds_str(rds_at(rep, 4)), NULL, 10);
	if (n == 7) {
		snprintf(st->seq, sizeof(st->seq), "%s",
		    rds_str(rds_at(rep, 5)));
		snprintf(st->watch, sizeof(st->watch), "%s",
		    rds_str(rds_at(rep, 6)));
	}
	st->ok = 1;
	return 0;
}

static void
keys_of(enum family fam, const struct rec_entry *e, struct cname_keys *k)
{
	struct delta dl = { fam, e->k1, e->k2, 0, e->owner };

	cname_keys(&dl, k);
}

int
settle_read_states(struct app *a, enum family fam, struct rec_entry *e, size_t n,
    struct rstate *st)
{
	struct cname_keys k;
	const char *keys[5] = { k.live, k.pending, k.inflight, k.meta, k.seq };
	const char *args[2];
	rds_reply *rep;
	size_t i, queued = 0;

	for (i = 0; i < n; i++) {
		keys_of(fam, &e[i], &k);
		args[0] = k.field;
		args[1] = k.pfield;
		if (rds_append_eval(a->rds, &state_lua, 5, keys, 2, args) == -1)
			break;
		queued++;
	}
	for (i = 0; i < queued; i++) {
		if (rds_get_reply(a->rds, &rep) == -1) {
			if (i + 1 < queued)
				rds_collect(a->rds, (int)(queued - i - 1));
			return -1;
		}
		parse_state(rep, &st[i]);	/* !ok: nothing known */
		rds_free(rep);
	}
	return queued == n ? 0 : -1;
}

static void
note_wrong(struct rec_family *rf, long long k1, long long k2, int two,
    long long err)
{
	if (err < 0)
		err = -err;
	rf->wrong++;
	if (err > rf->max_err)
		rf->max_err = err;
	if (rf->nex < REC_EXAMPLES) {
		if (two)
			snprintf(rf->ex[rf->nex], sizeof(rf->ex[0]), "%lld:%lld",
			    k1, k2);
		else
			snprintf(rf->ex[rf->nex], sizeof(rf->ex[0]), "%lld", k1);
		rf->nex++;
	}
}

/* One candidate's progress through the rounds. */
struct one {
	struct rstate	st;
	int		fenced, done, applied;
	long long	bver;		/* its backlog row's version, -1: none */
};

/* The fenced keys of a round, sorted, for outbox_reapply(). */
struct keyset {
	enum family	 fam;
	struct rec_entry *k;
	size_t		 n;
};

static int
key_cmp(const void *x, const void *y)
{
	const struct rec_entry *a = x, *b = y;

	if (a->k1 != b->k1)
		return a->k1 < b->k1 ? -1 : 1;
	return (a->k2 > b->k2) - (a->k2 < b->k2);
}

static int
touches(const struct delta *d, void *arg)
{
	const struct keyset *ks = arg;
	struct rec_entry e = { d->k1, d->k2, 0, 0, 0 };

	return d->fam == ks->fam && ks->n > 0 &&
	    bsearch(&e, ks->k, ks->n, sizeof(*ks->k), key_cmp) != NULL;
}

/* Fences every candidate not done yet (one pipeline) and reads its state;
 * fenced = 0 where another settler holds it.  -1 when Redis failed. */
static int
fence_all(struct app *a, enum family fam, struct rec_entry *cand, size_t n,
    struct one *o, const char *token)
{
	struct cname_keys k;
	const char *keys[6] = { k.live, k.pending, k.inflight, k.meta, k.fence,
	    k.flog };
	const char *args[3];
	rds_reply *rep;
	size_t i, queued = 0, sent = 0;
	int rc = 0;

	for (i = 0; i < n; i++) {
		o[i].fenced = 0;
		if (o[i].done)
			continue;
		keys_of(fam, &cand[i], &k);
		args[0] = k.field;
		args[1] = k.pfield;
		args[2] = token;
		if (rds_append_eval(a->rds, &fence_lua, 6, keys, 3, args) == -1) {
			rc = -1;
			break;
		}
		queued++;
	}
	for (i = 0; i < n && sent < queued; i++) {
		if (o[i].done)
			continue;
		sent++;
		if (rds_get_reply(a->rds, &rep) == -1) {
			if (sent < queued)
				rds_collect(a->rds, (int)(queued - sent));
			return -1;
		}
		o[i].fenced = parse_state(rep, &o[i].st) == 0;
		rds_free(rep);
	}
	return rc;
}

/* Ends this settler's fences on the keys still fenced (after a failure:
 * a fence left would log every delta of its key until it goes stale). */
static void
unfence_all(struct app *a, enum family fam, struct rec_entry *cand,
    size_t n, struct one *o, const char *token)
{
	struct cname_keys k;
	const char *keys[2] = { k.fence, k.flog };
	const char *args[2] = { k.pfield, token };
	size_t i;
	int queued = 0;

	for (i = 0; i < n; i++) {
		if (!o[i].fenced || o[i].done)
			continue;
		keys_of(fam, &cand[i], &k);
		if (rds_append_eval(a->rds, &unfence_lua, 2, keys, 2, args) == -1)
			break;
		queued++;
	}
	if (queued > 0)
		rds_collect(a->rds, queued);
}

/* Which outbox rows a read snapshot holds: every row up to n that ever
 * commits, and above it (up to top, the newest it sees) those in seen
 * (" 12 15 ": PostgreSQL's ids commit out of order, outbox.h). */
struct seen {
	long long	 n, top;
	struct buf	 ids;
};

#define SEEN_MAX	10000	/* ids above the horizon in one snapshot */

/* The ids above h->n that the open snapshot sees, into h->ids; 0, or -1
 * (an error, or more than SEEN_MAX: the round is tried again). */
static int
seen_above(struct db *d, struct seen *h)
{
	struct dbq *q = dbq_stmt(d, STMT_OUTBOX_IDS_BETWEEN);
	char id[LL_CHARS];
	int rc, k = 0;

	if (q == NULL)
		return -1;
	dbq_bind_i64(q, 1, h->n);
	dbq_bind_i64(q, 2, h->top);
	dbq_bind_int(q, 3, SEEN_MAX);
	buf_puts(&h->ids, " ");
	while ((rc = dbq_step(q)) == DBQ_ROW) {
		buf_fmt_ll(id, dbq_i64(q, 0));
		buf_puts(&h->ids, id);
		buf_puts(&h->ids, " ");
		k++;
	}
	dbq_done(q);
	return rc == DBQ_DONE && k < SEEN_MAX ? 0 : -1;
}

/* One read snapshot: which outbox rows it holds (h), and per fenced key
 * its truth, durable value, backlog version and whether its inflight
 * batch is applied.  s: the family's prepared recount_one.  0,
 * OUTBOX_WAITED (no snapshot taken) or -1. */
static int
snapshot(struct app *a, enum family fam, struct dbq *s,
    struct rec_entry *cand, size_t n, struct one *o, struct seen *h)
{
	struct dbq *q;
	struct delta d;
	size_t i;
	long long horizon, back, gone;
	int rc;

	/* before the snapshot: every row up to it is then in the snapshot
	 * or never commits */
	if ((horizon = outbox_horizon(a->db)) < 0)
		return (int)horizon;
	if (db_snapshot_begin(a->db) == -1)
		return -1;
	if ((q = dbq_stmt(a->db, STMT_OUTBOX_CUTOFF)) == NULL)
		goto fail;
	dbq_bind_i64(q, 1, LLONG_MAX);
	rc = dbq_step(q);
	h->top = rc == DBQ_ROW ? dbq_i64(q, 0) : 0;
	dbq_done(q);
	if (rc != DBQ_ROW)
		goto fail;
	h->n = horizon < h->top ? horizon : h->top;
	/* A row that committed after the horizon was read, and that a drain
	 * deleted before the snapshot began, is in the snapshot but not in
	 * its table: counted as seen all the same, by the drain's floor as
	 * the snapshot reads it (outbox.h OUTBOX_FLOOR), or its delta,
	 * logged by the fence, was added twice (PostgreSQL). */
	if (dbq_setting_read(a->db, OUTBOX_FLOOR, 0, &gone) == -1)
		goto fail;
	if (gone > h->n && gone <= h->top)
		h->n = gone;
	buf_reset(&h->ids);
	if (h->top > h->n && seen_above(a->db, h) == -1)
		goto fail;
	for (i = 0; i < n; i++) {
		if (!o[i].fenced)
			continue;
		dbq_bind_i64(s, 1, cand[i].k1);
		if (families[fam].obj == OBJ_USER_TOPIC)
			dbq_bind_i64(s, 2, cand[i].k2);
		rc = dbq_step(s);
		cand[i].t = rc == DBQ_ROW ? dbq_i64(s, 0) : 0;
		dbq_done(s);
		if (rc != DBQ_ROW)
			goto fail;
		d = (struct delta){ fam, cand[i].k1, cand[i].k2, 0,
		    cand[i].owner };
		if (cstore_durable(a->db, &d, &cand[i].d) == -1)
			goto fail;
		if (cstore_backlog_get(a->db, &d, &back, &o[i].bver) == -1)
			goto fail;
		o[i].applied = 0;
		if (o[i].st.batch[0] != '\0' &&
		    (o[i].applied = dbq_batch_applied(a->db, o[i].st.batch)) == -1)
			goto fail;
	}
	return db_snapshot_end(a->db, 0);
fail:
	db_rollback(a->db);
	return -1;
}

/* Applies again the outbox rows up to upto that touch a fenced key: what
 * the recount holds is then in Redis before the correction. */
static int
reapply(struct app *a, enum family fam, struct rec_entry *cand, size_t n,
    const struct one *o, long long upto)
{
	struct keyset ks = { fam, xcalloc(n + 1, sizeof(*cand)), 0 };
	size_t i;
	int rc;

	for (i = 0; i < n; i++)
		if (o[i].fenced)
			ks.k[ks.n++] = cand[i];
	qsort(ks.k, ks.n, sizeof(*ks.k), key_cmp);
	rc = outbox_reapply(a, upto, touches, &ks);
	free(ks.k);
	return rc;
}

/* The corrections of the fenced keys (one pipeline); a key whose script
 * answers "retry" stays for the next round.  -1 when Redis failed. */
static int
fix_all(struct app *a, enum family fam, int dry, struct rec_entry *cand,
    size_t n, struct one *o, const char *token, const struct seen *h,
    struct rec_family *rf)
{
	struct cname_keys k;
	const char *keys[8] = { k.live, k.pending, k.inflight, k.meta, k.seq,
	    k.fence, k.flog, k.settled };
	const char *args[11];
	char tb[LL_CHARS], db[LL_CHARS], up[LL_CHARS], bv[LL_CHARS];
	rds_reply *rep;
	long long c, live_err;
	size_t i, queued = 0, got = 0;
	int two = families[fam].obj == OBJ_USER_TOPIC, cut = 0;

	buf_fmt_ll(up, h->n);
	for (i = 0; i < n; i++) {
		if (!o[i].fenced)
			continue;
		keys_of(fam, &cand[i], &k);
		buf_fmt_ll(tb, cand[i].t);
		buf_fmt_ll(db, cand[i].d);
		args[0] = k.field;
		args[1] = k.pfield;
		args[2] = token;
		args[3] = o[i].st.ver;
		args[4] = up;
		args[5] = tb;
		args[6] = db;
		args[7] = dry ? "1" : "0";
		args[8] = o[i].st.batch[0] != '\0' && !o[i].applied ? "1" : "0";
		args[9] = h->ids.len > 0 ? h->ids.p : "";
		bv[0] = '\0';
		if (o[i].bver >= 0)
			buf_fmt_ll(bv, o[i].bver);
		args[10] = bv;
		if (rds_append_eval(a->rds, &fix_lua, 8, keys, 11, args) == -1) {
			cut = 1;	/* the rest stay fenced: unfence_all() */
			break;
		}
		queued++;
	}
	for (i = 0; i < n && got < queued; i++) {
		if (!o[i].fenced)
			continue;
		got++;
		if (rds_get_reply(a->rds, &rep) == -1) {
			if (got < queued)
				rds_collect(a->rds, (int)(queued - got));
			return -1;
		}
		if (rds_type(rep) == RDS_ARRAY && rds_n(rep) == 4 &&
		    rds_type(rds_at(rep, 0)) == RDS_STRING &&
		    rds_type(rds_at(rep, 1)) == RDS_STRING &&
		    rds_type(rds_at(rep, 2)) == RDS_STRING &&
		    rds_type(rds_at(rep, 3)) == RDS_STRING) {
			c = strtoll(rds_str(rds_at(rep, 0)), NULL, 10);
			/* the live value was off from D + P by live_err */
			live_err = rds_str(rds_at(rep, 2))[0] == '1' ?
			    strtoll(rds_str(rds_at(rep, 1)), NULL, 10) -
			    strtoll(rds_str(rds_at(rep, 3)), NULL, 10) : 0;
			if (c != 0 || live_err != 0) {
				note_wrong(rf, cand[i].k1, cand[i].k2, two,
				    c != 0 ? c : live_err);
				if (!dry)
					rf->fixed++;
			}
			o[i].done = 1;
			o[i].fenced = 0;	/* the script ended it */
		} else if (rds_type(rep) == RDS_ERROR)
			cut = 1;	/* refused (OOM, MISCONF): it ended
					 * nothing, unfence_all() does */
		else
			o[i].fenced = 0;	/* "retry" ended it */
		rds_free(rep);
	}
	return queued == got && !cut ? 0 : -1;
}

/* 1 when key o, not done before this round (was), is fixed now and has
 * a backlog row. */
static int
row_settled(const struct one *o, int was)
{
	return o->done && !was && o->bver >= 0;
}

/* The backlog rows of the keys fixed this round, unless a delta was
 * added to one since the snapshot (its version moved: the next settle
 * takes it).  One write transaction; then the marks of the versions the
 * corrections held go (fix_lua), each only if still its own (unmark_lua),
 * one pipeline: a mark left by a crash names a version no later row
 * takes (STMT_BACKLOG_ADD). */
static int
backlog_done(struct app *a, enum family fam, struct rec_entry *cand,
    size_t n, struct one *o, const int *was_done)
{
	struct dbq *s;
	struct delta d;
	struct cname_keys k;
	char key[48], bv[LL_CHARS];
	size_t i;
	int opened = 0, rc, sent = 0;

	for (i = 0; i < n; i++) {
		if (!row_settled(&o[i], was_done[i]))
			continue;
		if (!opened) {
			/* fixed in Redis, their rows still in the backlog: a
			 * load of a live value now must not add them again */
			fault_point("settle-backlog");
			if (db_begin(a->db) == -1)
				return -1;
		}
		opened = 1;
		if ((s = dbq_stmt(a->db, STMT_BACKLOG_DONE)) == NULL)
			goto fail;
		d = (struct delta){ fam, cand[i].k1, cand[i].k2, 0, 0 };
		counters_key(&d, key, sizeof(key));
		dbq_bind_text(s, 1, families[fam].name, -1);
		dbq_bind_text_copy(s, 2, key, -1);
		dbq_bind_i64(s, 3, o[i].bver);
		rc = dbq_step(s);
		dbq_done(s);
		if (rc != DBQ_DONE)
			goto fail;
	}
	if (!opened)
		return 0;
	if (db_commit(a->db) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if (!row_settled(&o[i], was_done[i]))
			continue;
		keys_of(fam, &cand[i], &k);
		buf_fmt_ll(bv, o[i].bver);
		if (rds_append_eval(a->rds, &unmark_lua, 1,
		    (const char *[]){ k.settled },
		    2, (const char *[]){ k.pfield, bv }) == -1)
			break;
		sent++;
	}
	if (sent > 0)
		(void)rds_collect(a->rds, sent);
	return 0;
fail:
	db_rollback(a->db);
	return -1;
}

/* What could not be settled now waits in the backlog (a zero delta: a
 * key to settle) for the worker, which tries again within seconds. */
static int
queue_left(struct app *a, enum family fam, struct rec_entry *cand,
    size_t n, const struct one *o)
{
	struct delta d;
	size_t i;
	int rc = 0;

	for (i = 0; i < n; i++) {
		if (o[i].done)
			continue;
		d = (struct delta){ fam, cand[i].k1, cand[i].k2, 0,
		    cand[i].owner };
		if (cstore_backlog(a, &d, 1) == -1)
			rc = -1;
	}
	return rc;
}

int
settle_keys(struct app *a, enum family fam, int dry, struct rec_entry *cand,
    size_t n, struct rec_family *rf)
{
	struct one *o = xcalloc(n + 1, sizeof(*o));
	int *was = xcalloc(n + 1, sizeof(*was));
	char token[64];
	size_t i, left = n;
	struct seen h = { 0, 0, { NULL, 0, 0 } };
	struct dbq *one = NULL;
	int round, got, fixed, rc = -1, waited = 0;
	int two = families[fam].obj == OBJ_USER_TOPIC;

	if ((one = dbq_stmt(a->db, families[fam].recount_one)) == NULL)
		goto out;
	for (round = 0; round < SETTLE_ROUNDS && left > 0; round++) {
		if (round > 0)
			usleep((useconds_t)round * SETTLE_PAUSE_MS * 1000);
		snprintf(token, sizeof(token), "%d.%lld.%d", (int)getpid(),
		    clock_mono_us(), round);
		for (i = 0; i < n; i++)
			was[i] = o[i].done;
		if (fence_all(a, fam, cand, n, o, token) == -1)
			goto fail;
		if ((got = snapshot(a, fam, one, cand, n, o, &h)) ==
		    OUTBOX_WAITED) {
			/* A writer of tally's holds its transaction open:
			 * the keys go to the worker, which tries them again
			 * within seconds, and the run goes on. */
			unfence_all(a, fam, cand, n, o, token);
			waited = 1;
			break;
		}
		if (got == -1 || reapply(a, fam, cand, n, o, h.top) == -1)
			goto fail;
		fault_point("reconcile-fix");
		/* the keys fixed, before a failure too: their rows */
		fixed = fix_all(a, fam, dry, cand, n, o, token, &h, rf);
		if (!dry)
			backlog_done(a, fam, cand, n, o, was);
		if (fixed == -1)
			goto fail;
		for (left = 0, i = 0; i < n; i++)
			left += !o[i].done;
	}
	/* Still not settled (another settler's fence, flushes in the way
	 * every round, a writer's open transaction): counted wrong, and
	 * queued for the worker. */
	for (i = 0; i < n; i++)
		if (!o[i].done)
			note_wrong(rf, cand[i].k1, cand[i].k2, two, 0);
	rf->queued += (long long)left;
	if (left > 0 && !dry && queue_left(a, fam, cand, n, o) == -1)
		goto out;
	if (waited && !dry)
		log_warn("settle: %zu %s counters left to the worker: a write "
		    "transaction is still open", left, families[fam].name);
	rc = waited ? SETTLE_WAITED : 0;
	goto out;
fail:
	unfence_all(a, fam, cand, n, o, token);
	if (!dry)
		queue_left(a, fam, cand, n, o);
out:
	dbq_done(one);
	buf_free(&h.ids);
	free(o);
	free(was);
	return rc;
}
