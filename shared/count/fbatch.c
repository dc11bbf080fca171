/* fbatch.c -- a flush batch's ids and Redis scripts; see fbatch.h. */
#include <stdio.h>

#include "count/fbatch.h"
#include "store/db.h"
#include "store/dbq.h"
#include "store/key.h"

/* KEYS: pending, inflight, meta, seq.  ARGV: batch.  -> what it took
 * (the inflight hash's fields and values, as HGETALL gives them), 0
 * nothing pending, -1 an unfinished batch still holds the inflight part,
 * -2 the batch was declared dead (fenced: see recover_batches()).  A
 * take bumps v, so the changes counted in seq start over.  What it took
 * comes back from the take itself, not from a command queued after it:
 * on a cluster a take answered NOSCRIPT or MOVED runs again after the
 * commands queued behind it (rcl.h), which would read the bucket
 * before the take and drop what it set aside. */
struct rds_script fbatch_take_lua = { .src =
	"#!lua\n"
	"local f = redis.call('HGET', KEYS[3], 'f')\n"
	"if f and tonumber(f) >= tonumber(ARGV[1]) then return -2 end\n"
	"if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end\n"
	"if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end\n"
	"redis.call('RENAME', KEYS[1], KEYS[2])\n"
	"redis.call('DEL', KEYS[4])\n"
	"redis.call('HSET', KEYS[3], 'b', ARGV[1])\n"
	"redis.call('HINCRBY', KEYS[3], 'v', 1)\n"
	"return redis.call('HGETALL', KEYS[2])\n" };

/* KEYS: inflight, meta.  ARGV: batch.  -> the inflight hash while the
 * batch holds it, else nil. */
struct rds_script fbatch_held_lua = { .src =
	"#!lua flags=no-writes\n"
	"if redis.call('HGET', KEYS[2], 'b') ~= ARGV[1] then return false end\n"
	"return redis.call('HGETALL', KEYS[1])\n" };

/* KEYS: meta.  ARGV: batch.  No batch up to this one takes the bucket
 * any more. */
struct rds_script fbatch_fence_lua = { .src =
	"#!lua\n"
	"local f = redis.call('HGET', KEYS[1], 'f')\n"
	"if not f or tonumber(f) < tonumber(ARGV[1]) then\n"
	"  redis.call('HSET', KEYS[1], 'f', ARGV[1])\n"
	"end\n"
	"return 1\n" };

/* The lock key that tells recovery batch b has a live flusher. */
void
fbatch_lock_key(long long b, char *out, size_t sz)
{
	key_flush_lock(out, sz, b);
}

int
fbatch_prune(struct app *a, long long now, int n)
{
	struct dbq *s = dbq_stmt(a->db, STMT_FLUSH_PRUNE);

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, now - FBATCH_KEEP_MS);
	dbq_bind_int(s, 2, n);
	return dbq_write(a->db, s);
}

long long
fbatch_applied_max(struct app *a)
{
	struct dbq *s = dbq_stmt(a->db, STMT_FLUSH_MAX);
	long long m = 0;
	int rc;

	if (s == NULL)
		return -1;
	if ((rc = dbq_step(s)) == DBQ_ROW)
		m = dbq_i64(s, 0);
	dbq_done(s);
	return rc == DBQ_ROW || rc == DBQ_DONE ? m : -1;
}

#define EPOCH		"redis_epoch"
#define EPOCH_LOCK	"setting:" EPOCH

int
fbatch_epoch(struct db *db, long long *epoch)
{
	return dbq_setting_read(db, EPOCH, 0, epoch);
}

int
fbatch_epoch_holds(struct db *db, long long epoch)
{
	long long now;

	if (dbq_lock_key(db, EPOCH_LOCK, 1) == -1 ||
	    dbq_setting_read(db, EPOCH, 0, &now) == -1)
		return -1;
	return now == epoch;
}

int
fbatch_epoch_move(struct db *db)
{
	long long now;

	if (db_begin(db) == -1)
		return -1;
	if (dbq_lock_key(db, EPOCH_LOCK, 0) == -1 ||
	    dbq_setting_read(db, EPOCH, 0, &now) == -1 ||
	    dbq_setting_put(db, EPOCH, now + 1) == -1 || db_commit(db) == -1) {
		db_rollback(db);
		return -1;
	}
	return 0;
}

long long
fbatch_reserve(struct app *a, long long applied, int n, long long *epoch)
{
	long long next;

	/* two flushers (the worker's, a run's, tallyctl's) never take the
	 * same ids: the setting is read and written alone */
	if (db_begin(a->db) == -1)
		return -1;
	if (dbq_lock_key(a->db, "setting:flush_next_batch", 0) == -1) {
		db_rollback(a->db);
		return -1;
	}
	/* a failed read is no 0: the ids would go back and be handed out
	 * again (a batch under an applied id is acked away unapplied) */
	if (dbq_setting_read(a->db, "flush_next_batch", 0, &next) == -1 ||
	    dbq_setting_read(a->db, EPOCH, 0, epoch) == -1) {
		db_rollback(a->db);
		return -1;
	}
	if (next <= applied)
		next = applied + 1;
	if (dbq_setting_put(a->db, "flush_next_batch", next + n) == -1 ||
	    db_commit(a->db) == -1) {
		db_rollback(a->db);
		return -1;
	}
	return next;
}
