/* moved.c -- which counters moved while a reconciliation read them; see
 * moved.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/rnd.h"
#include "count/cname.h"
#include "count/moved.h"
#include "count/outbox.h"
#include "store/dbq.h"

#define MOVED_BACKLOG	(1 << 30)	/* backlog rows read: all */

/* KEYS: meta, seq.  ARGV: the run's token.  Watches the bucket (meta w:
 * from now on every delta bumps seq), -> { version, { field, changes,
 * ... } }, read in the same script: a take bumps the one and drops the
 * other at once. */
static struct rds_script before_lua = { .src =
	"#!lua\n"
	"redis.call('HSET', KEYS[1], 'w', ARGV[1])\n"
	"return { redis.call('HGET', KEYS[1], 'v') or '0',\n"
	"  redis.call('HGETALL', KEYS[2]) }\n" };

/* KEYS: meta.  ARGV: the run's token.  Unwatches the bucket if the watch
 * is still this run's. */
static struct rds_script unwatch_lua = { .src =
	"#!lua\n"
	"if redis.call('HGET', KEYS[1], 'w') == ARGV[1] then\n"
	"  redis.call('HDEL', KEYS[1], 'w') end\n"
	"return 1\n" };

/* Queues script on every bucket, with KEYS meta (and seq: nkeys 2) and
 * ARGV the run's token; how many were queued (all, unless Redis failed). */
static int
queue_buckets(struct app *a, struct rds_script *script, int nkeys,
    const char *token)
{
	struct cname_keys k;
	const char *keys[2] = { k.meta, k.seq }, *args[1] = { token };
	int b;

	for (b = 0; b < CSTORE_BUCKETS; b++) {
		cname_bucket_keys(b, &k);
		if (rds_append_eval(a->rds, script, nkeys, keys, 1,
		    args) == -1)
			break;
	}
	return b;
}

static int
seq_cmp(const void *x, const void *y)
{
	const struct moved_seq *a = x, *b = y;

	if (a->bucket != b->bucket)
		return a->bucket < b->bucket ? -1 : 1;
	return strcmp(a->field, b->field);
}

static int
keyid_cmp(const void *x, const void *y)
{
	const struct moved_keyid *a = x, *b = y;

	if (a->k1 != b->k1)
		return a->k1 < b->k1 ? -1 : 1;
	return (a->k2 > b->k2) - (a->k2 < b->k2);
}

/* A field too long to keep leaves its bucket without a version: every
 * key of it counts as moved (a state's version is never ""). */
static void
seq_push(struct moved *m, size_t *cap, int bucket, const char *field,
    const char *count)
{
	struct moved_seq *e;

	if (strlen(field) >= sizeof(e->field) ||
	    strlen(count) >= sizeof(e->count)) {
		m->ver[bucket][0] = '\0';
		return;
	}
	if (m->nseq == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		m->seq = xrealloc(m->seq, *cap * sizeof(*m->seq));
	}
	e = &m->seq[m->nseq++];
	e->bucket = bucket;
	memcpy(e->field, field, strlen(field) + 1);
	memcpy(e->count, count, strlen(count) + 1);
}

int
moved_begin(struct app *a, enum family fam, struct moved *m)
{
	rds_reply *rep, *f;
	size_t cap = 0, i;
	int b, queued;

	memset(m, 0, sizeof(*m));
	m->fam = fam;
	/* another host's run beside this one must not share it */
	snprintf(m->token, sizeof(m->token), "%d.%lld.%lld", (int)getpid(),
	    clock_mono_us(), rnd_below(1000000000000LL));
	m->ver = xcalloc(CSTORE_BUCKETS, sizeof(*m->ver));
	queued = queue_buckets(a, &before_lua, 2, m->token);
	for (b = 0; b < queued; b++) {
		if (rds_get_reply(a->rds, &rep) == -1) {
			if (b + 1 < queued)
				rds_collect(a->rds, queued - b - 1);
			return -1;
		}
		/* not understood: the bucket is left without a version */
		if (rds_type(rep) == RDS_ARRAY && rds_n(rep) == 2 &&
		    rds_type(rds_at(rep, 0)) == RDS_STRING &&
		    rds_type(f = rds_at(rep, 1)) == RDS_ARRAY) {
			snprintf(m->ver[b], sizeof(m->ver[b]), "%s",
			    rds_str(rds_at(rep, 0)));
			for (i = 0; i + 1 < rds_n(f); i += 2)
				seq_push(m, &cap, b, rds_str(rds_at(f, i)),
				    rds_str(rds_at(f, i + 1)));
		}
		rds_free(rep);
	}
	if (queued != CSTORE_BUCKETS)
		return -1;
	if (m->nseq > 1)
		qsort(m->seq, m->nseq, sizeof(*m->seq), seq_cmp);
	return 0;
}

struct gather {
	struct moved	*m;
	size_t		 cap;
};

static void
key_push(struct gather *g, long long k1, long long k2)
{
	struct moved *m = g->m;

	if (m->nkeys == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 64;
		m->keys = xrealloc(m->keys, g->cap * sizeof(*m->keys));
	}
	m->keys[m->nkeys].k1 = k1;
	m->keys[m->nkeys].k2 = k2;
	m->nkeys++;
}

static void
outbox_delta(const struct delta *d, void *arg)
{
	struct gather *g = arg;

	if (d->fam == g->m->fam)
		key_push(g, d->k1, d->k2);
}

int
moved_pending(struct app *a, struct moved *m)
{
	struct gather g = { m, 0 };
	struct dbq *s;
	long long k1, k2;
	int rc;

	if (outbox_each(a, outbox_delta, &g) == -1)
		return -1;
	if ((s = dbq_stmt(a->db, STMT_BACKLOG_BATCH)) == NULL)
		return -1;
	dbq_bind_int(s, 1, MOVED_BACKLOG);
	while ((rc = dbq_step(s)) == DBQ_ROW) {
		k2 = 0;
		if (counters_family(dbq_text(s, 0)) == m->fam &&
		    dbq_text(s, 1) != NULL &&
		    sscanf(dbq_text(s, 1), "%lld:%lld", &k1, &k2) >= 1)
			key_push(&g, k1, k2);
	}
	dbq_done(s);
	if (rc != DBQ_DONE)
		return -1;
	if (m->nkeys > 1)
		qsort(m->keys, m->nkeys, sizeof(*m->keys), keyid_cmp);
	return 0;
}

int
moved_key(const struct moved *m, const struct rec_entry *e,
    const struct rstate *st)
{
	struct delta dl = { m->fam, e->k1, e->k2, 0, e->owner };
	struct moved_keyid id = { e->k1, e->k2 };
	struct moved_seq want, *was;
	struct cname_keys k;

	if (!st->ok || strcmp(st->watch, m->token) != 0)
		return 1;	/* not known, or changes went uncounted */
	if (m->nkeys > 0 && bsearch(&id, m->keys, m->nkeys, sizeof(id),
	    keyid_cmp) != NULL)
		return 1;	/* in flight, or in the backlog */
	if (st->batch[0] != '\0' && st->fly != 0)
		return 1;	/* SQLite may apply it between the reads */
	want.bucket = cname_bucket(&dl);
	if (strcmp(m->ver[want.bucket], st->ver) != 0)
		return 1;	/* a take or an ack */
	cname_keys(&dl, &k);
	if (strlen(k.pfield) >= sizeof(want.field))
		return 1;
	memcpy(want.field, k.pfield, strlen(k.pfield) + 1);
	was = m->nseq > 0 ? bsearch(&want, m->seq, m->nseq, sizeof(want),
	    seq_cmp) : NULL;
	return strcmp(was != NULL ? was->count : "", st->seq) != 0;
}

void
moved_end(struct app *a, const struct moved *m)
{
	int queued;

	if (m->token[0] == '\0')
		return;
	if ((queued = queue_buckets(a, &unwatch_lua, 1, m->token)) > 0)
		rds_collect(a->rds, queued);
}

void
moved_free(struct moved *m)
{
	free(m->ver);
	free(m->seq);
	free(m->keys);
	memset(m, 0, sizeof(*m));
}
