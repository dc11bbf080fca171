/* recover.c -- finishing the batches of dead flushers; see recover.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/log.h"
#include "count/cstore.h"
#include "count/fbatch.h"
#include "count/recover.h"
#include "count/taken.h"
#include "store/dbq.h"

/* Finishes batch b, which holds the n buckets bs: what Redis still holds
 * of it is applied (unless SQLite has b already), then acked.  mine: the
 * flusher's own batch, refused as stale (recover_own()), or NULL (a dead
 * flusher's).  0; TAKEN_STALE when Redis's epoch moved on again
 * meanwhile (nothing applied); -1 on an error. */
static int
finish_batch(struct app *a, long long b, const int *bs, int n,
    const struct taken *mine)
{
	char batch[24];
	struct cname_keys k;
	const char *keys[2] = { k.inflight, k.meta }, *args[1] = { batch };
	struct taken t;
	rds_reply *rep;
	long long epoch;
	int i, queued = 0, applied, now, rc = -1, bad = 0;

	memset(&t, 0, sizeof(t));
	snprintf(batch, sizeof(batch), "%lld", b);
	/* the epoch before Redis is read, as a flusher's before its take */
	if ((applied = dbq_batch_applied(a->db, batch)) == -1 ||
	    fbatch_epoch(a->db, &epoch) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		cname_bucket_keys(bs[i], &k);
		if (rds_append_eval(a->rds, &fbatch_held_lua, 2, keys, 1, args) == -1)
			break;
		queued++;
	}
	for (i = 0; i < queued; i++) {
		if (rds_get_reply(a->rds, &rep) == -1) {
			/* the rest of ours (a cluster's other nodes) */
			rds_collect(a->rds, queued - i - 1);
			goto out;
		}
		/* an error (a node loading, busy, down) is not "the bucket
		 * holds none of it": the batch is finished another time, or
		 * what that bucket holds would be acked unapplied */
		if (rds_type(rep) == RDS_ARRAY)
			taken_add(&t, bs[i], rep);
		else if (rds_type(rep) != RDS_NIL)
			bad = 1;
		else if (mine != NULL)	/* lost with Redis: see recover.h */
			taken_add_unrecounted(&t, bs[i], mine);
		rds_free(rep);
	}
	if (queued != n || bad)
		goto out;
	if (!applied && t.nds > 0) {
		taken_sort(&t);
		if ((now = taken_apply(a->db, b, epoch, &t)) < 0) {
			rc = now;	/* failed, or stale: next time */
			goto out;
		}
		applied = now == 0;	/* 0: another flusher had it */
	}
	rc = taken_settle(a, batch, &t, !applied, NULL);
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
	rds_reply *rep;
	int b, queued = 0, bad = 0;

	for (b = 0; b < CSTORE_BUCKETS; b++) {
		cname_bucket_key(b, "meta", meta, sizeof(meta));
		cmd[0] = "HGET";
		cmd[1] = meta;
		cmd[2] = "b";
		if (rds_append_strs(a->rds, 3, cmd) == -1)
			break;
		queued++;
	}
	for (b = 0; b < queued; b++) {
		if (rds_get_reply(a->rds, &rep) == -1) {
			rds_collect(a->rds, queued - b - 1);
			return -1;
		}
		/* an error is no "no owner": a bucket of a dead batch
		 * left out would be found applied next time, and acked */
		bad |= rds_type(rep) == RDS_ERROR;
		owner[b] = rds_type(rep) == RDS_STRING ?
		    strtoll(rds_str(rep), NULL, 10) : 0;
		rds_free(rep);
	}
	return queued == CSTORE_BUCKETS && !bad ? 0 : -1;
}

/* Whether batch b's flusher lives (its lock): 1, 0, or -1. */
static int
batch_alive(struct app *a, long long b)
{
	char lkey[48];
	rds_reply *rep;
	int alive;

	fbatch_lock_key(b, lkey, sizeof(lkey));
	if ((rep = rds_cmdv(a->rds, "EXISTS", lkey, NULL)) == NULL)
		return -1;
	alive = rds_type(rep) != RDS_INTEGER || rds_int(rep) != 0;
	rds_free(rep);
	return alive;
}

/* Fences every bucket against batches up to b: their takes fail from
 * now on.  0 or -1. */
static int
fence_all(struct app *a, long long b)
{
	char meta[32], batch[24];
	const char *keys[1] = { meta }, *args[1] = { batch };
	rds_reply *rep;
	int i, queued = 0, rc = 0;

	snprintf(batch, sizeof(batch), "%lld", b);
	for (i = 0; i < CSTORE_BUCKETS; i++) {
		cname_bucket_key(i, "meta", meta, sizeof(meta));
		if (rds_append_eval(a->rds, &fbatch_fence_lua, 1, keys, 1, args) == -1)
			break;
		queued++;
	}
	for (i = 0; i < queued; i++) {
		if (rds_get_reply(a->rds, &rep) == -1) {
			rds_collect(a->rds, queued - i - 1);
			return -1;
		}
		if (rds_type(rep) == RDS_ERROR)
			rc = -1;
		rds_free(rep);
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
recover_batches(struct app *a)
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
		if (finish_batch(a, owner[b], bs, n, NULL) == 0)
			done++;
	}
out:
	free(owner);
	free(bs);
	return done;
}

int
recover_own(struct app *a, long long b, const struct taken *mine)
{
	int tries, rc = -1;

	/* the batch is held under its live lock: no one else finishes it */
	for (tries = 0; tries < 3; tries++)
		if ((rc = finish_batch(a, b, mine->buckets, mine->nb, mine)) !=
		    TAKEN_STALE)
			break;
	if (rc == 0)
		log_warn("flush %lld: Redis's epoch moved on while the batch "
		    "was taken: what Redis still holds of it applied now, of "
		    "the rest only its views (the repair run recounts the "
		    "others)", b);
	return rc == 0 ? 0 : -1;
}
