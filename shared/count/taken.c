/* taken.c -- what one flush batch took from Redis; see taken.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fault.h"
#include "base/log.h"
#include "count/counters.h"
#include "count/cstore.h"
#include "count/fbatch.h"
#include "count/lb.h"
#include "count/taken.h"
#include "store/dbq.h"

/* KEYS: inflight, meta.  ARGV: batch.  Drops what the batch holds. */
static struct rds_script ack_lua = { .src =
	"#!lua\n"
	"if redis.call('HGET', KEYS[2], 'b') ~= ARGV[1] then return 0 end\n"
	"redis.call('UNLINK', KEYS[1])\n"
	"redis.call('HDEL', KEYS[2], 'b')\n"
	"redis.call('HINCRBY', KEYS[2], 'v', 1)\n"
	"return 1\n" };

void
taken_free(struct taken *t)
{
	free(t->buckets);
	free(t->it);
	memset(t, 0, sizeof(*t));
}

/* Families in the order of their SQLite names. */
static int name_rank[FAM__MAX], ranked_names;

static void
rank_names(void)
{
	int i, j;

	ranked_names = 1;
	for (i = 0; i < FAM__MAX; i++)
		for (j = 0, name_rank[i] = 0; j < FAM__MAX; j++)
			if (strcmp(families[j].name, families[i].name) < 0)
				name_rank[i]++;
}

/* Sorting by the counters table's own order (name, key) lets SQLite walk
 * its B-tree forward instead of jumping about.  The sort runs on small
 * records: the name's rank and the key's first 7 bytes packed into one
 * number, the full key compared only on a tie. */
struct order {
	unsigned long long	 prefix;
	struct item		*it;
};

static int
order_cmp(const void *x, const void *y)
{
	const struct order *a = x, *b = y;

	if (a->prefix != b->prefix)
		return a->prefix < b->prefix ? -1 : 1;
	return strcmp(a->it->key, b->it->key);
}

static unsigned long long
prefix_of(const struct item *e)
{
	unsigned long long p = (unsigned long long)name_rank[e->d.fam] << 56;
	int i;

	for (i = 0; i < 7 && e->key[i] != '\0'; i++)
		p |= (unsigned long long)(unsigned char)e->key[i] <<
		    (48 - 8 * i);
	return p;
}

/* Adds bucket b's fields (an HGETALL reply) to t; how many. */
/* Appends counter d to t (its value unknown until its UPSERT). */
static void
push(struct taken *t, const struct delta *d)
{
	if (t->nds == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->it = xrealloc(t->it, (size_t)t->cap * sizeof(*t->it));
	}
	t->it[t->nds].d = *d;
	t->it[t->nds].val = -1;
	counters_key(d, t->it[t->nds].key, sizeof(t->it[0].key));
	t->nds++;
	t->total += d->d < 0 ? -d->d : d->d;
}

int
taken_add(struct taken *t, int b, const rds_reply *rep)
{
	struct delta d;
	size_t j;
	char *end;
	int n = 0;

	if (t->nb == t->bcap) {
		t->bcap = t->bcap ? 2 * t->bcap : 64;
		t->buckets = xrealloc(t->buckets, (size_t)t->bcap *
		    sizeof(*t->buckets));
	}
	t->buckets[t->nb++] = b;
	for (j = 0; rds_type(rep) == RDS_ARRAY && j + 1 < rds_n(rep);
	    j += 2) {
		if (cname_parse(rds_str(rds_at(rep, j)), rds_len(rds_at(rep, j)),
		    &d) == -1 || (cname_bucket(&d) != b &&
		    !cname_ownerless(&d))) {	/* ownerless: from before owners */
			log_warn("flush: skipping {c%d} %s", b,
			    rds_str(rds_at(rep, j)));
			continue;
		}
		d.d = strtoll(rds_str(rds_at(rep, j + 1)), &end, 10);
		if (*end != '\0' || d.d == 0)
			continue;
		push(t, &d);
		n++;
	}
	return n;
}

int
taken_add_unrecounted(struct taken *t, int b, const struct taken *from)
{
	const struct delta *d;
	int i, n = 0;

	for (i = 0; i < from->nds; i++) {
		d = &from->it[i].d;
		if (families[d->fam].recount != NO_RECOUNT ||
		    cname_bucket(d) != b)
			continue;
		push(t, d);
		n++;
	}
	return n;
}

#define RADIX_BITS	8
#define RADIX_PASSES	(64 / RADIX_BITS)
#define RADIX_SIZE	(1 << RADIX_BITS)

/* The p-th digit (from the least significant) of a prefix. */
static inline unsigned
digit(unsigned long long prefix, int p)
{
	return (unsigned)(prefix >> (p * RADIX_BITS)) & (RADIX_SIZE - 1);
}

/* Sorts v[0..n) by prefix: a least-significant-digit radix sort, a
 * byte a pass, every pass's counts taken in one read first; a pass whose
 * digit is the same everywhere (a key's NULs, the name's rank) is
 * skipped.  On 100,000 counters it took a tenth of qsort()'s time, which
 * sat between two SQLite transactions.  Bytes, not 16-bit digits: with
 * 65,536 destinations a pass wrote each record to its own cache line
 * (an item a cache miss, 6 of the 9 ms a 65,000-counter batch's sort
 * took); 256 stay in the cache. */
static void
radix_sort(struct order *v, size_t n)
{
	size_t (*cnt)[RADIX_SIZE] = xcalloc(RADIX_PASSES, sizeof(*cnt));
	struct order *tmp = xmalloc((n + 1) * sizeof(*tmp)), *src = v, *dst = tmp,
	    *sw;
	size_t i, sum, c;
	int p, d;

	for (i = 0; i < n; i++)
		for (p = 0; p < RADIX_PASSES; p++)
			cnt[p][digit(v[i].prefix, p)]++;
	for (p = 0; p < RADIX_PASSES; p++) {
		if (cnt[p][digit(src[0].prefix, p)] == n)
			continue;	/* one digit: nothing moves */
		for (d = 0, sum = 0; d < RADIX_SIZE; d++) {
			c = cnt[p][d];
			cnt[p][d] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[cnt[p][digit(src[i].prefix, p)]++] = src[i];
		sw = src;
		src = dst;
		dst = sw;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	free(cnt);
}

#define SORT_AHEAD	16	/* items prefetched ahead of the gather */

/* Puts what t took in the table's order, once all is in.  The items
 * themselves move, so that the UPSERTs read them front to back: read
 * through a sorted index, every item was a cache miss on SQLite's path. */
void
taken_sort(struct taken *t)
{
	struct order *ord;
	struct item *it;
	int i, j;

	if (!ranked_names)
		rank_names();
	if (t->nds < 2)
		return;
	ord = xmalloc((size_t)t->nds * sizeof(*ord));
	for (i = 0; i < t->nds; i++) {
		ord[i].prefix = prefix_of(&t->it[i]);
		ord[i].it = &t->it[i];
	}
	radix_sort(ord, (size_t)t->nds);
	/* Keys that share their first 7 bytes: by the whole key. */
	for (i = 0; i < t->nds; i = j) {
		for (j = i + 1; j < t->nds && ord[j].prefix == ord[i].prefix;
		    j++)
			;
		if (j - i > 1)
			qsort(ord + i, (size_t)(j - i), sizeof(*ord),
			    order_cmp);
	}
	/* A gather from all over t->it: the items a few places ahead are
	 * asked for while this one is copied, or each read waits for memory
	 * in turn. */
	it = xmalloc((size_t)t->nds * sizeof(*it));
	for (i = 0; i < t->nds; i++) {
		if (i + SORT_AHEAD < t->nds) {
			__builtin_prefetch(ord[i + SORT_AHEAD].it);
			__builtin_prefetch((char *)ord[i + SORT_AHEAD].it + 64);
		}
		it[i] = *ord[i].it;
	}
	free(ord);
	free(t->it);
	t->it = it;
	t->cap = t->nds;
}

/* STMT_COUNTER_ADD_MANY: STMT_COUNTER_ADD_PLAIN with UPSERT_ROWS rows.
 * SQLite's cost per statement (step, reset, opening the cursor) is most
 * of a one-row UPSERT's; in one statement of 64 sorted rows the flusher
 * writes twice the rows a second (measured: ~1,000,000 -> ~1,900,000 new
 * rows, ~700,000 -> ~1,100,000 updates). */
#define UPSERT_ROWS	COUNTER_ADD_ROWS

/* Whether the n items from i on all go without a returned value, each
 * its own row: a counter taken twice (its field before and after owners
 * were kept in the key, an upgrade's leftover), sorted next to itself,
 * goes one row at a time -- PostgreSQL refuses an INSERT ... ON CONFLICT
 * that would update one row twice, and the batch failed for good. */
static int
plain_run(const struct taken *t, int i, int n)
{
	int j;

	if (i + n > t->nds)
		return 0;
	for (j = i; j < i + n; j++)
		if (lb_ranked(t->it[j].d.fam) || (j > i &&
		    t->it[j].d.fam == t->it[j - 1].d.fam &&
		    strcmp(t->it[j].key, t->it[j - 1].key) == 0))
			return 0;
	return 1;
}

/* UPSERTs what t took, in the table's order, inside the batch's
 * transaction: UPSERT_ROWS at a time where no leaderboard needs the
 * value back, else one at a time with it returned. */
static int
upsert(struct db *db, struct taken *t)
{
	struct item *e;
	struct dbq *s, *many = NULL;
	int i, j, rc = DBQ_DONE, ranked;

	/* NULL when it cannot be prepared: the one-row statement does all */
	if (t->nds >= UPSERT_ROWS)
		many = dbq_stmt(db, STMT_COUNTER_ADD_MANY);
	for (i = 0; i < t->nds && rc == DBQ_DONE; ) {
		if (many != NULL && plain_run(t, i, UPSERT_ROWS)) {
			for (j = 0; j < UPSERT_ROWS; j++) {
				e = &t->it[i + j];
				dbq_bind_text(many, 3 * j + 1,
				    families[e->d.fam].name, -1);
				dbq_bind_text(many, 3 * j + 2, e->key, -1);
				dbq_bind_i64(many, 3 * j + 3, e->d.d);
			}
			rc = dbq_step(many);
			dbq_reset(many);
			i += UPSERT_ROWS;
			__atomic_store_n(&t->applied, i, __ATOMIC_RELAXED);
			continue;
		}
		e = &t->it[i++];
		ranked = lb_ranked(e->d.fam);
		if ((s = dbq_stmt(db, ranked ? STMT_COUNTER_ADD :
		    STMT_COUNTER_ADD_PLAIN)) == NULL) {
			rc = DBQ_ERR;
			break;
		}
		dbq_bind_text(s, 1, families[e->d.fam].name, -1);
		dbq_bind_text(s, 2, e->key, -1);
		dbq_bind_i64(s, 3, e->d.d);
		if ((rc = dbq_step(s)) == DBQ_ROW) {
			e->val = dbq_i64(s, 0);
			rc = dbq_step(s);
		}
		dbq_done(s);
		__atomic_store_n(&t->applied, i, __ATOMIC_RELAXED);
	}
	dbq_done(many);
	return rc == DBQ_DONE ? 0 : -1;
}

/* Records batch b in flushes, last in its transaction: 1 recorded, 0
 * when it was there already (applied by another flusher), -1. */
static int
record(struct db *db, long long b, const struct taken *t)
{
	struct dbq *s = dbq_stmt(db, STMT_FLUSH_RECORD);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, b);
	dbq_bind_i64(s, 2, clock_wall_ms());
	dbq_bind_int(s, 3, t->nds);
	dbq_bind_i64(s, 4, t->total);
	rc = dbq_step(s);
	dbq_done(s);
	if (rc != DBQ_DONE)
		return -1;
	return dbq_changes(db) == 1;
}

/* Batch b's one SQLite transaction: t's UPSERTs and its flushes row.
 * 1 applied now, 0 when another flusher had applied it (rolled back),
 * -1 on error (logged, rolled back). */
int
taken_apply(struct db *db, long long b, long long epoch, struct taken *t)
{
	int rc, same = -1;

	if (db_begin(db) == -1 ||
	    (same = fbatch_epoch_holds(db, epoch)) != 1 ||
	    upsert(db, t) == -1 || (rc = record(db, b, t)) == -1) {
		if (same == 0)
			log_warn("flush %lld: Redis's epoch moved on since "
			    "the batch was taken (Redis may have lost its "
			    "data): not applied as taken", b);
		else
			log_err("flush %lld: %s", b, dbq_errmsg(db));
		db_rollback(db);
		return same == 0 ? TAKEN_STALE : -1;
	}
	if (rc == 0) {
		db_rollback(db);
		return 0;
	}
	return db_commit(db) == -1 ? -1 : 1;
}

/* Acks every bucket of t for batch b, pipelined; 0 or -1. */
static int
ack_all(struct app *a, const char *batch, const struct taken *t)
{
	struct cname_keys k;
	const char *keys[2] = { k.inflight, k.meta }, *args[1] = { batch };
	int i, queued = 0;

	for (i = 0; i < t->nb; i++) {
		cname_bucket_keys(t->buckets[i], &k);
		if (rds_append_eval(a->rds, &ack_lua, 2, keys, 1, args) == -1)
			break;
		queued++;
	}
	if (rds_collect(a->rds, queued) != 0 || i != t->nb)
		return -1;
	return 0;
}

/* 1 while the batch lock lkey holds (renewed for its lifetime), 0 when
 * it lapsed or Redis did not say. */
static int
lock_held(struct app *a, const char *lkey)
{
	rds_reply *rep = rds_cmdv(a->rds, "PEXPIRE", lkey, FBATCH_LOCK_MS,
	    NULL);
	int held = rep != NULL && rds_type(rep) == RDS_INTEGER &&
	    rds_int(rep) == 1;

	if (rep != NULL)
		rds_free(rep);
	return held;
}

/* After the commit: boards, then the acks. */
int
taken_settle(struct app *a, const char *batch, struct taken *t,
    int have_vals, const char *lkey)
{
	struct delta *ds = xcalloc((size_t)t->nds + 1, sizeof(*ds));
	long long *vals = xcalloc((size_t)t->nds + 1, sizeof(*vals));
	int i, n = 0;

	fault_point("flush-ack");	/* committed, not yet acked */
	/* Leaderboards follow the durable values (best effort: a board
	 * that misses one is repaired by its rebuild or the next batch). */
	for (i = 0; i < t->nds; i++)
		if (lb_ranked(t->it[i].d.fam)) {
			ds[n] = t->it[i].d;
			vals[n++] = t->it[i].val;
		}
	if (n > 0 && lkey != NULL && lock_held(a, lkey) == 0)
		lb_invalidate(a);	/* taken.h: its values may be old */
	else if (n > 0)
		lb_update(a, ds, have_vals ? vals : NULL, n);
	free(ds);
	free(vals);
	return ack_all(a, batch, t);
}
