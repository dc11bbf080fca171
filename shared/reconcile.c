/* reconcile.c -- reconciliation; see reconcile.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "buf.h"
#include "cstore.h"
#include "fault.h"
#include "log.h"
#include "outbox.h"
#include "reconcile.h"
#include "recount.h"

#define REC_CHUNK	500	/* keys per Redis pipeline */
#define REC_GRACE_MS	200	/* commit-to-Redis time we wait out */
#define REC_ROUNDS	6
#define REC_SETTLE	2000	/* candidates settled together */

/* KEYS: live, pending, inflight, meta (cstore.h).  ARGV: field, pending
 * field.  -> { version, live or "", pending, inflight batch or "",
 * its amount } */
static struct rds_script state_lua = { .src =
	"local b = redis.call('HGET', KEYS[4], 'b') or ''\n"
	"local fly = '0'\n"
	"if b ~= '' then fly = redis.call('HGET', KEYS[3], ARGV[2]) or '0' end\n"
	"return { redis.call('HGET', KEYS[4], 'v') or '0',\n"
	"  redis.call('HGET', KEYS[1], ARGV[1]) or '',\n"
	"  redis.call('HGET', KEYS[2], ARGV[2]) or '0', b, fly }\n" };

/* KEYS: live, pending, inflight, meta.  ARGV: field, pending field,
 * version, pending (both as first read), truth, durable, dry, add the
 * inflight part (1/0).
 * -> { "retry" } or { correction, live before or "", live was wrong } */
static struct rds_script fix_lua = { .src =
	"if (redis.call('HGET', KEYS[4], 'v') or '0') ~= ARGV[3] or\n"
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
	"  if c ~= 0 and redis.call('HINCRBY', KEYS[2], ARGV[2], c) == 0 then\n"
	"    redis.call('HDEL', KEYS[2], ARGV[2]) end\n"
	"  if live and tonumber(live) ~= t then\n"
	"    redis.call('HSET', KEYS[1], ARGV[1], t) end\n"
	"end\n"
	"return { tostring(c), live or '', tostring(bad) }\n" };

struct entry {
	long long	k1, k2, t, d;
};

static int
entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->k1 != y->k1)
		return x->k1 < y->k1 ? -1 : 1;
	if (x->k2 != y->k2)
		return x->k2 < y->k2 ? -1 : 1;
	return 0;
}

struct vec {
	struct entry	*v;
	size_t		 n, cap;
};

static void
vec_push(struct vec *v, long long k1, long long k2, long long t, long long d)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 1024;
		v->v = xrealloc(v->v, v->cap * sizeof(*v->v));
	}
	v->v[v->n].k1 = k1;
	v->v[v->n].k2 = k2;
	v->v[v->n].t = t;
	v->v[v->n].d = d;
	v->n++;
}

static int
push_truth(const struct delta *dl, void *arg)
{
	vec_push(arg, dl->k1, dl->k2, dl->d, 0);
	return 0;
}

/* Truth and durable values of every key of fam, merged, sorted. */
static int
load_family(struct db *db, enum family fam, struct vec *out)
{
	struct vec truth = { 0 }, dur = { 0 };
	sqlite3_stmt *s;
	long long k1, k2;
	size_t i = 0, j = 0;
	const char *key;
	int rc;

	if (recount_family(db, fam, push_truth, &truth) < 0)
		goto fail;
	if ((s = db_stmt(db, STMT_COUNTERS_OF_FAMILY)) == NULL)
		goto fail;
	sqlite3_bind_text(s, 1, families[fam].name, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		key = (const char *)sqlite3_column_text(s, 0);
		k2 = 0;
		if (key == NULL || sscanf(key, "%lld:%lld", &k1, &k2) < 1)
			continue;
		vec_push(&dur, k1, k2, 0, sqlite3_column_int64(s, 1));
	}
	db_done(s);
	if (rc != SQLITE_DONE)
		goto fail;
	qsort(truth.v, truth.n, sizeof(*truth.v), entry_cmp);
	qsort(dur.v, dur.n, sizeof(*dur.v), entry_cmp);
	while (i < truth.n || j < dur.n) {
		int c = i == truth.n ? 1 : j == dur.n ? -1 :
		    entry_cmp(&truth.v[i], &dur.v[j]);

		if (c < 0) {
			vec_push(out, truth.v[i].k1, truth.v[i].k2, truth.v[i].t, 0);
			i++;
		} else if (c > 0) {
			vec_push(out, dur.v[j].k1, dur.v[j].k2, 0, dur.v[j].d);
			j++;
		} else {
			vec_push(out, truth.v[i].k1, truth.v[i].k2, truth.v[i].t,
			    dur.v[j].d);
			i++;
			j++;
		}
	}
	free(truth.v);
	free(dur.v);
	return 0;
fail:
	free(truth.v);
	free(dur.v);
	return -1;
}

/* One key's Redis state, parsed from state_lua's reply. */
struct rstate {
	char		ver[24];
	char		pend[24];	/* raw pending, as read */
	int		has_live;
	long long	live;
	char		batch[24];	/* the batch holding inflight, or "" */
	long long	fly;		/* its amount for this key */
};

static void
parse_state(redisReply *rep, struct rstate *st)
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
keys_of(enum family fam, long long k1, long long k2, struct cstore_keys *k)
{
	struct delta dl = { fam, k1, k2, 0 };

	cstore_keys(&dl, k);
}

/* Reads the Redis state of n entries in one pipeline; -1 if Redis failed. */
static int
read_states(struct app *a, enum family fam, struct entry *e, size_t n,
    struct rstate *st)
{
	struct cstore_keys k;
	const char *keys[4] = { k.live, k.pending, k.inflight, k.meta };
	const char *args[2];
	redisReply *rep;
	size_t i, queued = 0;

	for (i = 0; i < n; i++) {
		keys_of(fam, e[i].k1, e[i].k2, &k);
		args[0] = k.field;
		args[1] = k.pfield;
		if (rds_append_eval(&a->rds, &state_lua, 4, keys, 2, args) == -1)
			break;
		queued++;
	}
	for (i = 0; i < queued; i++) {
		if (rds_get_reply(&a->rds, &rep) == -1) {
			return -1;
		}
		if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 5)
			parse_state(rep, &st[i]);
		else	/* an error reply: nothing known, settle() retries */
			memset(&st[i], 0, sizeof(st[i]));
		freeReplyObject(rep);
	}
	return queued == n ? 0 : -1;
}

/* The truth and durable value of one key, and whether flush batch
 * `batch` ("": none) is applied, in one read snapshot; s is the family's
 * prepared recount_one statement. */
static int
point_read(struct app *a, enum family fam, sqlite3_stmt *s,
    struct entry *e, const char *batch, int *applied)
{
	int err = 0, rc;

	if (db_exec(&a->db, "BEGIN") == -1)
		return -1;
	sqlite3_bind_int64(s, 1, e->k1);
	if (families[fam].obj == OBJ_USER_TOPIC)
		sqlite3_bind_int64(s, 2, e->k2);
	rc = sqlite3_step(s);
	e->t = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_ROW)
		goto fail;
	e->d = cstore_durable(&a->db, fam, e->k1, e->k2, &err);
	if (err)
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

/* Settles the candidates of a chunk; see the header comment. */
static int
settle(struct app *a, enum family fam, int dry, struct entry *cand,
    size_t n, struct rec_family *rf)
{
	struct rstate *st = xcalloc(n, sizeof(*st));
	int *done = xcalloc(n, sizeof(*done));
	int *applied = xcalloc(n, sizeof(*applied));
	char tb[24], db[24];
	struct cstore_keys ck;
	const char *keys[4] = { ck.live, ck.pending, ck.inflight, ck.meta };
	const char *args[8];
	size_t i, left = n;
	long long t, d, c, live_err;
	redisReply *rep;
	sqlite3_stmt *one = NULL;
	int round, rc = -1, two = families[fam].obj == OBJ_USER_TOPIC;

	if ((one = db_prepare_once(&a->db, families[fam].recount_one)) == NULL)
		goto out;
	for (round = 0; round < REC_ROUNDS && left > 0; round++) {
		if (read_states(a, fam, cand, n, st) == -1)
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
			keys_of(fam, cand[i].k1, cand[i].k2, &ck);
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
			rep = rds_eval(&a->rds, &fix_lua, 4, keys, 8, args);
			if (rep == NULL)
				goto out;
			if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 3) {
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
			freeReplyObject(rep);
		}
	}
	rf->unsettled += (long long)left;
	rc = 0;
out:
	sqlite3_finalize(one);
	free(st);
	free(done);
	free(applied);
	return rc;
}

/* Whether flush batch id is applied, asked of SQLite once while the same
 * id repeats (the keys of a chunk share a few batches; a stale "no" only
 * makes a candidate, which settle() checks exactly).  1, 0, or -1. */
static int
applied_once(struct app *a, const char *id, char last[24], int *res)
{
	if (strcmp(id, last) != 0) {
		*res = db_batch_applied(&a->db, id);
		snprintf(last, 24, "%s", id);
	}
	return *res;
}

static int
reconcile_family(struct app *a, enum family fam, int dry,
    struct rec_family *rf)
{
	struct vec all = { 0 }, cand = { 0 };
	struct rstate *st;
	char last[24] = "";
	long long p;
	size_t i, j, n;
	int rc = -1, last_applied = 0;

	if (load_family(&a->db, fam, &all) == -1)
		return -1;
	st = xcalloc(REC_CHUNK, sizeof(*st));
	for (i = 0; i < all.n; i += REC_CHUNK) {
		n = all.n - i < REC_CHUNK ? all.n - i : REC_CHUNK;
		if (read_states(a, fam, all.v + i, n, st) == -1)
			goto out;
		for (j = 0; j < n; j++) {
			struct entry *e = &all.v[i + j];

			rf->checked++;
			p = strtoll(st[j].pend, NULL, 10);
			if (st[j].batch[0] != '\0' &&
			    applied_once(a, st[j].batch, last, &last_applied) != 1)
				p += st[j].fly;
			if (e->t != e->d + p ||
			    (st[j].has_live && st[j].live != e->d + p))
				vec_push(&cand, e->k1, e->k2, e->t, e->d);
		}
		/* Candidates wait for a full batch: one grace period each. */
		if (cand.n >= REC_SETTLE) {
			if (settle(a, fam, dry, cand.v, cand.n, rf) == -1)
				goto out;
			cand.n = 0;
		}
	}
	if (cand.n > 0 && settle(a, fam, dry, cand.v, cand.n, rf) == -1)
		goto out;
	rc = 0;
out:
	free(st);
	free(all.v);
	free(cand.v);
	return rc;
}

/* posts.like_count against its likes rows, 5000 posts a transaction. */
static int
reconcile_like_count(struct app *a, int dry, struct rec_family *rf)
{
	sqlite3_stmt *s;
	long long max = 0, lo, n, err;
	int rc;

	if ((s = db_stmt(&a->db, STMT_POST_MAX_ID)) == NULL)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		max = sqlite3_column_int64(s, 0);
	db_done(s);
	for (lo = 1; lo <= max; lo += 5000) {
		if ((s = db_stmt(&a->db, STMT_LIKE_COUNT_DRIFT)) == NULL)
			return -1;
		sqlite3_bind_int64(s, 1, lo);
		sqlite3_bind_int64(s, 2, lo + 4999);
		n = err = 0;
		if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			n = sqlite3_column_int64(s, 0);
			err = sqlite3_column_int64(s, 1);
		}
		db_done(s);
		rf->checked += (lo + 4999 < max ? 5000 : max - lo + 1);
		if (n == 0)
			continue;
		rf->wrong += n;
		if (err > rf->max_err)
			rf->max_err = err;
		if (rf->nex < REC_EXAMPLES)
			snprintf(rf->ex[rf->nex++], sizeof(rf->ex[0]),
			    "posts %lld-%lld", lo, lo + 4999);
		if (dry)
			continue;
		if (db_begin(&a->db) == -1 ||
		    (s = db_stmt(&a->db, STMT_LIKE_COUNT_FIX)) == NULL) {
			db_rollback(&a->db);
			return -1;
		}
		sqlite3_bind_int64(s, 1, lo);
		sqlite3_bind_int64(s, 2, lo + 4999);
		rc = sqlite3_step(s);
		db_done(s);
		if (rc != SQLITE_DONE || db_commit(&a->db) == -1) {
			db_rollback(&a->db);
			return -1;
		}
		rf->fixed += sqlite3_changes(a->db.h);
	}
	return 0;
}

int
reconcile_sample(struct app *a, enum family fam, int n, long long *checked,
    long long *wrong)
{
	struct rec_family rf;
	struct entry e[16];
	sqlite3_stmt *s;
	long long mu = 0, mp = 0, mt = 0, id;
	int i, k = 0;

	if (families[fam].recount_one == NULL)
		return 0;
	if ((s = db_stmt(&a->db, STMT_MAX_IDS)) == NULL)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW) {
		mu = sqlite3_column_int64(s, 0);
		mp = sqlite3_column_int64(s, 1);
		mt = sqlite3_column_int64(s, 2);
	}
	db_done(s);
	if (n > 16)
		n = 16;
	for (i = 0; i < n; i++) {
		memset(&e[k], 0, sizeof(e[k]));
		switch (families[fam].obj) {
		case OBJ_USER:
			if (mu == 0)
				continue;
			e[k].k1 = 1 + random() % mu;
			break;
		case OBJ_POST:
			if (mp == 0)
				continue;
			e[k].k1 = 1 + random() % mp;
			break;
		case OBJ_TOPIC:
			if (mt == 0)
				continue;
			e[k].k1 = 1 + random() % mt;
			break;
		case OBJ_USER_TOPIC:
			if (mp == 0 ||
			    (s = db_stmt(&a->db, STMT_POST_AT_OR_AFTER)) == NULL)
				continue;
			id = 1 + random() % mp;
			sqlite3_bind_int64(s, 1, id);
			if (sqlite3_step(s) == SQLITE_ROW) {
				e[k].k1 = sqlite3_column_int64(s, 0);
				e[k].k2 = sqlite3_column_int64(s, 1);
			}
			db_done(s);
			if (e[k].k1 == 0)
				continue;
			break;
		}
		k++;
	}
	memset(&rf, 0, sizeof(rf));
	if (k > 0 && settle(a, fam, 1, e, (size_t)k, &rf) == -1)
		return -1;
	*checked += k;
	*wrong += rf.wrong;
	return 0;
}

int
reconcile_backlog(struct app *a)
{
	struct { char name[40], key[48]; long long delta; } *rows;
	struct rec_family rf;
	struct entry e;
	sqlite3_stmt *s;
	enum family fam;
	int n = 0, i, done = 0;

	rows = xcalloc(500, sizeof(*rows));
	if ((s = db_stmt(&a->db, STMT_BACKLOG_BATCH)) == NULL) {
		free(rows);
		return -1;
	}
	sqlite3_bind_int(s, 1, 500);
	while (n < 500 && sqlite3_step(s) == SQLITE_ROW) {
		snprintf(rows[n].name, sizeof(rows[n].name), "%s",
		    (const char *)sqlite3_column_text(s, 0));
		snprintf(rows[n].key, sizeof(rows[n].key), "%s",
		    (const char *)sqlite3_column_text(s, 1));
		rows[n].delta = sqlite3_column_int64(s, 2);
		n++;
	}
	db_done(s);
	for (i = 0; i < n; i++) {
		memset(&e, 0, sizeof(e));
		memset(&rf, 0, sizeof(rf));
		fam = family_by_name(rows[i].name);
		if (fam != FAM__MAX && families[fam].recount_one != NULL) {
			if (sscanf(rows[i].key, "%lld:%lld", &e.k1, &e.k2) < 1)
				continue;
			if (settle(a, fam, 0, &e, 1, &rf) == -1)
				break;
			if (rf.unsettled > 0)
				continue;	/* still moving: next round */
		}
		/* views have no truth: what waited is simply lost */
		if ((s = db_stmt(&a->db, STMT_BACKLOG_DONE)) == NULL)
			break;
		sqlite3_bind_text(s, 1, rows[i].name, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, rows[i].key, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, rows[i].delta);
		sqlite3_step(s);
		db_done(s);
		done++;
	}
	free(rows);
	return done;
}

void
rec_report_init(struct rec_report *r)
{
	int i;

	memset(r, 0, sizeof(*r));
	snprintf(r->fam[0].name, sizeof(r->fam[0].name), "post_like_count");
	for (i = 0; i < FAM__MAX; i++)
		snprintf(r->fam[i + 1].name, sizeof(r->fam[0].name), "%s",
		    families[i].name);
}

long long
rec_report_wrong(const struct rec_report *r)
{
	long long n = 0;
	int i;

	for (i = 0; i < REC_FAMILIES; i++)
		n += r->fam[i].wrong;
	return n;
}

int
reconcile(struct app *a, int dry, int from, struct rec_report *rep,
    rec_progress progress, void *arg)
{
	int step, rc;

	for (step = from; step < REC_FAMILIES; step++) {
		if (step == 0)
			rc = reconcile_like_count(a, dry, &rep->fam[0]);
		else if (families[step - 1].recount == NULL)
			rc = 0;		/* views: no truth rows */
		else
			rc = reconcile_family(a, (enum family)(step - 1), dry,
			    &rep->fam[step]);
		if (rc == -1)
			return -1;
		if (progress != NULL && progress(arg, (step + 1) * 100 /
		    REC_FAMILIES, step + 1, rep) == -1)
			return -1;
	}
	return 0;
}

char *
rec_report_json(const struct rec_report *r)
{
	json_t *arr = json_array(), *o, *ex;
	char *s;
	int i, j;

	for (i = 0; i < REC_FAMILIES; i++) {
		ex = json_array();
		for (j = 0; j < r->fam[i].nex; j++)
			json_array_append_new(ex, json_string(r->fam[i].ex[j]));
		o = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:o}", "family",
		    r->fam[i].name, "checked", (json_int_t)r->fam[i].checked,
		    "wrong", (json_int_t)r->fam[i].wrong, "fixed",
		    (json_int_t)r->fam[i].fixed, "max_error",
		    (json_int_t)r->fam[i].max_err, "unsettled",
		    (json_int_t)r->fam[i].unsettled, "examples", ex);
		json_array_append_new(arr, o);
	}
	s = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	return s;
}

int
rec_report_parse(const char *js, struct rec_report *r)
{
	json_error_t err;
	json_t *arr = json_loads(js, 0, &err), *o, *ex;
	json_int_t ch, wr, fx, mx, un;
	const char *name;
	size_t i, j;
	int k;

	rec_report_init(r);
	if (arr == NULL || !json_is_array(arr)) {
		json_decref(arr);
		return -1;
	}
	json_array_foreach(arr, i, o) {
		if (json_unpack(o, "{s:s,s:I,s:I,s:I,s:I,s:I,s:o}", "family",
		    &name, "checked", &ch, "wrong", &wr, "fixed", &fx,
		    "max_error", &mx, "unsettled", &un, "examples", &ex) != 0)
			continue;
		for (k = 0; k < REC_FAMILIES; k++) {
			if (strcmp(r->fam[k].name, name) != 0)
				continue;
			r->fam[k].checked = ch;
			r->fam[k].wrong = wr;
			r->fam[k].fixed = fx;
			r->fam[k].max_err = mx;
			r->fam[k].unsettled = un;
			for (j = 0; j < json_array_size(ex) && j < REC_EXAMPLES; j++)
				snprintf(r->fam[k].ex[r->fam[k].nex++], 48, "%s",
				    json_string_value(json_array_get(ex, j)) ?
				    json_string_value(json_array_get(ex, j)) : "");
		}
	}
	json_decref(arr);
	return 0;
}
