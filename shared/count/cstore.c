/* cstore.c -- live counters and pending deltas in Redis; see cstore.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/log.h"
#include "count/ckeep.h"
#include "count/cstore.h"
#include "store/dbq.h"
#include "store/key.h"

/* KEYS: live, pending, inflight, meta.  ARGV: field, pending field,
 * version, base, add the inflight part (1/0).
 * -> the live value, or nil when a take or ack touched the bucket. */
static struct rds_script load_lua = { .src =
	"#!lua\n"
	"if (redis.call('HGET', KEYS[4], 'v') or '0') ~= ARGV[3] then\n"
	"  return false end\n"
	"local live = redis.call('HGET', KEYS[1], ARGV[1])\n"
	"if live then return tonumber(live) end\n"
	"local v = tonumber(ARGV[4]) +\n"
	"  tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0')\n"
	"if ARGV[5] == '1' then\n"
	"  v = v + tonumber(redis.call('HGET', KEYS[3], ARGV[2]) or '0') end\n"
	"redis.call('HSET', KEYS[1], ARGV[1], v)\n"
	"return v\n" };

/* The same value without the live one, stored nowhere (flags=no-writes:
 * a server that refuses writes runs it): what load_lua would store, but
 * for the backlog a settle's correction already holds.  KEYS as
 * load_lua's, and the bucket's settled hash (settle.c: pending field ->
 * the version of the backlog row whose delta its correction put in
 * pending, until the row is deleted).  ARGV as load_lua's, and the
 * backlog row's delta and version ("": none).  -> the value, or nil (a
 * flush touched the bucket). */
static struct rds_script value_lua = { .src =
	"#!lua flags=no-writes\n"
	"if (redis.call('HGET', KEYS[4], 'v') or '0') ~= ARGV[3] then\n"
	"  return false end\n"
	"local v = tonumber(ARGV[4]) +\n"
	"  tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0')\n"
	"if ARGV[5] == '1' then\n"
	"  v = v + tonumber(redis.call('HGET', KEYS[3], ARGV[2]) or '0') end\n"
	"if ARGV[7] ~= '' and redis.call('HGET', KEYS[5], ARGV[2]) == ARGV[7] then\n"
	"  v = v - tonumber(ARGV[6]) end\n"
	"return v\n" };

int
cstore_backlog(struct app *a, const struct delta *ds, int n)
{
	struct dbq *s;
	char key[48];
	int i;

	for (i = 0; i < n; i++) {
		if ((s = dbq_stmt(a->db, STMT_BACKLOG_ADD)) == NULL)
			return -1;
		counters_key(&ds[i], key, sizeof(key));
		dbq_bind_text(s, 1, families[ds[i].fam].name, -1);
		dbq_bind_text_copy(s, 2, key, -1);
		dbq_bind_i64(s, 3, ds[i].d);
		dbq_bind_i64(s, 4, clock_wall_us());
		if (dbq_step(s) != DBQ_DONE) {
			log_err("counter backlog: %s", dbq_errmsg(a->db));
			dbq_done(s);
			return -1;
		}
		dbq_done(s);
	}
	return 0;
}

/* One counter's value by statement st (family, key): 0 when absent;
 * STMT_COUNTER_GET the durable value, STMT_BACKLOG_GET what waits in
 * the backlog (Redis was down), and then, when ver is not NULL, the
 * row's version into *ver (-1: no row).
 * 0, or -1 on a SQLite error (*v then 0, not a value). */
static int
counter_row(struct db *db, enum stmt st, const struct delta *d,
    long long *v, long long *ver)
{
	struct dbq *s = dbq_stmt(db, st);
	char key[48];
	int rc;

	*v = 0;
	if (ver != NULL)
		*ver = -1;
	if (s == NULL)
		return -1;
	counters_key(d, key, sizeof(key));
	dbq_bind_text(s, 1, families[d->fam].name, -1);
	dbq_bind_text_copy(s, 2, key, -1);
	if ((rc = dbq_step(s)) == DBQ_ROW) {
		*v = dbq_i64(s, 0);
		if (ver != NULL)
			*ver = dbq_i64(s, 1);
	}
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : 0;	/* after an error *v is still 0 */
}

int
cstore_durable(struct db *db, const struct delta *d, long long *v)
{
	return counter_row(db, STMT_COUNTER_GET, d, v, NULL);
}

int
cstore_backlog_get(struct db *db, const struct delta *d, long long *delta,
    long long *ver)
{
	return counter_row(db, STMT_BACKLOG_GET, d, delta, ver);
}

/* A counter Redis does not hold yet, being loaded (load_all()). */
struct load {
	int			 i;		/* its index in the caller's */
	struct cname_keys	 k;
	char			 ver[24];	/* its bucket's meta: v */
	char			 batch[24];	/* b ("": none) */
	char			 base[24];	/* durable + backlog */
	char			 back[24];	/* the backlog's delta */
	char			 bver[24];	/* its row's version ("": none) */
	int			 applied;	/* batch applied in SQLite */
	int			 done;
};

/* Reads each bucket's meta (version, batch holding inflight) for the
 * loads not done, one HMGET per bucket in one round trip: 0, or -1 when
 * Redis failed. */
static int
load_metas(struct app *a, struct load *ls, int n)
{
	rds_reply *rep;
	int i, j, queued = 0, rc = 0;
	int *first = xcalloc((size_t)n + 1, sizeof(*first));

	for (i = 0; i < n; i++) {
		first[i] = -1;
		if (ls[i].done)
			continue;
		for (j = 0; j < i && first[i] == -1; j++)
			if (!ls[j].done && first[j] == j &&
			    strcmp(ls[j].k.meta, ls[i].k.meta) == 0)
				first[i] = j;
		if (first[i] != -1)
			continue;
		first[i] = i;
		if (rds_append_strs(a->rds, 4, (const char *[]){ "HMGET",
		    ls[i].k.meta, "v", "b" }) == -1) {
			rc = -1;
			break;
		}
		queued++;
	}
	for (i = 0; i < n && queued > 0; i++) {
		if (ls[i].done || first[i] != i)
			continue;
		queued--;
		if (rds_get_reply(a->rds, &rep) == -1) {
			rc = -1;
			break;
		}
		if (rds_type(rep) != RDS_ARRAY || rds_n(rep) != 2)
			rc = -1;
		else {
			snprintf(ls[i].ver, sizeof(ls[i].ver), "%s",
			    rds_type(rds_at(rep, 0)) == RDS_STRING ?
			    rds_str(rds_at(rep, 0)) : "0");
			snprintf(ls[i].batch, sizeof(ls[i].batch), "%s",
			    rds_type(rds_at(rep, 1)) == RDS_STRING ?
			    rds_str(rds_at(rep, 1)) : "");
		}
		rds_free(rep);
	}
	(void)rds_collect(a->rds, queued);	/* after a failure: the rest */
	for (i = 0; rc == 0 && i < n; i++)
		if (!ls[i].done && first[i] != i) {
			memcpy(ls[i].ver, ls[first[i]].ver, sizeof(ls[i].ver));
			memcpy(ls[i].batch, ls[first[i]].batch,
			    sizeof(ls[i].batch));
		}
	free(first);
	return rc;
}

/* In one SQLite read snapshot, for each load not done: the durable
 * value plus what waits in the backlog (base), and whether the flush
 * batch holding its bucket's inflight part is applied.  0, or -1 on a
 * SQLite error. */
static int
load_bases(struct app *a, const struct delta *ds, struct load *ls, int n)
{
	struct db *db = a->db;
	int i, j, err = 0, own = !dbq_in_txn(db);
	long long base, back, bver;

	/* One read transaction: a batch that commits between the reads
	 * would otherwise be counted twice or not at all. */
	if (own && db_snapshot_begin(db) == -1)
		return -1;
	for (i = 0; i < n && !err; i++) {
		if (ls[i].done)
			continue;
		if (cstore_durable(db, &ds[ls[i].i], &base) == -1 ||
		    cstore_backlog_get(db, &ds[ls[i].i], &back, &bver) == -1) {
			err = 1;
			break;
		}
		snprintf(ls[i].base, sizeof(ls[i].base), "%lld", base + back);
		snprintf(ls[i].back, sizeof(ls[i].back), "%lld", back);
		if (bver < 0)
			ls[i].bver[0] = '\0';
		else
			snprintf(ls[i].bver, sizeof(ls[i].bver), "%lld", bver);
		ls[i].applied = 0;
		if (ls[i].batch[0] == '\0')
			continue;
		/* a batch is asked about once */
		for (j = 0; j < i; j++)
			if (!ls[j].done && strcmp(ls[j].batch, ls[i].batch) == 0)
				break;
		if (j < i)
			ls[i].applied = ls[j].applied;
		else if ((ls[i].applied = dbq_batch_applied(db, ls[i].batch)) ==
		    -1)
			err = 1;
	}
	if (own && db_snapshot_end(db, err) == -1)
		err = 1;
	return err ? -1 : 0;
}

/* Loads the counters Redis does not hold (out[i].ok == 0 of ds[0..n)):
 * each one's bucket version, then one SQLite snapshot of their durable
 * parts, then load_lua for each, every step for all of them at once (two
 * round trips, where each counter alone took two); a counter whose
 * bucket a flush touched meanwhile (the script refuses) goes round
 * again.  A correction that lands between the snapshot and the script
 * sets the live value itself (settle.c), which the script then returns:
 * the backlog it absorbed is not added again.  0, or -1 when Redis or
 * SQLite failed (the counters not loaded keep ok == 0). */
static int
load_all(struct app *a, const struct delta *ds, int n, struct count *out,
    int refusing)
{
	struct load *ls;
	rds_reply *rep;
	const char *keys[5], *args[7];
	int i, m = 0, left, tries, queued, rc = 0;

	for (i = 0; i < n; i++)
		m += !out[i].ok;
	if (m == 0)
		return 0;
	ls = xcalloc((size_t)m, sizeof(*ls));
	for (i = 0, m = 0; i < n; i++)
		if (!out[i].ok) {
			ls[m].i = i;
			cname_keys(&ds[i], &ls[m].k);
			m++;
		}
	for (tries = 0, left = m; left > 0 && tries < 5 && rc == 0; tries++) {
		/* a load refused (the refusal began after the send): the
		 * next try computes the value instead */
		if (tries > 0 && !refusing)
			refusing = rds_refusing(a->rds);
		if (load_metas(a, ls, m) == -1 ||
		    load_bases(a, ds, ls, m) == -1) {
			rc = -1;
			break;
		}
		for (i = 0, queued = 0; i < m; i++) {
			if (ls[i].done)
				continue;
			keys[0] = ls[i].k.live;
			keys[1] = ls[i].k.pending;
			keys[2] = ls[i].k.inflight;
			keys[3] = ls[i].k.meta;
			keys[4] = ls[i].k.settled;
			args[0] = ls[i].k.field;
			args[1] = ls[i].k.pfield;
			args[2] = ls[i].ver;
			args[3] = ls[i].base;
			args[4] = ls[i].batch[0] != '\0' && !ls[i].applied ?
			    "1" : "0";
			args[5] = ls[i].back;
			args[6] = ls[i].bver;
			/* value_lua's KEYS and ARGV are load_lua's and more */
			if (rds_append_eval(a->rds, refusing ? &value_lua :
			    &load_lua, refusing ? 5 : 4, keys, refusing ? 7 : 5,
			    args) == -1) {
				rc = -1;
				break;
			}
			queued++;
		}
		for (i = 0; i < m && queued > 0; i++) {
			if (ls[i].done)
				continue;
			queued--;
			if (rds_get_reply(a->rds, &rep) == -1) {
				rc = -1;
				break;
			}
			if (rds_type(rep) == RDS_INTEGER) {
				out[ls[i].i].v = rds_int(rep);
				out[ls[i].i].ok = 1;
				ls[i].done = 1;
				left--;
			}
			rds_free(rep);	/* nil: a flush touched it: again */
		}
	}
	free(ls);
	return rc == 0 && left == 0 ? 0 : -1;
}

void
cstore_send_kept(struct app *a, const struct delta *ds, int n,
    unsigned keep, struct cstore_q *q)
{
	const char **argv = xcalloc((size_t)n + 2, sizeof(*argv));
	unsigned long long *hk;
	int i, j, argc, kept;

	memset(q, 0, sizeof(*q));
	q->ds = ds;
	q->n = n;
	q->rd = app_reader(a);
	q->refusing = rds_refusing(a->rds);
	q->keep = q->rd == a->rds && !rds_is_cluster(a->rds) &&
	    !q->refusing ? keep : 0;
	q->gen = rds_gen(a->rds);
	q->epoch = ckeep_epoch();
	q->hash = xcalloc((size_t)n + 1, sizeof(*q->hash));
	q->field = xcalloc((size_t)n + 1, sizeof(*q->field));
	q->grp = xcalloc((size_t)n + 1, sizeof(*q->grp));
	q->hv = xcalloc((size_t)n + 1, sizeof(*q->hv));
	q->st = xcalloc((size_t)n + 1, sizeof(*q->st));
	hk = xcalloc((size_t)n + 1, sizeof(*hk));
	for (i = 0; i < n; i++)
		cname_of(&ds[i], q->hash[i], sizeof(q->hash[i]),
		    q->field[i], sizeof(q->field[i]));
	/* One HMGET per live hash (a post's four counters are one command,
	 * not four): grp[i] is the first counter of i's hash.  An object's
	 * counters usually come together: the previous one's hash first,
	 * else those before, by their ckeep_hash() (hk) first. */
	for (i = 0; i < n; i++) {
		if (i > 0 && strcmp(q->hash[q->grp[i - 1]], q->hash[i]) == 0) {
			q->grp[i] = q->grp[i - 1];
			continue;
		}
		hk[i] = ckeep_hash(q->hash[i]);
		for (q->grp[i] = i, j = 0; j < i; j++)
			if (q->grp[j] == j && hk[j] == hk[i] &&
			    strcmp(q->hash[j], q->hash[i]) == 0) {
				q->grp[i] = j;
				break;
			}
	}
	/* The kept values' memory asked for at once, every hash's slots,
	 * then every counter's: each lookup waited for two misses. */
	if ((q->keep & CKEEP_READ) && !q->refusing) {
		for (i = 0; i < n; i++)
			if (q->grp[i] == i)
				ckeep_prefetch(hk[i]);
		for (i = 0; i < n; i++)
			ckeep_prefetch_field(hk[q->grp[i]], q->field[i]);
	}
	/* a server that refuses writes: its live values may be behind the
	 * backlog, each one is computed in cstore_recv() */
	for (i = 0; i < n && !q->down && !q->refusing; i++) {
		if (q->grp[i] != i)
			continue;
		/* a hash whose every counter asked for is kept: no command */
		for (kept = (q->keep & CKEEP_READ) != 0, j = i; kept && j < n;
		    j++)
			if (q->grp[j] == i)
				kept = ckeep_get_hk(q->hash[i], hk[i],
				    q->field[j], &q->hv[j]);
		if (kept) {
			/* a page kept whole depends on it all the same */
			rds_note(q->rd, hk[i]);
			for (j = i; j < n; j++)
				if (q->grp[j] == i)
					q->st[j] = 1;
			continue;
		}
		argv[0] = "HMGET";
		argv[1] = q->hash[i];
		for (argc = 2, j = i; j < n; j++)
			if (q->grp[j] == i)
				argv[argc++] = q->field[j];
		if (rds_append_strs(q->rd, argc, argv) == -1)
			q->down = 1;
		else {
			q->st[i] = 2;
			q->queued++;
		}
	}
	free(hk);
	free(argv);
}

void
cstore_send(struct app *a, const struct delta *ds, int n,
    struct cstore_q *q)
{
	cstore_send_kept(a, ds, n, 0, q);
}

int
cstore_recv(struct app *a, struct cstore_q *q, struct count *out)
{
	const struct delta *ds = q->ds;
	rds_reply *rep;
	int i, j, k, argc, n = q->n, down = q->down, failed = 0, store;
	long long val, back;

	for (i = 0; i < n; i++) {
		out[i].v = 0;
		out[i].ok = 0;		/* not known yet */
	}
	for (i = 0; i < n; i++)
		if (q->st[i] == 1) {
			out[i].v = q->hv[i];
			out[i].ok = 1;
		}
	/* what was read is kept when the connection stayed the tracked
	 * one and no invalidation was read meanwhile (ckeep.h) */
	store = (q->keep & CKEEP_STORE) && rds_gen(a->rds) == q->gen;
	for (i = 0, k = 0; i < n && k < q->queued; i++) {
		if (q->st[i] != 2)
			continue;
		k++;
		if (rds_get_reply(q->rd, &rep) == -1) {
			down = 1;	/* the rest of ours read (rcl.h) */
			(void)rds_collect(q->rd, q->queued - k);
			break;
		}
		for (argc = 0, j = i; j < n; j++) {
			if (q->grp[j] != i)
				continue;
			if (rds_type(rep) == RDS_ARRAY &&
			    (size_t)argc < rds_n(rep) &&
			    rds_type(rds_at(rep, argc)) == RDS_STRING) {
				out[j].v = strtoll(rds_str(rds_at(rep, argc)),
				    NULL, 10);
				out[j].ok = 1;
				if (store)
					ckeep_put(q->hash[i], q->field[j],
					    out[j].v, q->epoch);
			}
			argc++;
		}
		rds_free(rep);
	}
	/* the values Redis does not hold yet, loaded together (loading
	 * writes: on the master only); what it could not load is read
	 * below as when Redis is down */
	if (!down && (q->rd == a->rds || q->refusing))
		(void)load_all(a, ds, n, out, q->refusing);
	for (i = 0; i < n; i++) {
		if (out[i].ok)
			continue;
		/* Redis is down: the durable value and the backlog. */
		if (cstore_durable(a->db, &ds[i], &val) == 0 &&
		    counter_row(a->db, STMT_BACKLOG_GET,
		    &ds[i], &back, NULL) == 0) {
			out[i].v = val + back;
			out[i].ok = 1;
		} else {
			out[i].v = 0;
			failed++;
		}
	}
	for (i = 0; i < n; i++)
		if (out[i].v < 0)	/* never show a negative count */
			out[i].v = 0;
	free(q->hash);
	free(q->field);
	free(q->grp);
	free(q->hv);
	free(q->st);
	return failed;
}

int
cstore_get(struct app *a, const struct delta *ds, int n,
    struct count *out)
{
	struct cstore_q q;

	cstore_send(a, ds, n, &q);
	return cstore_recv(a, &q, out);
}
