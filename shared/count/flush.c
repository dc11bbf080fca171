/* flush.c -- the coalescing flusher; see flush.h.
 *
 * One file: why this file of over 500 lines is one concept -- a batch's
 * take, its apply thread and its end (the acks, or its recovery when
 * refused as stale) share struct batch and the overlap of one batch's
 * SQLite part with the next one's take (prev_ending()); a reader follows
 * a batch through its life without leaving the file. */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/valid.h"
#include "count/counters.h"
#include "count/cstore.h"
#include "count/fbatch.h"
#include "count/flush.h"
#include "count/outbox.h"
#include "count/recover.h"
#include "count/taken.h"
#include "store/dbq.h"

#define LOCK_MS		FBATCH_LOCK_MS

/* Queues one round: the lock's refresh, then per bucket of the
 * FLUSH_PIPE from `from` on the take (which answers with what it took):
 * with want (flush_all()), only for the buckets it names.  An empty
 * bucket's take was a script that found nothing, 1,024 a second while
 * anything at all was pending.  How many buckets, or -1. */
static int
send_round(struct app *a, const char *batch, const char *lkey, int from,
    const unsigned char *want)
{
	struct cname_keys k;
	const char *keys[4] = { k.pending, k.inflight, k.meta, k.seq };
	const char *args[1] = { batch };
	const char *cmd[3];
	int b, to = from + FLUSH_PIPE < CSTORE_BUCKETS ? from + FLUSH_PIPE :
	    CSTORE_BUCKETS;

	cmd[0] = "PEXPIRE";
	cmd[1] = lkey;
	cmd[2] = LOCK_MS;
	/* the take by SHA1: its source (1,024 times a flush) only once */
	cname_bucket_keys(from, &k);
	if (rds_script_ready(a->rds, &fbatch_take_lua, 4, keys) == -1 ||
	    rds_append_strs(a->rds, 3, cmd) == -1)
		return -1;
	for (b = from; b < to; b++) {
		if (want != NULL && !want[b])
			continue;
		cname_bucket_keys(b, &k);
		if (rds_append_eval(a->rds, &fbatch_take_lua, 4, keys, 1,
		    args) == -1)
			return -1;
	}
	return to - from;
}

/* Reads one round of n buckets from `from` into t (those of want, when
 * given: send_round()).  0, or -1 when Redis failed. */
static int
read_round(struct app *a, int from, int n, const unsigned char *want,
    struct taken *t)
{
	rds_reply *take;
	int i;

	if (rds_get_reply(a->rds, &take) == -1)	/* PEXPIRE */
		return -1;
	rds_free(take);
	for (i = 0; i < n; i++) {
		if (want != NULL && !want[from + i])
			continue;
		if (rds_get_reply(a->rds, &take) == -1)
			return -1;
		if (rds_type(take) == RDS_ARRAY)
			taken_add(t, from + i, take);
		else if (rds_type(take) == RDS_INTEGER &&
		    rds_int(take) == -2)
			t->fenced = 1;
		else if (rds_type(take) != RDS_INTEGER ||
		    rds_int(take) != 0) {	/* held, or an error: later */
			t->skipped++;
			if (rds_type(take) == RDS_ERROR)
				log_warn("flush take {c%d}: %s", from + i,
				    rds_str(take));
		}
		rds_free(take);
	}
	return 0;
}

/* One batch of flush_all(): taken from Redis on the calling thread,
 * applied to SQLite on a thread of its own while the next is taken. */
struct batch {
	struct app	*a;
	long long	 b;
	long long	 epoch;		/* Redis's, before the take (fbatch.h) */
	char		 id[24], lkey[48];
	struct taken	 t;
	pthread_t	 th;
	int		 running;
	int		 finished;	/* its thread is done (atomic) */
	int		 rc;		/* of the SQLite part */
	int		 stale;		/* refused: Redis's epoch moved on (or
					   taken after one that was) */
	long long	 start_us;	/* monotonic: its thread started */
	long long	 cpu_us;	/* its thread's CPU */
	long long	 sort_ns;	/* its sort's time per item (or a guess) */
	long long	 round_us;	/* its last round's read (or prev's) */
	int		 round_items;	/* and how many items it brought */
	long long	 before;	/* counters of this flush's batches
					   before it */
};

#define APPLY_NS_GUESS	2000	/* an UPSERT's time before one is timed */
#define SORT_NS_GUESS	150	/* a sorted item's, before a sort is */
#define CUT_SLACK_US	300	/* a thread's start, a commit's end */

/* Whether prev's SQLite part (a thread) will be over by the time bt has
 * read the round on its way (as long as the last read took, with as many
 * items) and sorted what it holds (at the last sort's time per item):
 * prev's items left, at the pace it has applied so far.  A batch cut
 * only once prev was over left SQLite idle for that reading and sorting,
 * a sixth of the flush's time; a fixed guess of the time left (a round's
 * items and a thirtieth) still left it idle 3-12 ms before each of a
 * flush's first batches, which the first sorts outran. */
static int
prev_ending(const struct batch *prev, const struct batch *bt)
{
	long long done, left, pace_ns, need_us;

	if (prev == NULL || !prev->running)
		return 0;
	if (__atomic_load_n(&prev->finished, __ATOMIC_ACQUIRE))
		return 1;
	done = __atomic_load_n(&prev->t.applied, __ATOMIC_RELAXED);
	left = prev->t.nds - done;
	pace_ns = done > 0 ? (clock_mono_us() - prev->start_us) * 1000 / done :
	    APPLY_NS_GUESS;
	need_us = bt->round_us + CUT_SLACK_US +
	    (bt->t.nds + bt->round_items) * bt->sort_ns / 1000;
	return left * pace_ns / 1000 <= need_us;
}

static int fault_paused;	/* TALLY_FAULT_TAKE_MS: once a process */

/* Takes batch bt->b from bucket `from` on, while prev (if any) is
 * applied: rounds until it holds limit counters (0: one round), or fewer
 * once prev is about to be applied and bt holds enough to be worth a
 * transaction, so SQLite seldom waits for a take.  Enough is limit / 32,
 * or a FLUSH_GROW-th of what the flush applied before, when more: a
 * batch's commit writes every page its rows touched to the WAL, and a
 * bucket's counters lie all over the counters table, so once a batch
 * holds more counters than the table has pages each commit writes most
 * of the table.  Cut at a fixed size (~6,000 counters, as fast as the
 * take ran) a flush of 200,000 made 24-32 batches and 41-82 MB of WAL;
 * growing by a third, 12 batches and 20 MB, the SQLite thread's CPU
 * 300-340 -> 190-210 ms and the flush 380-475k -> 590-650k counters/s
 * (interleaved runs of the benchmark's flush).  A batch
 * that holds that much also stops FLUSH_TAIL buckets short of the last:
 * the last batch, small, leaves few acks after the last commit (a small
 * flush, the worker's every second, stays one batch after the first).
 * *next: where the next batch starts.  0, or -1 when Redis failed. */
static int
take_batch(struct app *a, struct batch *bt, int from, int limit,
    const struct batch *prev, const unsigned char *want, int *next)
{
	rds_reply *rep;
	long long t0, s0;
	int sent = from, got = from, n, m, had, enough = (limit + 31) / 32;

	bt->before = prev != NULL ? prev->before + prev->t.nds : 0;
	if (bt->before / FLUSH_GROW > enough)
		enough = (int)(bt->before / FLUSH_GROW);

	snprintf(bt->id, sizeof(bt->id), "%lld", bt->b);
	fbatch_lock_key(bt->b, bt->lkey, sizeof(bt->lkey));
	bt->sort_ns = prev != NULL ? prev->sort_ns : SORT_NS_GUESS;
	bt->round_us = prev != NULL ? prev->round_us : 0;
	bt->round_items = prev != NULL ? prev->round_items : 0;
	/* The lock tells recovery this batch has a live flusher. */
	if ((rep = rds_cmdv(a->rds, "SET", bt->lkey, "1", "PX", LOCK_MS,
	    NULL)) == NULL)
		return -1;
	rds_free(rep);
	if ((n = send_round(a, bt->id, bt->lkey, sent, want)) == -1)
		return -1;
	sent += n;
	while (got < sent) {
		/* the next round is on its way while this one is read */
		m = 0;
		if (sent < CSTORE_BUCKETS && bt->t.nds < limit &&
		    (sent != CSTORE_BUCKETS - FLUSH_TAIL ||
		    bt->t.nds < enough) &&
		    !(bt->t.nds + bt->round_items >= enough &&
		    prev_ending(prev, bt)) && !bt->t.fenced &&
		    (m = send_round(a, bt->id, bt->lkey, sent, want)) == -1)
			return -1;	/* the connection is gone */
		t0 = clock_mono_us();
		had = bt->t.nds;
		if (read_round(a, got, n, want, &bt->t) == -1) {
			/* a node failed: what the rounds left queued (a
			 * cluster's other nodes answered) is read and
			 * dropped, or recovery's next pipeline would read
			 * it as its own (rcl.h: rcl_drop_failed()) */
			(void)rds_settle(a->rds);
			return -1;
		}
		bt->round_us = clock_mono_us() - t0;
		bt->round_items = bt->t.nds - had;
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
	s0 = clock_mono_us();
	taken_sort(&bt->t);	/* here, off the SQLite thread's path */
	if (bt->t.nds >= 1024)	/* long enough to time */
		bt->sort_ns = (clock_mono_us() - s0) * 1000 / bt->t.nds;
	*next = sent;
	return 0;
}

/* The batch's one SQLite transaction. */
static void *
apply_batch(void *arg)
{
	struct batch *bt = arg;
	struct app *a = bt->a;
	struct timespec c0, c1;
	sigset_t alrm;

	/* db_begin()'s bounded wait is cut by SIGALRM: this thread takes it
	 * (the caller blocks it while we run). */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	bt->rc = 0;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	db_own(a->db);		/* the main thread does Redis only now */
	if (bt->t.nds > 0) {
		if (a->fault_delay_ms > 0)	/* tests: taken, not applied */
			usleep((useconds_t)a->fault_delay_ms * 1000);
		switch (taken_apply(a->db, bt->b, bt->epoch, &bt->t)) {
		case 1:
			break;
		case TAKEN_STALE:
			bt->stale = 1;
			/* FALLTHROUGH */
		default:	/* or a fresh id applied elsewhere */
			bt->rc = -1;
		}
	}
	db_disown(a->db);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	bt->cpu_us = (long long)(c1.tv_sec - c0.tv_sec) * 1000000 +
	    (c1.tv_nsec - c0.tv_nsec) / 1000;
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

/* The WAL's sync (FLUSH_SYNC), on a thread of its own. */
struct wal_sync {
	struct db	*db;
	pthread_t	 th;
	int		 rc;
};

static void *
sync_wal(void *arg)
{
	struct wal_sync *ws = arg;

	ws->rc = db_wal_sync(ws->db);
	return NULL;
}

/* Waits for bt's SQLite part; once applied, boards and acks (Redis
 * only: the boards take the values the UPSERTs returned, so this runs
 * while the next batch's thread has the database).  Drops the lock
 * either way (a failed batch is recovery's).  When sync (the last
 * batch), the WAL's sync runs beside the boards and acks: they need the
 * commit, not its sync (synchronous = NORMAL), and the sync was a tenth
 * of a flush after them.  0 or -1. */
static int
end_batch(struct app *a, struct batch *bt, int sync, struct flush_stats *st)
{
	struct wal_sync ws = { .db = a->db, .rc = 0 };
	rds_reply *rep;
	int rc = -1, syncing = 0;

	join_batch(bt);
	/* refused as stale: finished as recovery would, its views kept */
	if (bt->stale && recover_own(a, bt->b, &bt->t) == 0 && st != NULL)
		st->batches++;
	if (bt->rc == 0) {
		if (sync)
			syncing = pthread_create(&ws.th, NULL, sync_wal,
			    &ws) == 0;
		else	/* its commit on its way to disk: the last sync
			   waits for less */
			db_wal_writeback(a->db);
	}
	if (bt->rc == 0 && taken_settle(a, bt->id, &bt->t, 1, bt->lkey) == 0) {
		if (st != NULL) {
			st->batches += bt->t.nb > 0;
			st->buckets += bt->t.nb;
			st->counters += bt->t.nds;
			st->total += bt->t.total;
			st->skipped += bt->t.skipped;
			st->apply_us += bt->cpu_us;
		}
		rc = 0;
	}
	if ((rep = rds_cmdv(a->rds, "DEL", bt->lkey, NULL)) != NULL)
		rds_free(rep);
	taken_free(&bt->t);
	if (syncing) {
		pthread_join(ws.th, NULL);
		if (ws.rc == -1)
			log_warn("flush: the WAL's sync failed");
	}
	return rc;
}

/* FLUSH_FIELDS, or TALLY_FLUSH_FIELDS (tests: small batches, so a flush
 * runs many of them, each applied while the next is taken). */
static int
batch_fields(void)
{
	const char *v = getenv("TALLY_FLUSH_FIELDS");
	long long n;

	if (v != NULL && valid_int(v, 1, FLUSH_FIELDS, &n) == 0)
		return (int)n;
	return FLUSH_FIELDS;
}

/* The fields of every bucket's pending hash (WAIT_PENDING in kinds),
 * inflight hash (WAIT_INFLIGHT) or both: one pipelined HLEN a key.  The
 * sum, or -1; has, when given, says which buckets have any. */
#define WAIT_PENDING	1
#define WAIT_INFLIGHT	2
#define WAIT_BOTH	(WAIT_PENDING | WAIT_INFLIGHT)
static long long
waiting_fields(struct app *a, int kinds, unsigned char *has)
{
	char key[32];
	const char *cmd[2];
	rds_reply *rep;
	long long n = 0;
	int b, k, queued = 0;

	for (b = 0; b < CSTORE_BUCKETS; b++)
		for (k = 0; k < 2; k++) {
			if (!(kinds & (k ? WAIT_INFLIGHT : WAIT_PENDING)))
				continue;
			cname_bucket_key(b, k ? "inflight" : "pending", key,
			    sizeof(key));
			cmd[0] = "HLEN";
			cmd[1] = key;
			if (rds_append_strs(a->rds, 2, cmd) == -1)
				goto fail;
			queued++;
		}
	if (has != NULL)
		memset(has, 0, CSTORE_BUCKETS);
	for (b = 0; b < queued; b++) {
		if (rds_get_reply(a->rds, &rep) == -1)
			return -1;
		if (rds_type(rep) == RDS_INTEGER && rds_int(rep) > 0) {
			n += rds_int(rep);
			if (has != NULL)	/* the replies of a bucket */
				has[b / (kinds == WAIT_BOTH ? 2 : 1)] = 1;
		}
		rds_free(rep);
	}
	return n;
fail:
	rds_collect(a->rds, queued);
	return -1;
}

int
flush_all(struct app *a, int max_batches, int flags, struct flush_stats *st)
{
	struct batch bts[2], *cur, *prev = NULL;
	unsigned char has[CSTORE_BUCKETS];
	sigset_t alrm, old;
	long long done, first, pend, epoch;
	int i, from = 0, next = CSTORE_BUCKETS, rc = 0, stale = 0;

	/* a batch takes one bucket at least: ids for every batch this
	 * flush can make, reserved at once */
	if (max_batches > CSTORE_BUCKETS)
		max_batches = CSTORE_BUCKETS;
	/* Nothing pending, nothing to reserve: the reservation is a write,
	 * and any write makes every other process's SQLite drop the pages
	 * it keeps (header).  A delta that comes just after is the next
	 * sweep's, as one that comes just after a take. */
	if ((pend = waiting_fields(a, WAIT_PENDING, has)) <= 0)
		return pend == 0 ? 0 : -1;
	if ((done = fbatch_applied_max(a)) < 0 ||
	    (first = fbatch_reserve(a, done, max_batches, &epoch)) < 0)
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
		cur->b = first + i;
		cur->epoch = epoch;
		/* the buckets the HLENs found pending only; "flush now"
		 * takes every one, and counts those another batch holds */
		if (take_batch(a, cur, from, i == 0 ? 0 : batch_fields(),
		    prev, flags & FLUSH_SYNC ? NULL : has, &next) == -1)
			cur->rc = -1;
		else if (cur->t.nds > 0)
			fault_point("flush-taken");
		if (prev != NULL)
			join_batch(prev);
		/* A batch whose predecessor failed is not applied (it is
		 * recovery's, as when the flusher dies). */
		if (cur->rc == 0 && (prev == NULL || prev->rc == 0)) {
			cur->start_us = clock_mono_us();
			if (pthread_create(&cur->th, NULL, apply_batch,
			    cur) == 0)
				cur->running = 1;
			else
				apply_batch(cur);	/* no thread: here */
		} else {
			/* taken after a batch refused as stale: what it took
			 * may be lost with Redis too (recover_own()) */
			cur->stale = cur->rc == 0 && prev->stale;
			cur->rc = -1;
		}
		/* The previous batch's boards and acks while this one is
		 * applied. */
		stale |= prev != NULL && prev->stale;
		if (prev != NULL && end_batch(a, prev, 0, st) == -1)
			rc = -1;
		prev = cur;
		from = next;
		if (cur->rc == -1 || rc == -1) {
			rc = -1;
			break;
		}
	}
	if (prev != NULL) {
		join_batch(prev);
		stale |= prev->stale;
		if (end_batch(a, prev, (flags & FLUSH_SYNC) != 0, st) == -1)
			rc = -1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return stale ? FLUSH_STALE : rc;
}

/* Buckets whose inflight hash holds fields: another batch's, not yet
 * in SQLite and acked.  How many, or -1. */
static long long
held_buckets(struct app *a)
{
	unsigned char has[CSTORE_BUCKETS];
	long long n = 0;
	int b;

	if (waiting_fields(a, WAIT_INFLIGHT, has) < 0)
		return -1;
	for (b = 0; b < CSTORE_BUCKETS; b++)
		n += has[b];
	return n;
}

int
flush_now(struct app *a, long long wait_ms, struct flush_stats *st)
{
	long long end = clock_mono_ms() + wait_ms;
	int n, swept, drained = 0;

	for (;;) {
		/* What actions committed but did not get to Redis first;
		 * rows an open transaction may still precede are tried
		 * again each sweep (outbox_horizon()). */
		if (!drained) {
			if ((n = outbox_drain(a, 0)) == -1)
				return -1;
			drained = n != OUTBOX_WAITED;
		}
		st->skipped = 0;
		st->outbox_waits = !drained;
		/* a batch refused as stale (its Redis may be gone) is
		 * recovery's if Redis still holds it: the next sweep */
		if (recover_batches(a) < 0 ||
		    (swept = flush_all(a, INT_MAX, FLUSH_SYNC, st)) == -1)
			return -1;
		st->stale = swept == FLUSH_STALE;
		/* Nothing left pending is not all in SQLite: a batch that
		 * took every bucket it found (the worker's, live, or dead
		 * with its lock not yet expired) holds them in flight, and
		 * is waited for as a held bucket. */
		if (st->skipped == 0 && drained && swept == 0 &&
		    (st->skipped = held_buckets(a)) == 0)
			return 0;
		if (st->skipped < 0)
			return -1;
		if (clock_mono_ms() >= end)
			return 1;
		usleep(FLUSH_POLL_MS * 1000);
	}
}

long long
flush_pending(struct app *a)
{
	return waiting_fields(a, WAIT_BOTH, NULL);
}
