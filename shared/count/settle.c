/* settle.c -- reading a counter's Redis state and repairing it without
 * losing a concurrent change; see settle.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/fault.h"
#include "base/log.h"
#include "count/cstore.h"
#include "count/outbox.h"
#include "count/settle.h"
#include "store/query.h"

#define REC_GRACE_MS	200	/* commit-to-Redis time we wait out */
#define REC_ROUNDS	6

/* KEYS: live, pending, inflight, meta, seq (cstore.h).  ARGV: field,
 * pending field.  -> { version, live or "", pending, inflight batch or
 * "", its amount }.  The version is "v:s": the bucket's takes and acks
 * (meta v) and the changes of this counter's pending field since the
 * last take (seq).  The pending value alone is no proof that nothing
 * arrived: a read-all of five and five new notifications leave it where
 * it was, and a correction computed before them lost them (PostgreSQL's
 * fault test caught one, off by five). */
static struct rds_script state_lua = { .src =
	"#!lua flags=no-writes\n"
	"local b = redis.call('HGET', KEYS[4], 'b') or ''\n"
	"local fly = '0'\n"
	"if b ~= '' then fly = redis.call('HGET', KEYS[3], ARGV[2]) or '0' end\n"
	"return { (redis.call('HGET', KEYS[4], 'v') or '0') .. ':' ..\n"
	"  (redis.call('HGET', KEYS[5], ARGV[2]) or '0'),\n"
	"  redis.call('HGET', KEYS[1], ARGV[1]) or '',\n"
	"  redis.call('HGET', KEYS[2], ARGV[2]) or '0', b, fly }\n" };

/* KEYS: live, pending, inflight, meta, seq.  ARGV: field, pending field,
 * version, pending (both as first read), truth, durable, dry, add the
 * inflight part (1/0).
 * -> { "retry" } or { correction, live before or "", live was wrong } */
static struct rds_script fix_lua = { .src =
	"#!lua\n"
	"if (redis.call('HGET', KEYS[4], 'v') or '0') .. ':' ..\n"
	"   (redis.call('HGET', KEYS[5], ARGV[2]) or '0') ~= ARGV[3] or\n"
	"   (redis.call('HGET', KEYS[2], ARGV[2]) or '0') ~= ARGV[4] then\n"
	"  return { 'retry' } end\n"
	"local p = tonumber(ARGV[4])\n"
	"if ARGV[8] == '1' then\n"
	"  p = p + tonumber(redis.call('HGET', KEYS[3], ARGV[2]) or '0') end\n"
	"local t = tonumber(ARGV[5])\n"
	"local c = t - (tonumber(ARGV[6]) + p)\n"
	"local live = redis.call('HGET', KEYS[1], ARGV[1])\n"
	"local bad = 0\n"
	"if live and tonumber(live) ~= tonumber(ARGV[6]) + p then bad = 1 end\n"
	"if ARGV[7] == '0' then\n"
	"  if c ~= 0 then\n"
	"    redis.call('HINCRBY', KEYS[5], ARGV[2], 1)\n"
	"    if redis.call('HINCRBY', KEYS[2], ARGV[2], c) == 0 then\n"
	"      redis.call('HDEL', KEYS[2], ARGV[2]) end\n"
	"  end\n"
	"  if live and tonumber(live) ~= t then\n"
	"    redis.call('HSET', KEYS[1], ARGV[1], t) end\n"
	"end\n"
	"return { tostring(c), live or '', tostring(bad) }\n" };

static void
parse_state(rds_reply *rep, struct rstate *st)
{
	memset(st, 0, sizeof(*st));
	snprintf(st->ver, sizeof(st->ver), "%s", rep->element[0]->str);
	st->has_live = rep->element[1]->len > 0;
	st->live = strtoll(rep->element[1]->str, NULL, 10);
	snprintf(st->pend, sizeof(st->pend), "%s", rep->element[2]->str);
	snprintf(st->batch, sizeof(st->batch), "%s", rep->element[3]->str);
	st->fly = strtoll(rep->element[4]->str, NULL, 10);
}

static void
keys_of(enum family fam, const struct rec_entry *e, struct cstore_keys *k)
{
	struct delta dl = { fam, e->k1, e->k2, 0, e->owner };

	cstore_keys(&dl, k);
}

int
settle_read_states(struct app *a, enum family fam, struct rec_entry *e, size_t n,
    struct rstate *st)
{
	struct cstore_keys k;
	const char *keys[5] = { k.live, k.pending, k.inflight, k.meta, k.seq };
	const char *args[2];
	rds_reply *rep;
	size_t i, queued = 0;

	for (i = 0; i < n; i++) {
		keys_of(fam, &e[i], &k);
		args[0] = k.field;
		args[1] = k.pfield;
		if (rds_append_eval(&a->rds, &state_lua, 5, keys, 2, args) == -1)
			break;
		queued++;
	}
	for (i = 0; i < queued; i++) {
		if (rds_get_reply(&a->rds, &rep) == -1) {
			return -1;
		}
		if (rep->type == RDS_ARRAY && rep->elements == 5)
			parse_state(rep, &st[i]);
		else	/* an error reply: nothing known, settle() retries */
			memset(&st[i], 0, sizeof(st[i]));
		rds_free(rep);
	}
	return queued == n ? 0 : -1;
}

/* The truth and durable value of one key, and whether flush batch
 * `batch` ("": none) is applied, in one read snapshot; s is the family's
 * prepared recount_one statement. */
static int
point_read(struct app *a, enum family fam, struct dbq *s,
    struct rec_entry *e, const char *batch, int *applied)
{
	struct delta d = { fam, e->k1, e->k2, 0, e->owner };
	int rc;

	if (db_exec(&a->db, "BEGIN") == -1)
		return -1;
	dbq_bind_i64(s, 1, e->k1);
	if (families[fam].obj == OBJ_USER_TOPIC)
		dbq_bind_i64(s, 2, e->k2);
	rc = dbq_step(s);
	e->t = rc == DBQ_ROW ? dbq_i64(s, 0) : 0;
	db_done(s);
	if (rc != DBQ_ROW)
		goto fail;
	if (cstore_durable(&a->db, &d, &e->d) == -1)
		goto fail;
	*applied = 0;
	if (batch[0] != '\0' && (*applied = db_batch_applied(&a->db, batch))
	    == -1)
		goto fail;
	return db_exec(&a->db, "COMMIT");
fail:
	db_rollback(&a->db);
	return -1;
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

int
settle_keys(struct app *a, enum family fam, int dry, struct rec_entry *cand,
    size_t n, struct rec_family *rf)
{
	struct rstate *st = xcalloc(n, sizeof(*st));
	int *done = xcalloc(n, sizeof(*done));
	int *applied = xcalloc(n, sizeof(*applied));
	char tb[24], db[24];
	struct cstore_keys ck;
	const char *keys[5] = { ck.live, ck.pending, ck.inflight, ck.meta,
	    ck.seq };
	const char *args[8];
	size_t i, left = n;
	long long t, d, c, live_err;
	rds_reply *rep;
	struct dbq *one = NULL;
	int round, rc = -1, two = families[fam].obj == OBJ_USER_TOPIC;

	if ((one = db_prepare_once(&a->db, families[fam].recount_one)) == NULL)
		goto out;
	for (round = 0; round < REC_ROUNDS && left > 0; round++) {
		if (settle_read_states(a, fam, cand, n, st) == -1)
			goto out;
		for (i = 0; i < n; i++)
			if (!done[i] && point_read(a, fam, one, &cand[i],
			    st[i].batch, &applied[i]) == -1)
				goto out;
		usleep(REC_GRACE_MS * 1000);
		/* An action counted in the recount but whose deltas wait in
		 * the outbox (its process died) gets them now, before the
		 * correction: the fix sees its pending change and retries. */
		if (outbox_drain(a, 0) == -1)
			goto out;
		fault_point("reconcile-fix");
		for (i = 0; i < n; i++) {
			if (done[i])
				continue;
			t = cand[i].t;
			d = cand[i].d;
			keys_of(fam, &cand[i], &ck);
			snprintf(tb, sizeof(tb), "%lld", t);
			snprintf(db, sizeof(db), "%lld", d);
			args[0] = ck.field;
			args[1] = ck.pfield;
			args[2] = st[i].ver;
			args[3] = st[i].pend;
			args[4] = tb;
			args[5] = db;
			args[6] = dry ? "1" : "0";
			args[7] = st[i].batch[0] != '\0' && !applied[i] ? "1" : "0";
			rep = rds_eval(&a->rds, &fix_lua, 5, keys, 8, args);
			if (rep == NULL)
				goto out;
			if (rep->type == RDS_ARRAY && rep->elements == 3) {
				c = strtoll(rep->element[0]->str, NULL, 10);
				/* expected live was D + P = t - c */
				live_err = rep->element[2]->str[0] == '1' ?
				    strtoll(rep->element[1]->str, NULL, 10) -
				    (t - c) : 0;
				if (c != 0 || live_err != 0) {
					note_wrong(rf, cand[i].k1, cand[i].k2, two,
					    c != 0 ? c : live_err);
					if (!dry)
						rf->fixed++;
				}
				done[i] = 1;
				left--;
			}
			rds_free(rep);
		}
	}
	rf->unsettled += (long long)left;
	rc = 0;
out:
	dbq_finalize(one);
	free(st);
	free(done);
	free(applied);
	return rc;
}
