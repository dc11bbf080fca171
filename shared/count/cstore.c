/* cstore.c -- live counters and pending deltas in Redis; see cstore.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
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
		if (dbq_step(s) != DBQ_DONE) {
			log_err("counter backlog: %s", dbq_errmsg(a->db));
			dbq_done(s);
			return -1;
		}
		dbq_done(s);
	}
	return 0;
}

int
cstore_backlog_token(struct app *a, const struct delta *d, const char *token)
{
	struct dbq *s;
	char key[48 + 64];
	size_t n;
	int rc;

	counters_key(d, key, 48);
	n = strlen(key);
	if (snprintf(key + n, sizeof(key) - n, "#%s", token) >=
	    (int)(sizeof(key) - n))
		return -1;
	if ((s = dbq_stmt(a->db, STMT_BACKLOG_ADD)) == NULL)
		return -1;
	dbq_bind_text(s, 1, families[d->fam].name, -1);
	dbq_bind_text_copy(s, 2, key, -1);
	dbq_bind_i64(s, 3, d->d);
	rc = dbq_step(s);
	dbq_done(s);
	if (rc != DBQ_DONE) {
		log_err("counter backlog: %s", dbq_errmsg(a->db));
		return -1;
	}
	return 0;
}

/* One counter's value by statement st (family, key): 0 when absent;
 * STMT_COUNTER_GET the durable value, STMT_BACKLOG_GET what waits in
 * the backlog (Redis was down).
 * 0, or -1 on a SQLite error (*v then 0, not a value). */
static int
counter_row(struct db *db, enum stmt st, const struct delta *d,
    long long *v)
{
	struct dbq *s = dbq_stmt(db, st);
	char key[48];
	int rc;

	*v = 0;
	if (s == NULL)
		return -1;
	counters_key(d, key, sizeof(key));
	dbq_bind_text(s, 1, families[d->fam].name, -1);
	dbq_bind_text_copy(s, 2, key, -1);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		*v = dbq_i64(s, 0);
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : 0;	/* after an error *v is still 0 */
}

int
cstore_durable(struct db *db, const struct delta *d, long long *v)
{
	return counter_row(db, STMT_COUNTER_GET, d, v);
}

/* In one SQLite read snapshot: the durable value plus what waits in the
 * backlog (base), and whether flush batch `batch` ("": none) is applied.
 * 0, or -1 on a SQLite error. */
static int
snapshot(struct db *db, const struct delta *d, const char *batch,
    long long *base, int *applied)
{
	int err = 0, own = !dbq_in_txn(db);
	long long back = 0;

	/* One read transaction: a batch that commits between the reads
	 * would otherwise be counted twice or not at all. */
	if (own && db_snapshot_begin(db) == -1)
		return -1;
	if (cstore_durable(db, d, base) == -1 ||
	    counter_row(db, STMT_BACKLOG_GET, d, &back) == -1)
		err = 1;
	*base += back;
	*applied = 0;
	if (!err && batch != NULL && batch[0] != '\0' &&
	    (*applied = dbq_batch_applied(db, batch)) == -1)
		err = 1;
	if (own && db_snapshot_end(db, err) == -1)
		err = 1;
	return err ? -1 : 0;
}

/* Loads one missing live value into *v: 0, or -1 when Redis or SQLite
 * failed (*v is then no value).  A correction that lands between the
 * snapshot and the script sets the live value itself (settle.c), which
 * the script then returns: the backlog it absorbed is not added again. */
static int
load_one(struct app *a, const struct delta *d, long long *v)
{
	struct cname_keys k;
	char ver[24], base_s[24], batch[24];
	const char *keys[4] = { k.live, k.pending, k.inflight, k.meta };
	const char *args[5];
	rds_reply *info, *rep;
	long long base;
	int tries, applied;

	*v = 0;
	cname_keys(d, &k);
	for (tries = 0; tries < 5; tries++) {
		if ((info = rds_cmdv(a->rds, "HMGET", k.meta, "v", "b", NULL)) ==
		    NULL)
			return -1;
		if (rds_type(info) != RDS_ARRAY || rds_n(info) != 2) {
			rds_free(info);
			return -1;
		}
		snprintf(ver, sizeof(ver), "%s",
		    rds_type(rds_at(info, 0)) == RDS_STRING ?
		    rds_str(rds_at(info, 0)) : "0");
		snprintf(batch, sizeof(batch), "%s",
		    rds_type(rds_at(info, 1)) == RDS_STRING ?
		    rds_str(rds_at(info, 1)) : "");
		rds_free(info);
		if (snapshot(a->db, d, batch, &base, &applied) == -1)
			return -1;
		snprintf(base_s, sizeof(base_s), "%lld", base);
		args[0] = k.field;
		args[1] = k.pfield;
		args[2] = ver;
		args[3] = base_s;
		args[4] = batch[0] != '\0' && !applied ? "1" : "0";
		if ((rep = rds_eval(a->rds, &load_lua, 4, keys, 5, args)) ==
		    NULL)
			return -1;
		if (rds_type(rep) == RDS_INTEGER) {
			*v = rds_int(rep);
			rds_free(rep);
			return 0;
		}
		rds_free(rep);	/* a flush touched it: again */
	}
	return -1;
}

void
cstore_send_kept(struct app *a, const struct delta *ds, int n,
    unsigned keep, struct cstore_q *q)
{
	const char **argv = xcalloc((size_t)n + 2, sizeof(*argv));
	int i, j, argc, kept;

	memset(q, 0, sizeof(*q));
	q->ds = ds;
	q->n = n;
	q->rd = app_reader(a);
	q->keep = q->rd == a->rds && !rds_is_cluster(a->rds) ? keep : 0;
	q->gen = rds_gen(a->rds);
	q->epoch = ckeep_epoch();
	q->hash = xcalloc((size_t)n + 1, sizeof(*q->hash));
	q->field = xcalloc((size_t)n + 1, sizeof(*q->field));
	q->grp = xcalloc((size_t)n + 1, sizeof(*q->grp));
	q->hv = xcalloc((size_t)n + 1, sizeof(*q->hv));
	q->st = xcalloc((size_t)n + 1, sizeof(*q->st));
	for (i = 0; i < n; i++)
		cname_of(&ds[i], q->hash[i], sizeof(q->hash[i]),
		    q->field[i], sizeof(q->field[i]));
	/* One HMGET per live hash (a post's four counters are one command,
	 * not four): grp[i] is the first counter of i's hash.  An object's
	 * counters usually come together: the previous one's hash first. */
	for (i = 0; i < n; i++) {
		if (i > 0 && strcmp(q->hash[q->grp[i - 1]], q->hash[i]) == 0) {
			q->grp[i] = q->grp[i - 1];
			continue;
		}
		for (q->grp[i] = i, j = 0; j < i; j++)
			if (q->grp[j] == j && strcmp(q->hash[j], q->hash[i]) == 0) {
				q->grp[i] = j;
				break;
			}
	}
	for (i = 0; i < n && !q->down; i++) {
		if (q->grp[i] != i)
			continue;
		/* a hash whose every counter asked for is kept: no command */
		for (kept = (q->keep & CKEEP_READ) != 0, j = i; kept && j < n;
		    j++)
			if (q->grp[j] == i)
				kept = ckeep_get(q->hash[i], q->field[j],
				    &q->hv[j]);
		if (kept) {
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
			down = 1;
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
	for (i = 0; i < n; i++) {
		if (out[i].ok)
			continue;
		if (!down && q->rd == a->rds) {	/* loading writes: master only */
			if (load_one(a, &ds[i], &val) == 0) {
				out[i].v = val;
				out[i].ok = 1;
				continue;
			}
			down = 1;
		}
		/* Redis is down: the durable value and the backlog. */
		if (cstore_durable(a->db, &ds[i], &val) == 0 &&
		    counter_row(a->db, STMT_BACKLOG_GET,
		    &ds[i], &back) == 0) {
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
