/* flush.c -- the coalescing flusher; see flush.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "counters.h"
#include "cstore.h"
#include "flush.h"
#include "lb.h"
#include "log.h"

#define KEY_DIRTY	"{flush}:dirty"
#define KEY_SEQ		"{flush}:seq"

/* KEYS: seq.  ARGV: the highest batch id SQLite has applied.  A Redis
 * that lost its data restarts the sequence: never reuse an applied id. */
static struct rds_script seq_lua = { .src =
	"local cur = tonumber(redis.call('GET', KEYS[1]) or '0')\n"
	"if cur < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end\n"
	"return redis.call('INCR', KEYS[1])\n" };

/* KEYS: dirty, manifest.  ARGV: n.  Pops n dirty hashes into the manifest. */
static struct rds_script claim_lua = { .src =
	"local ks = redis.call('SPOP', KEYS[1], ARGV[1])\n"
	"for i = 1, #ks, 500 do\n"
	"  redis.call('SADD', KEYS[2], unpack(ks, i, math.min(i + 499, #ks))) end\n"
	"return #ks\n" };

/* KEYS: hash.  ARGV: batch, take (1) or not (0).
 * -> field, amount pairs in flight for the batch */
static struct rds_script take_lua = { .src =
	"local pre = '^' .. ARGV[1] .. ':'\n"
	"local all = redis.call('HGETALL', KEYS[1])\n"
	"if ARGV[2] == '1' then\n"
	"  for i = 1, #all, 2 do\n"
	"    local f = all[i]\n"
	"    if string.sub(f, 1, 1) == '~' and f ~= '~v' then\n"
	"      local v = tonumber(all[i+1])\n"
	"      if v ~= 0 then redis.call('HINCRBY', KEYS[1], pre .. string.sub(f, 2), v) end\n"
	"      redis.call('HDEL', KEYS[1], f)\n"
	"    end\n"
	"  end\n"
	"  redis.call('HINCRBY', KEYS[1], '~v', 1)\n"
	"  all = redis.call('HGETALL', KEYS[1])\n"
	"end\n"
	"local out = {}\n"
	"for i = 1, #all, 2 do\n"
	"  if string.sub(all[i], 1, #pre) == pre then\n"
	"    table.insert(out, string.sub(all[i], #pre + 1))\n"
	"    table.insert(out, all[i+1]) end\n"
	"end\n"
	"return out\n" };

struct taken {
	char		**hashes;
	int		  nhashes;
	int		 *first;	/* per hash: its deltas' start in ds */
	struct delta	 *ds;
	long long	 *vals;		/* per delta: SQLite value after it */
	int		  nds, cap;
};

static void
taken_free(struct taken *t)
{
	int i;

	for (i = 0; i < t->nhashes; i++)
		free(t->hashes[i]);
	free(t->hashes);
	free(t->first);
	free(t->ds);
	free(t->vals);
	memset(t, 0, sizeof(*t));
}

/* Reads the manifest of batch b into t->hashes. */
static int
manifest(struct app *a, const char *mkey, struct taken *t)
{
	redisReply *rep = rds_cmdv(&a->rds, "SMEMBERS", mkey, NULL);
	size_t i;

	if (rep == NULL)
		return -1;
	if (rep->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(rep);
		return -1;
	}
	t->hashes = xcalloc(rep->elements + 1, sizeof(char *));
	t->first = xcalloc(rep->elements + 1, sizeof(int));
	for (i = 0; i < rep->elements; i++)
		t->hashes[t->nhashes++] = xstrndup(rep->element[i]->str,
		    rep->element[i]->len);
	freeReplyObject(rep);
	return 0;
}

/* Take (or only read) every manifest hash's in-flight part, pipelined. */
static int
take_all(struct app *a, const char *batch, int take, struct taken *t)
{
	const char *keys[1], *args[2] = { batch, take ? "1" : "0" };
	redisReply *rep;
	struct delta d;
	int i, queued = 0;
	size_t j;

	for (i = 0; i < t->nhashes; i++) {
		keys[0] = t->hashes[i];
		if (rds_append_eval(&a->rds, &take_lua, 1, keys, 2, args) == -1)
			break;
		queued++;
	}
	for (i = 0; i < queued; i++) {
		if (rds_get_reply(&a->rds, &rep) == -1) {
			return -1;
		}
		t->first[i] = t->nds;
		for (j = 0; rep->type == REDIS_REPLY_ARRAY &&
		    j + 1 < rep->elements; j += 2) {
			if (cstore_parse(t->hashes[i], rep->element[j]->str, &d)
			    == -1) {
				log_warn("flush: skipping %s %s", t->hashes[i],
				    rep->element[j]->str);
				continue;
			}
			d.d = strtoll(rep->element[j + 1]->str, NULL, 10);
			if (t->nds == t->cap) {
				t->cap = t->cap ? t->cap * 2 : 256;
				t->ds = xrealloc(t->ds, (size_t)t->cap *
				    sizeof(*t->ds));
				t->vals = xrealloc(t->vals, (size_t)t->cap *
				    sizeof(*t->vals));
			}
			t->vals[t->nds] = -1;
			t->ds[t->nds++] = d;
		}
		if (rep->type == REDIS_REPLY_ERROR)
			log_warn("flush take: %s", rep->str);
		freeReplyObject(rep);
	}
	return queued == t->nhashes ? 0 : -1;
}

/* The one SQLite transaction of batch b: 1 applied now, 0 already, -1. */
static int
apply_sqlite(struct app *a, long long b, struct taken *t,
    struct flush_stats *st)
{
	struct db *d = &a->db;
	sqlite3_stmt *s;
	char key[48];
	long long total = 0;
	int i, rc;

	for (i = 0; i < t->nds; i++)
		total += t->ds[i].d < 0 ? -t->ds[i].d : t->ds[i].d;
	if (db_begin(d) == -1 || (s = db_stmt(d, STMT_FLUSH_RECORD)) == NULL)
		goto fail;
	sqlite3_bind_int64(s, 1, b);
	sqlite3_bind_int64(s, 2, db_now_ms());
	sqlite3_bind_int(s, 3, t->nds);
	sqlite3_bind_int64(s, 4, total);
	rc = sqlite3_step(s);
	db_done(s);
	if (rc != SQLITE_DONE)
		goto fail;
	if (sqlite3_changes(d->h) == 0) {	/* applied by an earlier run */
		db_rollback(d);
		return 0;
	}
	for (i = 0; i < t->nds; i++) {
		if ((s = db_stmt(d, STMT_COUNTER_ADD)) == NULL)
			goto fail;
		counter_key(&t->ds[i], key, sizeof(key));
		sqlite3_bind_text(s, 1, families[t->ds[i].fam].name, -1,
		    SQLITE_STATIC);
		sqlite3_bind_text(s, 2, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(s, 3, t->ds[i].d);
		if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			t->vals[i] = sqlite3_column_int64(s, 0);
			rc = sqlite3_step(s);
		}
		db_done(s);
		if (rc != SQLITE_DONE)
			goto fail;
	}
	if (db_commit(d) == -1)
		goto fail;
	if (st != NULL) {
		st->counters += t->nds;
		st->total += total;
	}
	return 1;
fail:
	log_err("flush %lld: %s", b, sqlite3_errmsg(d->h));
	db_rollback(d);
	return -1;
}

/* Drops the batch's in-flight fields, whose names the take returned,
 * with plain commands (MULTI: HDEL, and the version bump readers check). */
static int
ack_all(struct app *a, const char *batch, const struct taken *t)
{
	const char *argv[2 + 64];
	char names[64][80], hash[48], field[48];
	int i, k, n, end, queued = 0;

	for (i = 0; i < t->nhashes; i++) {
		end = i + 1 < t->nhashes ? t->first[i + 1] : t->nds;
		argv[0] = "MULTI";
		if (rds_append_strs(&a->rds, 1, argv) == -1)
			break;
		queued++;
		for (k = t->first[i]; k < end; k += n) {
			argv[0] = "HDEL";
			argv[1] = t->hashes[i];
			for (n = 0; n < 64 && k + n < end; n++) {
				cstore_name(&t->ds[k + n], hash, sizeof(hash),
				    field, sizeof(field));
				snprintf(names[n], sizeof(names[n]), "^%s:%s",
				    batch, field);
				argv[2 + n] = names[n];
			}
			if (rds_append_strs(&a->rds, 2 + n, argv) == -1)
				goto out;
			queued++;
		}
		argv[0] = "HINCRBY";
		argv[1] = t->hashes[i];
		argv[2] = "~v";
		argv[3] = "1";
		if (rds_append_strs(&a->rds, 4, argv) == -1)
			goto out;
		argv[0] = "EXEC";
		if (rds_append_strs(&a->rds, 1, argv) == -1)
			goto out;
		queued += 2;
	}
out:
	if (rds_collect(&a->rds, queued) != 0 || i != t->nhashes)
		return -1;
	return 0;
}

/* Takes, applies and acks batch b (manifest already filled).  redo: a
 * recovered batch, taken again only if SQLite has not applied it. */
static int
finish_batch(struct app *a, long long b, int redo, struct flush_stats *st)
{
	char batch[24], mkey[48], lkey[48];
	struct taken t;
	redisReply *rep;
	sqlite3_stmt *s;
	int applied = 0, rc = -1;

	memset(&t, 0, sizeof(t));
	snprintf(batch, sizeof(batch), "%lld", b);
	snprintf(mkey, sizeof(mkey), "{flush}:batch:%lld", b);
	snprintf(lkey, sizeof(lkey), "{flush}:lock:%lld", b);
	if (redo) {
		if ((s = db_stmt(&a->db, STMT_FLUSH_APPLIED)) == NULL)
			return -1;
		sqlite3_bind_int64(s, 1, b);
		applied = sqlite3_step(s) == SQLITE_ROW;
		db_done(s);
	}
	if (manifest(a, mkey, &t) == -1 ||
	    take_all(a, batch, !applied, &t) == -1)
		goto out;
	if (!applied && t.nds > 0 && apply_sqlite(a, b, &t, st) == -1)
		goto out;
	/* Leaderboards follow the durable values (best effort: a board
	 * that misses one is repaired by its rebuild or the next batch). */
	if (t.nds > 0)
		lb_update(a, t.ds, applied ? NULL : t.vals, t.nds);
	if (ack_all(a, batch, &t) == -1)
		goto out;
	if ((rep = rds_cmdv(&a->rds, "DEL", mkey, lkey, NULL)) == NULL)
		goto out;
	freeReplyObject(rep);
	if (st != NULL) {
		st->batches++;
		st->hashes += t.nhashes;
	}
	rc = 0;
out:
	taken_free(&t);
	return rc;
}

static int
flush_one(struct app *a, struct flush_stats *st)
{
	const char *keys[2], *args[1];
	char mkey[48], lkey[48], n[16];
	redisReply *rep;
	long long b, claimed;

	{
		const char *keys[1] = { KEY_SEQ }, *args[1];
		char maxid[24];
		sqlite3_stmt *s = db_stmt(&a->db, STMT_FLUSH_MAX);
		long long m = 0;

		if (s == NULL)
			return -1;
		if (sqlite3_step(s) == SQLITE_ROW)
			m = sqlite3_column_int64(s, 0);
		db_done(s);
		snprintf(maxid, sizeof(maxid), "%lld", m);
		args[0] = maxid;
		if ((rep = rds_eval(&a->rds, &seq_lua, 1, keys, 1, args)) == NULL)
			return -1;
	}
	b = rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;
	freeReplyObject(rep);
	if (b < 0)
		return -1;
	snprintf(mkey, sizeof(mkey), "{flush}:batch:%lld", b);
	snprintf(lkey, sizeof(lkey), "{flush}:lock:%lld", b);
	/* The lock tells recovery this batch has a live flusher. */
	rep = rds_cmdv(&a->rds, "SET", lkey, "1", "PX", "5000", NULL);
	if (rep == NULL)
		return -1;
	freeReplyObject(rep);
	snprintf(n, sizeof(n), "%d", FLUSH_BATCH);
	keys[0] = KEY_DIRTY;
	keys[1] = mkey;
	args[0] = n;
	if ((rep = rds_eval(&a->rds, &claim_lua, 2, keys, 1, args)) == NULL)
		return -1;
	claimed = rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;
	freeReplyObject(rep);
	if (claimed <= 0) {
		if ((rep = rds_cmdv(&a->rds, "DEL", lkey, NULL)) != NULL)
			freeReplyObject(rep);
		return claimed == 0 ? 0 : -1;
	}
	if (a->fault_delay_ms > 0)	/* tests: a window to kill -9 in */
		usleep((useconds_t)a->fault_delay_ms * 1000);
	if (finish_batch(a, b, 0, st) == -1)
		return -1;
	return (int)claimed;
}

int
flush_all(struct app *a, int max_batches, struct flush_stats *st)
{
	int i, n;

	for (i = 0; i < max_batches; i++) {
		if ((n = flush_one(a, st)) < 0)
			return -1;
		if (n < FLUSH_BATCH)
			break;
	}
	return 0;
}

struct recovery {
	struct app	*a;
	int		 done;
};

/* One batch manifest: finished here when its flusher's lock is gone. */
static int
recover_one(const char *key, void *arg)
{
	struct recovery *rc = arg;
	redisReply *lock;
	char lkey[48];
	long long b;
	int dead;

	if (sscanf(key, "{flush}:batch:%lld", &b) != 1)
		return 0;
	snprintf(lkey, sizeof(lkey), "{flush}:lock:%lld", b);
	if ((lock = rds_cmdv(&rc->a->rds, "EXISTS", lkey, NULL)) == NULL)
		return -1;
	dead = lock->type == REDIS_REPLY_INTEGER && lock->integer == 0;
	freeReplyObject(lock);
	if (dead) {
		log_info("flush: finishing batch %lld left by a dead flusher",
		    b);
		if (finish_batch(rc->a, b, 1, NULL) == 0)
			rc->done++;
	}
	return 0;
}

int
flush_recover(struct app *a, long long grace_ms)
{
	struct recovery rc = { a, 0 };

	(void)grace_ms;
	if (rds_scan_each(&a->rds, "{flush}:batch:*", recover_one, &rc) == -1)
		return -1;
	return rc.done;
}

long long
flush_pending(struct app *a)
{
	redisReply *rep = rds_cmdv(&a->rds, "SCARD", KEY_DIRTY, NULL);
	long long n = -1;

	if (rep == NULL)
		return -1;
	if (rep->type == REDIS_REPLY_INTEGER)
		n = rep->integer;
	freeReplyObject(rep);
	return n;
}
