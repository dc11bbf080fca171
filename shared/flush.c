/* flush.c -- the coalescing flusher; see flush.h. */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "counters.h"
#include "cstore.h"
#include "flush.h"
#include "outbox.h"
#include "log.h"
#include "taken.h"

#define KEY_SEQ		"{flush}:seq"
#define LOCK_MS		"5000"

/* KEYS: seq.  ARGV: the highest batch id SQLite has applied.  A Redis
 * that lost its data restarts the sequence: never reuse an applied id. */
static struct rds_script seq_lua = { .src =
	"local cur = tonumber(redis.call('GET', KEYS[1]) or '0')\n"
	"if cur < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end\n"
	"return redis.call('INCR', KEYS[1])\n" };

/* KEYS: pending, inflight, meta.  ARGV: batch.  -> 1 taken, 0 nothing
 * pending, -1 an unfinished batch still holds the inflight part, -2 the
 * batch was declared dead (fenced: see flush_recover()). */
static struct rds_script take_lua = { .src =
	"local f = redis.call('HGET', KEYS[3], 'f')\n"
	"if f and tonumber(f) >= tonumber(ARGV[1]) then return -2 end\n"
	"if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end\n"
	"if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end\n"
	"redis.call('RENAME', KEYS[1], KEYS[2])\n"
	"redis.call('HSET', KEYS[3], 'b', ARGV[1])\n"
	"redis.call('HINCRBY', KEYS[3], 'v', 1)\n"
	"return 1\n" };

/* KEYS: inflight, meta.  ARGV: batch.  -> the inflight hash while the
 * batch holds it, else nil. */
static struct rds_script held_lua = { .src =
	"if redis.call('HGET', KEYS[2], 'b') ~= ARGV[1] then return false end\n"
	"return redis.call('HGETALL', KEYS[1])\n" };

/* KEYS: meta.  ARGV: batch.  No batch up to this one takes the bucket
 * any more. */
static struct rds_script fence_lua = { .src =
	"local f = redis.call('HGET', KEYS[1], 'f')\n"
	"if not f or tonumber(f) < tonumber(ARGV[1]) then\n"
	"  redis.call('HSET', KEYS[1], 'f', ARGV[1])\n"
	"end\n"
	"return 1\n" };

/* The lock key that tells recovery batch b has a live flusher. */
static void
lock_key(long long b, char *out, size_t sz)
{
	snprintf(out, sz, "{flush}:lock:%lld", b);
}

/* Queues one round: the lock's refresh, then per bucket the take and
 * an HGETALL of what it took.  How many buckets, or -1. */
static int
send_round(struct app *a, const char *batch, const char *lkey, int from)
{
	struct cstore_keys k;
	const char *keys[3] = { k.pending, k.inflight, k.meta };
	const char *args[1] = { batch };
	const char *cmd[3];
	int b, to = from + FLUSH_PIPE < CSTORE_BUCKETS ? from + FLUSH_PIPE :
	    CSTORE_BUCKETS;

	cmd[0] = "PEXPIRE";
	cmd[1] = lkey;
	cmd[2] = LOCK_MS;
	if (rds_append_strs(&a->rds, 3, cmd) == -1)
		return -1;
	for (b = from; b < to; b++) {
		cstore_bucket_keys(b, &k);
		cmd[0] = "HGETALL";
		cmd[1] = k.inflight;
		if (rds_append_eval(&a->rds, &take_lua, 3, keys, 1, args) == -1 ||
		    rds_append_strs(&a->rds, 2, cmd) == -1)
			return -1;
	}
	return to - from;
}

/* Reads one round of n buckets from `from` into t.  0, or -1 when
 * Redis failed. */
static int
read_round(struct app *a, int from, int n, struct taken *t)
{
	redisReply *take, *all;
	int i;

	if (rds_get_reply(&a->rds, &take) == -1)	/* PEXPIRE */
		return -1;
	freeReplyObject(take);
	for (i = 0; i < n; i++) {
		if (rds_get_reply(&a->rds, &take) == -1)
			return -1;
		if (rds_get_reply(&a->rds, &all) == -1) {
			freeReplyObject(take);
			return -1;
		}
		if (take->type == REDIS_REPLY_INTEGER && take->integer == 1)
			taken_add(t, from + i, all);
		else if (take->type == REDIS_REPLY_INTEGER &&
		    take->integer == -2)
			t->fenced = 1;
		else if (take->type != REDIS_REPLY_INTEGER ||
		    take->integer != 0) {	/* held, or an error: later */
			t->skipped++;
			if (take->type == REDIS_REPLY_ERROR)
				log_warn("flush take {c%d}: %s", from + i,
				    take->str);
		}
		freeReplyObject(take);
		freeReplyObject(all);
	}
	return 0;
}

/* The highest batch id SQLite has applied, or -1. */
static long long
applied_max(struct app *a)
{
	sqlite3_stmt *s = db_stmt(&a->db, STMT_FLUSH_MAX);
	long long m = 0;
	int rc;

	if (s == NULL)
		return -1;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		m = sqlite3_column_int64(s, 0);
	db_done(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? m : -1;
}

static long long
next_batch_id(struct app *a, long long applied)
{
	const char *keys[1] = { KEY_SEQ }, *args[1];
	char maxid[24];
	redisReply *rep;
	long long b;

	snprintf(maxid, sizeof(maxid), "%lld", applied);
	args[0] = maxid;
	if ((rep = rds_eval(&a->rds, &seq_lua, 1, keys, 1, args)) == NULL)
		return -1;
	b = rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;
	freeReplyObject(rep);
	return b;
}

/* One batch of flush_all(): taken from Redis on the calling thread,
 * applied to SQLite on a thread of its own while the next is taken. */
struct batch {
	struct app	*a;
	long long	 b;
	char		 id[24], lkey[48];
	struct taken	 t;
	pthread_t	 th;
	int		 running;
	int		 finished;	/* its thread is done (atomic) */
	int		 rc;		/* of the SQLite part */
};

/* Whether prev's SQLite part (a thread) is over. */
static int
prev_done(const struct batch *prev)
{
	return prev != NULL && prev->running &&
	    __atomic_load_n(&prev->finished, __ATOMIC_ACQUIRE);
}

static int fault_paused;	/* TALLY_FAULT_TAKE_MS: once a process */

/* Takes batch bt->b from bucket `from` on, while prev (if any) is
 * applied: rounds until it holds limit counters (0: one round), or fewer
 * once prev is applied and bt holds enough to keep SQLite busy (limit /
 * 8), so SQLite seldom waits for a take.  *next: where the next batch
 * starts.  0, or -1 when Redis failed. */
static int
take_batch(struct app *a, struct batch *bt, int from, int limit,
    const struct batch *prev, int *next)
{
	redisReply *rep;
	int sent = from, got = from, n, m, enough = (limit + 7) / 8;

	snprintf(bt->id, sizeof(bt->id), "%lld", bt->b);
	lock_key(bt->b, bt->lkey, sizeof(bt->lkey));
	/* The lock tells recovery this batch has a live flusher. */
	if ((rep = rds_cmdv(&a->rds, "SET", bt->lkey, "1", "PX", LOCK_MS,
	    NULL)) == NULL)
		return -1;
	freeReplyObject(rep);
	if ((n = send_round(a, bt->id, bt->lkey, sent)) == -1)
		return -1;
	sent += n;
	while (got < sent) {
		/* the next round is on its way while this one is read */
		m = 0;
		if (sent < CSTORE_BUCKETS && bt->t.nds < limit &&
		    !(bt->t.nds >= enough && prev_done(prev)) &&
		    !bt->t.fenced &&
		    (m = send_round(a, bt->id, bt->lkey, sent)) == -1)
			return -1;	/* the connection is gone */
		if (read_round(a, got, n, &bt->t) == -1)
			return -1;
		got += n;
		sent += m;
		n = m;
		if (a->fault_take_ms > 0 && m > 0 && !fault_paused) {
			fault_paused = 1;	/* tests: a stall mid-take */
			usleep((useconds_t)a->fault_take_ms * 1000);
		}
	}
	if (bt->t.fenced) {	/* what it took is recovery's */
		log_warn("flush %s: declared dead while it took buckets; "
		    "left to recovery", bt->id);
		return -1;
	}
	taken_sort(&bt->t);	/* here, off the SQLite thread's path */
	*next = sent;
	return 0;
}

/* The batch's one SQLite transaction. */
static void *
apply_batch(void *arg)
{
	struct batch *bt = arg;
	struct app *a = bt->a;
	sigset_t alrm;

	/* db_begin()'s bounded wait is cut by SIGALRM: this thread takes it
	 * (the caller blocks it while we run). */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	bt->rc = 0;
	if (bt->t.nds > 0) {
		if (a->fault_delay_ms > 0)	/* tests: taken, not applied */
			usleep((useconds_t)a->fault_delay_ms * 1000);
		if (taken_apply(&a->db, bt->b, &bt->t) != 1)
			bt->rc = -1;	/* a fresh id applied elsewhere */
	}
	__atomic_store_n(&bt->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void
join_batch(struct batch *bt)
{
	if (bt->running) {
		pthread_join(bt->th, NULL);
		bt->running = 0;
	}
}

/* Waits for bt's SQLite part; once applied, boards and acks (Redis
 * only: the boards take the values the UPSERTs returned, so this runs
 * while the next batch's thread has the database).  Drops the lock
 * either way (a failed batch is recovery's).  0 or -1. */
static int
end_batch(struct app *a, struct batch *bt, struct flush_stats *st)
{
	redisReply *rep;
	int rc = -1;

	join_batch(bt);
	if (bt->rc == 0 && taken_settle(a, bt->id, &bt->t, 1) == 0) {
		if (st != NULL) {
			st->batches += bt->t.nb > 0;
			st->buckets += bt->t.nb;
			st->counters += bt->t.nds;
			st->total += bt->t.total;
			st->skipped += bt->t.skipped;
		}
		rc = 0;
	}
	if ((rep = rds_cmdv(&a->rds, "DEL", bt->lkey, NULL)) != NULL)
		freeReplyObject(rep);
	taken_free(&bt->t);
	return rc;
}

int
flush_all(struct app *a, int max_batches, struct flush_stats *st)
{
	struct batch bts[2], *cur, *prev = NULL;
	sigset_t alrm, old;
	long long done;
	int i, from = 0, next = CSTORE_BUCKETS, rc = 0;

	if ((done = applied_max(a)) < 0)
		return -1;
	memset(bts, 0, sizeof(bts));
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, &old);
	for (i = 0; i < max_batches && from < CSTORE_BUCKETS; i++) {
		cur = &bts[i % 2];
		memset(cur, 0, sizeof(*cur));
		cur->a = a;
		/* Taken while the previous batch is applied.  The first is
		 * one round: SQLite starts early. */
		if ((cur->b = next_batch_id(a, done)) < 0 ||
		    take_batch(a, cur, from, i == 0 ? 0 : a->flush_fields,
		    prev, &next) == -1)
			cur->rc = -1;
		if (prev != NULL)
			join_batch(prev);
		/* A batch whose predecessor failed is not applied (it is
		 * recovery's, as when the flusher dies). */
		if (cur->rc == 0 && (prev == NULL || prev->rc == 0)) {
			if (pthread_create(&cur->th, NULL, apply_batch,
			    cur) == 0)
				cur->running = 1;
			else
				apply_batch(cur);	/* no thread: here */
		} else
			cur->rc = -1;
		/* The previous batch's boards and acks while this one is
		 * applied. */
		if (prev != NULL && end_batch(a, prev, st) == -1)
			rc = -1;
		prev = cur;
		from = next;
		if (cur->rc == -1 || rc == -1) {
			rc = -1;
			break;
		}
	}
	if (prev != NULL && end_batch(a, prev, st) == -1)
		rc = -1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

int
flush_now(struct app *a, long long wait_ms, struct flush_stats *st)
{
	long long end = db_mono_ms() + wait_ms;

	/* What actions committed but did not get to Redis first. */
	if (outbox_drain(a, 0) == -1)
		return -1;
	for (;;) {
		st->skipped = 0;
		if (flush_recover(a) < 0 || flush_all(a, INT_MAX, st) == -1)
			return -1;
		if (st->skipped == 0)
			return 0;
		if (db_mono_ms() >= end)
			return 1;
		usleep(FLUSH_POLL_MS * 1000);
	}
}

/* Finishes batch b of a dead flusher, which holds the n buckets bs. */
static int
finish_batch(struct app *a, long long b, const int *bs, int n)
{
	char batch[24];
	struct cstore_keys k;
	const char *keys[2] = { k.inflight, k.meta }, *args[1] = { batch };
	struct taken t;
	redisReply *rep;
	int i, queued = 0, applied, now, rc = -1;

	memset(&t, 0, sizeof(t));
	snprintf(batch, sizeof(batch), "%lld", b);
	if ((applied = db_batch_applied(&a->db, batch)) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		cstore_bucket_keys(bs[i], &k);
		if (rds_append_eval(&a->rds, &held_lua, 2, keys, 1, args) == -1)
			break;
		queued++;
	}
	for (i = 0; i < queued; i++) {
		if (rds_get_reply(&a->rds, &rep) == -1)
			goto out;
		if (rep->type == REDIS_REPLY_ARRAY)
			taken_add(&t, bs[i], rep);
		freeReplyObject(rep);
	}
	if (queued != n)
		goto out;
	if (!applied && t.nds > 0) {
		taken_sort(&t);
		if ((now = taken_apply(&a->db, b, &t)) == -1)
			goto out;
		applied = now == 0;	/* 0: another flusher had it */
	}
	rc = taken_settle(a, batch, &t, !applied);
out:
	taken_free(&t);
	return rc;
}

/* Every bucket's owner (meta b; 0: none) into owner.  0 or -1. */
static int
scan_owners(struct app *a, long long *owner)
{
	char meta[32];
	const char *cmd[3];
	redisReply *rep;
	int b, queued = 0;

	for (b = 0; b < CSTORE_BUCKETS; b++) {
		cstore_bucket_key(b, "meta", meta, sizeof(meta));
		cmd[0] = "HGET";
		cmd[1] = meta;
		cmd[2] = "b";
		if (rds_append_strs(&a->rds, 3, cmd) == -1)
			break;
		queued++;
	}
	for (b = 0; b < queued; b++) {
		if (rds_get_reply(&a->rds, &rep) == -1)
			return -1;
		owner[b] = rep->type == REDIS_REPLY_STRING ?
		    strtoll(rep->str, NULL, 10) : 0;
		freeReplyObject(rep);
	}
	return queued == CSTORE_BUCKETS ? 0 : -1;
}

/* Whether batch b's flusher lives (its lock): 1, 0, or -1. */
static int
batch_alive(struct app *a, long long b)
{
	char lkey[48];
	redisReply *rep;
	int alive;

	lock_key(b, lkey, sizeof(lkey));
	if ((rep = rds_cmdv(&a->rds, "EXISTS", lkey, NULL)) == NULL)
		return -1;
	alive = rep->type != REDIS_REPLY_INTEGER || rep->integer != 0;
	freeReplyObject(rep);
	return alive;
}

/* Fences every bucket against batches up to b: their takes fail from
 * now on.  0 or -1. */
static int
fence_all(struct app *a, long long b)
{
	char meta[32], batch[24];
	const char *keys[1] = { meta }, *args[1] = { batch };
	redisReply *rep;
	int i, queued = 0, rc = 0;

	snprintf(batch, sizeof(batch), "%lld", b);
	for (i = 0; i < CSTORE_BUCKETS; i++) {
		cstore_bucket_key(i, "meta", meta, sizeof(meta));
		if (rds_append_eval(&a->rds, &fence_lua, 1, keys, 1, args) == -1)
			break;
		queued++;
	}
	for (i = 0; i < queued; i++) {
		if (rds_get_reply(&a->rds, &rep) == -1)
			return -1;
		if (rep->type == REDIS_REPLY_ERROR)
			rc = -1;
		freeReplyObject(rep);
	}
	return queued == CSTORE_BUCKETS ? rc : -1;
}

/*
 * A flusher that stalls past its lock (stopped, swapped out) looks dead,
 * yet may wake and take more buckets under its id.  Were its batch
 * finished meanwhile, what it took after would be acked unapplied (the
 * id is in flushes): lost.  So the dead ids are fenced first (take_lua
 * refuses them; the waking flusher abandons its batch), the owners read
 * again, and only then is each dead batch finished with every bucket it
 * holds.
 */
int
flush_recover(struct app *a)
{
	long long *owner = xcalloc(CSTORE_BUCKETS, sizeof(*owner));
	long long upto = 0;
	int *bs = xcalloc(CSTORE_BUCKETS, sizeof(*bs));
	int b, i, n, alive, done = -1;

	if (scan_owners(a, owner) == -1)
		goto out;
	for (b = 0; b < CSTORE_BUCKETS; b++) {
		if (owner[b] <= 0 || owner[b] <= upto)
			continue;
		if ((alive = batch_alive(a, owner[b])) == -1)
			goto out;
		if (!alive)
			upto = owner[b];
	}
	done = 0;
	if (upto == 0)
		goto out;
	if (fence_all(a, upto) == -1 || scan_owners(a, owner) == -1) {
		done = -1;
		goto out;
	}
	for (b = 0; b < CSTORE_BUCKETS; b++) {
		if (owner[b] <= 0)
			continue;
		for (i = b, n = 0; i < CSTORE_BUCKETS; i++)
			if (owner[i] == owner[b]) {
				bs[n++] = i;
				if (i > b)
					owner[i] = 0;
			}
		/* A later id is not fenced yet: next time. */
		if (owner[b] > upto)
			continue;
		if ((alive = batch_alive(a, owner[b])) == -1) {
			done = -1;
			goto out;
		}
		if (alive)	/* an older live batch: fenced, it gives up */
			continue;
		log_info("flush: finishing batch %lld left by a dead flusher "
		    "(%d buckets)", owner[b], n);
		if (finish_batch(a, owner[b], bs, n) == 0)
			done++;
	}
out:
	free(owner);
	free(bs);
	return done;
}

long long
flush_pending(struct app *a)
{
	char key[32];
	const char *cmd[2];
	redisReply *rep;
	long long n = 0;
	int b, k, queued = 0;

	for (b = 0; b < CSTORE_BUCKETS; b++)
		for (k = 0; k < 2; k++) {
			cstore_bucket_key(b, k ? "inflight" : "pending", key,
			    sizeof(key));
			cmd[0] = "HLEN";
			cmd[1] = key;
			if (rds_append_strs(&a->rds, 2, cmd) == -1)
				goto fail;
			queued++;
		}
	for (b = 0; b < queued; b++) {
		if (rds_get_reply(&a->rds, &rep) == -1)
			return -1;
		if (rep->type == REDIS_REPLY_INTEGER)
			n += rep->integer;
		freeReplyObject(rep);
	}
	return n;
fail:
	rds_collect(&a->rds, queued);
	return -1;
}
