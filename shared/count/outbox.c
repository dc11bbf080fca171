/* outbox.c -- counter deltas recorded with their action; see outbox.h.
 *
 * One file: why this file of over 500 lines is one concept --
 * a row's whole life -- written with its action, sent after the
 * commit, drained (applied, finished, deleted) and applied again for a
 * correction -- rests on one rule (nothing is finished past the horizon,
 * applied at most once per bucket), which every part here must keep
 * alike. */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fault.h"
#include "base/log.h"
#include "count/cstore.h"
#include "count/outbox.h"
#include "store/dbq.h"

#define DRAIN_ROWS	2000	/* rows a drain reads at a time */

static int
id_cmp(const void *x, const void *y)
{
	long long a = *(const long long *)x, b = *(const long long *)y;

	return (a > b) - (a < b);
}

/* KEYS: meta, outbox marks.  ARGV: the id up to which rows are drained.
 * Later applications of those rows are refused (apply_lua), so their
 * marks can go. */
static struct rds_script finish_lua = { .src =
	"#!lua\n"
	"local o = tonumber(redis.call('HGET', KEYS[1], 'o') or '0')\n"
	"if tonumber(ARGV[1]) > o then\n"
	"  redis.call('HSET', KEYS[1], 'o', ARGV[1]) end\n"
	"redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])\n"
	"return 1\n" };

void
outbox_formula(struct outbox *ob, const struct row *old,
    const struct row *new)
{
	struct delta ds[DELTA_MAX];
	int n = counters_deltas(old, new, ds);

	outbox_deltas(ob, ds, n);
}

void
outbox_deltas(struct outbox *ob, const struct delta *ds, int n)
{
	assert(n >= 0 && ob->n + n <= OUTBOX_MAX);
	memcpy(ob->ds + ob->n, ds, (size_t)n * sizeof(*ds));
	ob->n += n;
}

int
outbox_encode(const struct delta *ds, int n, char *out, size_t sz)
{
	/* each: ";" name, then " " and a number four times (no printf: a
	 * like writes one of these in the writer's critical path) */
	char one[64 + 4 * (1 + LL_CHARS)], *p;
	long long v[4];
	const char *name;
	size_t len = 0, k, nl;
	int i, j;

	out[0] = '\0';
	for (i = 0; i < n; i++) {
		name = families[ds[i].fam].name;
		if ((nl = strlen(name)) > 63)
			return -1;
		p = one;
		if (i)
			*p++ = ';';
		memcpy(p, name, nl);
		p += nl;
		v[0] = ds[i].k1;
		v[1] = ds[i].k2;
		v[2] = ds[i].d;
		v[3] = ds[i].owner;
		for (j = 0; j < 4; j++) {
			*p++ = ' ';
			p += buf_fmt_ll(p, v[j]);
		}
		k = (size_t)(p - one);
		if (k >= sz - len)
			return -1;
		memcpy(out + len, one, k);
		len += k;
		out[len] = '\0';
	}
	return (int)len;
}

/* A strict decimal at *p (an optional '-', digits), ending in one of
 * `ends`; moves *p past the end character.  0, or -1 (out of range too:
 * strtoll's saturated value is no delta of ours). */
static int
number(const char **p, const char *ends, long long *v)
{
	const char *s = *p + (**p == '-');
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoll(*p, &end, 10);
	if (errno == ERANGE)
		return -1;
	if (*end == '\0' ? strchr(ends, '$') == NULL : strchr(ends, *end) ==
	    NULL)
		return -1;
	*p = *end == '\0' ? end : end + 1;
	return 0;
}

int
outbox_decode(const char *s, struct delta *ds, int max)
{
	char name[40];
	const char *p = s;
	size_t nl;
	int n = 0;

	while (*p != '\0') {
		if (n == max || (nl = strcspn(p, " ")) == 0 ||
		    nl >= sizeof(name) || p[nl] != ' ')
			return -1;
		memcpy(name, p, nl);
		name[nl] = '\0';
		if ((ds[n].fam = counters_family(name)) == FAM__MAX)
			return -1;
		p += nl + 1;
		ds[n].owner = 0;	/* rows from before owners have none */
		if (number(&p, " ", &ds[n].k1) == -1 ||
		    number(&p, " ", &ds[n].k2) == -1 ||
		    number(&p, " ;$", &ds[n].d) == -1 ||
		    (p[-1] == ' ' && number(&p, ";$", &ds[n].owner) == -1))
			return -1;
		if (p[-1] == ';' && *p == '\0')	/* a trailing ';' */
			return -1;
		n++;
	}
	return n;
}

/* The row's text: 4 numbers of 20 digits a delta, its name */
#define ROW_TEXT_MAX	(OUTBOX_MAX * 112)

/* Writes ob's row now.  0, or -1 (logged). */
static int
row_write(struct db *d, struct outbox *ob)
{
	char text[ROW_TEXT_MAX];
	struct dbq *s;

	if (outbox_encode(ob->ds, ob->n, text, sizeof(text)) == -1 ||
	    (s = dbq_stmt(d, STMT_OUTBOX_ADD)) == NULL)
		return -1;
	dbq_bind_i64(s, 1, clock_wall_ms());
	dbq_bind_text(s, 2, text, -1);
	dbq_insert_id(d, s, &ob->id);	/* 0 unless a row was made */
	dbq_done(s);
	if (ob->id <= 0) {
		log_err("outbox: %s", dbq_errmsg(d));
		return -1;
	}
	fault_point("outbox-commit");	/* an id taken, not yet committed */
	return 0;
}

int
outbox_add(struct db *d, struct outbox *ob)
{
	ob->id = 0;
	ob->deferred = 0;
	if (ob->n == 0)
		return 0;
	if (db_group_defers(d)) {
		ob->deferred = 1;	/* outbox_group_end() writes it */
		return 0;
	}
	return row_write(d, ob);
}

int
outbox_commit(struct db *d, struct outbox *ob)
{
	if (!fault_aimed("outbox-commit"))
		db_commit_next(d);
	if (outbox_add(d, ob) == -1)
		return -1;
	return db_commit(d);
}

/* Moves row id's deltas to the backlog, in one transaction with clearing
 * the row (a drain that finished it first wins: nothing moves); but for
 * those Redis holds (in[i] 1, cstore_apply_once_in(); in NULL: none):
 * added again, they would be shown twice while it refuses writes
 * (cstore.h), and a settle would recount them for nothing.  0/-1. */
static int
to_backlog(struct app *a, long long id, const struct delta *all, int nall,
    const unsigned char *in)
{
	struct delta ds[OUTBOX_MAX];
	struct dbq *s;
	int ch, i, n = 0;

	for (i = 0; i < nall && n < OUTBOX_MAX; i++)
		if (in == NULL || !in[i])
			ds[n++] = all[i];

	if (db_begin(a->db) == -1)
		return -1;
	if ((s = dbq_stmt(a->db, STMT_OUTBOX_CLEAR)) == NULL)
		goto fail;
	dbq_bind_i64(s, 1, id);
	ch = dbq_step(s) == DBQ_DONE ? dbq_changes(a->db) : -1;
	dbq_done(s);
	if (ch == -1 || (ch == 1 && cstore_backlog(a, ds, n) == -1))
		goto fail;
	return db_commit(a->db);
fail:
	db_rollback(a->db);
	return -1;
}

/* After the row's commit: to Redis, or else to the backlog.  rc: the
 * row's cstore_apply_once_in() result, in which of its deltas Redis
 * holds. */
static void
sent(struct app *a, const struct outbox *ob, int rc, const unsigned char *in)
{
	if (rc != -1)
		return;
	fault_point("action-backlog");	/* part or none in Redis, the rest
					   not yet in the backlog */
	log_warn("counter deltas of outbox row %lld kept in the SQLite "
	    "backlog: Redis did not take them (all, or on some of its "
	    "nodes)", ob->id);
	if (to_backlog(a, ob->id, ob->ds, ob->n, in) == -1)
		log_warn("outbox row %lld left to the worker", ob->id);
}

_Static_assert(APP_COMMIT_MAX <= CSTORE_ONCE_MAX, "a group's rows, one trip");

/* A group commit's rows (app_after_commit()): one round trip for all. */
static void
send_group(struct app *a, void **args, int n)
{
	const struct delta *ds[CSTORE_ONCE_MAX];
	long long ids[CSTORE_ONCE_MAX];
	int nds[CSTORE_ONCE_MAX], rc[CSTORE_ONCE_MAX], i, k, at;
	struct outbox *ob, *obs[CSTORE_ONCE_MAX];
	unsigned char in[CSTORE_ONCE_MAX * OUTBOX_MAX];

	assert(n <= CSTORE_ONCE_MAX);
	for (i = k = 0; i < n; i++) {
		ob = args[i];
		if (ob->id <= 0)	/* no id known: the drain applies it */
			continue;
		ids[k] = ob->id;
		ds[k] = ob->ds;
		nds[k] = ob->n;
		obs[k++] = ob;
	}
	fault_point("action-delta");	/* committed, not yet in Redis */
	cstore_apply_once_in(a, ids, ds, nds, k, rc, in);
	for (i = 0, at = 0; i < k; at += nds[i], i++)
		sent(a, obs[i], rc[i], in + at);
}

void
outbox_send(struct app *a, struct outbox *ob)
{
	struct outbox *copy;

	if (ob->deferred && a->noncommit == APP_COMMIT_MAX) {
		/* no room to wait for the group (app_after_commit() leaves
		 * it to the worker): its row is written now, with the group */
		ob->deferred = 0;
		if (row_write(a->db, ob) == -1)
			return;	/* the group's transaction failed with it */
	}
	if (ob->id <= 0 && !ob->deferred)
		return;
	if (!db_grouped(a->db)) {
		unsigned char in[OUTBOX_MAX];

		fault_point("action-delta");	/* committed, not in Redis */
		sent(a, ob, cstore_apply_once_1(a, ob->id, ob->ds, ob->n, in),
		    in);
		return;
	}
	/* in a group commit: once the group is durable (or never) */
	copy = xmalloc(sizeof(*copy));
	memcpy(copy, ob, sizeof(*copy));
	app_after_commit(a, send_group, copy);
}

/* Gives each of the n rows in obs the id of a row of s's result with its
 * text (texts[i]): rows of one text are alike, so which of them takes
 * which id does not matter.  0, or -1 when one was left without. */
static int
ids_by_text(struct dbq *s, struct outbox **obs, char **texts, int n)
{
	const char *t;
	long long id;
	int i, left = n;

	while (dbq_step(s) == DBQ_ROW) {
		id = dbq_i64(s, 0);
		t = dbq_text(s, 1);
		for (i = 0; i < n; i++)
			if (obs[i]->id == 0 && t != NULL &&
			    strcmp(texts[i], t) == 0) {
				obs[i]->id = id;
				left--;
				break;
			}
	}
	return left == 0 ? 0 : -1;
}

int
outbox_group_end(struct app *a)
{
	struct outbox *obs[APP_COMMIT_MAX];
	char *texts[APP_COMMIT_MAX];
	struct db *d = a->db;
	struct buf arr = { 0 };
	struct dbq *s;
	struct outbox *ob;
	int i, n = 0, rc = -1, aimed;

	if (!db_group_defers(d) || db_group_lost(d))
		return 0;
	for (i = 0; i < a->noncommit; i++) {
		ob = a->oncommit[i].arg;
		if (a->oncommit[i].fn == send_group && ob->deferred)
			obs[n++] = ob;
	}
	if (n == 0)
		return 0;
	/* a row's text holds letters, digits, ' ', '-', '_' and ';': an
	 * element of the array literal needs no escape in its quotes */
	buf_putc(&arr, '{');
	for (i = 0; i < n; i++) {
		texts[i] = xmalloc(ROW_TEXT_MAX);
		if (outbox_encode(obs[i]->ds, obs[i]->n, texts[i],
		    ROW_TEXT_MAX) == -1) {
			n = i + 1;
			goto lose;
		}
		buf_printf(&arr, "%s\"%s\"", i ? "," : "", texts[i]);
	}
	buf_putc(&arr, '}');
	buf_putc(&arr, '\0');
	if ((s = dbq_stmt(d, STMT_OUTBOX_ADD_MANY)) == NULL)
		goto lose;
	aimed = fault_aimed("outbox-commit");
	db_group_commit_next(d, !aimed);
	if (db_group_lost(d)) {		/* rolled back whole: nothing to add */
		dbq_done(s);
		rc = 0;
		goto out;
	}
	dbq_bind_i64(s, 1, clock_wall_ms());
	dbq_bind_text(s, 2, arr.p, -1);
	/* a row left without its id is committed all the same (when the
	 * COMMIT went): the worker's drain applies it */
	rc = ids_by_text(s, obs, texts, n);
	dbq_done(s);
	if (rc == -1)
		log_err("outbox: a group's %d rows: %s", n, dbq_errmsg(d));
	else if (aimed)
		fault_point("outbox-commit");	/* ids taken, not committed */
	goto out;
lose:
	/* nothing sent: the group may not commit without its rows */
	log_err("outbox: a group's rows could not be written: it runs again");
	db_group_lose(d);
out:
	for (i = 0; i < n; i++)
		free(texts[i]);
	buf_free(&arr);
	return rc;
}

/* Keeps a malformed row aside (counter_outbox_bad) before a drain
 * deletes it: deleted unread, the deltas it held were gone without a
 * trace.  0, or -1 (then nothing may be deleted). */
static int
quarantine(struct db *d, long long id)
{
	struct dbq *s;
	int rc;

	if (db_begin(d) == -1)
		return -1;
	if ((s = dbq_stmt(d, STMT_OUTBOX_QUARANTINE)) == NULL) {
		db_rollback(d);
		return -1;
	}
	dbq_bind_i64(s, 1, id);
	dbq_bind_i64(s, 2, clock_wall_ms());
	rc = dbq_step(s);
	dbq_done(s);
	if (rc != DBQ_DONE || db_commit(d) == -1) {
		db_rollback(d);
		return -1;
	}
	return 0;
}

/* The rows after `after` up to `upto`, at most DRAIN_ROWS: their ids and
 * deltas into ids/ds/nds (ds has OUTBOX_MAX deltas a row).  The number
 * of rows, or -1. */
static int
read_rows(struct db *d, long long after, long long upto, long long *ids,
    struct delta *ds, int *nds)
{
	struct dbq *s = dbq_stmt(d, STMT_OUTBOX_BATCH);
	const char *t;
	long long *bad = NULL;
	int rc, i, n = 0, nbad = 0;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, after);
	dbq_bind_i64(s, 2, upto);
	dbq_bind_int(s, 3, DRAIN_ROWS);
	while ((rc = dbq_step(s)) == DBQ_ROW) {
		ids[n] = dbq_i64(s, 0);
		t = dbq_text(s, 1);
		nds[n] = outbox_decode(t,
		    ds + (size_t)n * OUTBOX_MAX, OUTBOX_MAX);
		if (nds[n] < 0) {	/* not ours to guess: kept aside */
			log_err("outbox row %lld: malformed deltas, moved to "
			    "counter_outbox_bad (a reconciliation repairs what "
			    "it would have changed)", ids[n]);
			nds[n] = 0;
			if (bad == NULL)
				bad = xcalloc(DRAIN_ROWS, sizeof(*bad));
			bad[nbad++] = ids[n];
		}
		n++;
	}
	dbq_done(s);
	for (i = 0; rc == DBQ_DONE && i < nbad; i++)
		if (quarantine(d, bad[i]) == -1)
			rc = DBQ_ERR;
	free(bad);
	if (rc != DBQ_DONE)
		return -1;
	for (i = 0; i < n; i++)		/* rows from before owners */
		if (cname_owners(d, ds + (size_t)i * OUTBOX_MAX, nds[i]) == -1)
			return -1;
	return n;
}

/* The distinct buckets the n rows' deltas touch, into bs (room for
 * CSTORE_BUCKETS); how many. */
static int
row_buckets(const struct delta *ds, const int *nds, int n, int *bs)
{
	unsigned long long seen[CSTORE_BUCKETS / 64];
	int i, j, b, nb = 0;

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < n; i++)
		for (j = 0; j < nds[i]; j++) {
			b = cname_bucket(&ds[(size_t)i * OUTBOX_MAX + j]);
			if (seen[b / 64] & (1ULL << (b % 64)))
				continue;
			seen[b / 64] |= 1ULL << (b % 64);
			bs[nb++] = b;
		}
	return nb;
}

/* Tells every bucket of the rows that rows up to `upto` are drained. */
static int
finish(struct app *a, const struct delta *ds, const int *nds, int n,
    long long upto)
{
	int *bs = xcalloc(CSTORE_BUCKETS, sizeof(*bs));
	struct cname_keys k;
	const char *keys[2] = { k.meta, NULL };
	char marks[32], up[24];
	const char *args[1] = { up };
	int i, nb = row_buckets(ds, nds, n, bs), rc = 0;

	snprintf(up, sizeof(up), "%lld", upto);
	keys[1] = marks;
	for (i = 0; i < nb; i++) {
		cname_bucket_keys(bs[i], &k);
		cname_bucket_key(bs[i], "outbox", marks, sizeof(marks));
		if (rds_append_eval(a->rds, &finish_lua, 2, keys, 1, args) ==
		    -1) {
			rc = -1;
			break;
		}
	}
	if (i > 0 && rds_collect(a->rds, i) != 0)
		rc = -1;
	free(bs);
	return rc;
}

/* Which rows of a batch (ids ascending, n rows) every bucket they touch
 * has already applied (the action did it): one ZRANGEBYSCORE of marks
 * per bucket.  done[i] = 1 for those; bit j of ok[i] set when row i's
 * delta j is in a bucket that applied it (an action that applied part
 * of its row, one node of a cluster refusing, and died before it moved
 * the rest to the backlog).  0, or -1 when Redis failed. */
static int
applied_rows(struct app *a, const long long *ids, const struct delta *ds,
    const int *nds, int n, int *done, unsigned int *ok)
{
	int *bs = xcalloc(CSTORE_BUCKETS, sizeof(*bs));
	char key[32], lo[24], hi[24];
	const char *argv[4] = { "ZRANGEBYSCORE", key, lo, hi };
	const long long *hit;
	const struct delta *d;
	rds_reply *rep;
	int i, j, k, nb = row_buckets(ds, nds, n, bs), rc = -1;

	snprintf(lo, sizeof(lo), "%lld", ids[0]);
	snprintf(hi, sizeof(hi), "%lld", ids[n - 1]);
	for (k = 0; k < nb; k++) {
		cname_bucket_key(bs[k], "outbox", key, sizeof(key));
		if (rds_append_strs(a->rds, 4, argv) == -1) {
			if (k > 0)
				rds_collect(a->rds, k);
			goto out;
		}
	}
	for (k = 0; k < nb; k++) {
		if (rds_get_reply(a->rds, &rep) == -1)
			goto out;
		for (j = 0; rds_type(rep) == RDS_ARRAY &&
		    (size_t)j < rds_n(rep); j++) {
			long long id = strtoll(rds_str(rds_at(rep, j)), NULL, 10);

			if ((hit = bsearch(&id, ids, (size_t)n, sizeof(*ids),
			    id_cmp)) == NULL)
				continue;
			i = (int)(hit - ids);
			for (d = ds + (size_t)i * OUTBOX_MAX; d < ds +
			    (size_t)i * OUTBOX_MAX + nds[i]; d++)
				if (cname_bucket(d) == bs[k])
					ok[i] |= 1u << (d - (ds +
					    (size_t)i * OUTBOX_MAX));
		}
		rds_free(rep);
	}
	for (i = 0; i < n; i++)
		done[i] = nds[i] > 0 && ok[i] == (nds[i] >= 32 ? ~0u :
		    (1u << nds[i]) - 1);
	rc = 0;
out:
	free(bs);
	return rc;
}

int
outbox_reapply(struct app *a, long long upto,
    int (*touches)(const struct delta *, void *), void *arg)
{
	long long *ids = xcalloc(DRAIN_ROWS, sizeof(*ids)), after = 0;
	struct delta *ds = xcalloc((size_t)DRAIN_ROWS * OUTBOX_MAX,
	    sizeof(*ds)), *row;
	int *nds = xcalloc(DRAIN_ROWS, sizeof(*nds));
	int n = 0, i, j, rc = 0;

	while (rc == 0 &&
	    (n = read_rows(a->db, after, upto, ids, ds, nds)) > 0) {
		for (i = 0; i < n && rc == 0; i++) {
			row = ds + (size_t)i * OUTBOX_MAX;
			for (j = 0; j < nds[i]; j++)
				if (touches(&row[j], arg))
					break;
			if (j < nds[i] &&
			    cstore_apply_once(a, ids[i], row, nds[i]) == -1)
				rc = -1;
		}
		after = ids[n - 1];
		if (n < DRAIN_ROWS)
			break;
	}
	if (n == -1)
		rc = -1;
	free(ids);
	free(ds);
	free(nds);
	return rc;
}

int
outbox_each(struct app *a, void (*fn)(const struct delta *, void *),
    void *arg)
{
	long long *ids = xcalloc(DRAIN_ROWS, sizeof(*ids)), after = 0;
	struct delta *ds = xcalloc((size_t)DRAIN_ROWS * OUTBOX_MAX,
	    sizeof(*ds));
	int *nds = xcalloc(DRAIN_ROWS, sizeof(*nds));
	int n, i, j;

	while ((n = read_rows(a->db, after, LLONG_MAX, ids, ds, nds)) > 0) {
		for (i = 0; i < n; i++)
			for (j = 0; j < nds[i]; j++)
				fn(&ds[(size_t)i * OUTBOX_MAX + j], arg);
		after = ids[n - 1];
		if (n < DRAIN_ROWS)
			break;
	}
	free(ids);
	free(ds);
	free(nds);
	return n == -1 ? -1 : 0;
}

/* One integer from a statement without parameters; 0, or -1. */
static int
one_value(struct db *d, enum stmt st, long long *v)
{
	struct dbq *s = dbq_stmt(d, st);
	int rc;

	if (s == NULL)
		return -1;
	rc = dbq_step(s);
	if (rc == DBQ_ROW)
		*v = dbq_i64(s, 0);
	dbq_done(s);
	return rc == DBQ_ROW ? 0 : -1;
}

/* How many of the write transactions listed in open (STMT_TXN_OPEN's)
 * still run; -1 when the database failed. */
static long long
txn_still(struct db *d, const char *open)
{
	struct dbq *s = dbq_stmt(d, STMT_TXN_STILL);
	long long n;

	if (s == NULL)
		return -1;
	dbq_bind_text(s, 1, open, -1);
	n = dbq_step(s) == DBQ_ROW ? dbq_i64(s, 0) : -1;
	dbq_done(s);
	return n;
}

/* The write transactions that outlived this process's last wait (as
 * STMT_TXN_OPEN lists them), or NULL.  While one of them runs no horizon
 * can be had, and a call answers so at once: a writer stopped for a
 * minute cost the drain 2 s of every pass, and a reconciliation 2 s a
 * chunk and a family.  The process's own (the transactions are the
 * server's, whichever connection asks). */
static char *outlived;

long long
outbox_horizon(struct db *d)
{
	struct dbq *s;
	long long taken, still = 0, waited = 0, pause = 1;
	char *open = NULL;
	int rc;

	if (outlived != NULL) {
		if ((still = txn_still(d, outlived)) != 0)
			return still > 0 ? OUTBOX_WAITED : -1;
		free(outlived);
		outlived = NULL;
	}
	/* The id first, then the transactions: a writer that took an id up
	 * to `taken` had its transaction id before, so is among them (or
	 * has ended); once none of them runs, none of those ids can commit.
	 * A transaction that began after is not waited for. */
	if (one_value(d, STMT_OUTBOX_ID_TAKEN, &taken) == -1 ||
	    (s = dbq_stmt(d, STMT_TXN_OPEN)) == NULL)
		return -1;
	if ((rc = dbq_step(s)) == DBQ_ROW && !dbq_is_null(s, 0))
		open = xstrdup(dbq_text(s, 0));
	dbq_done(s);
	if (rc != DBQ_ROW)
		return -1;
	while (open != NULL && (still = txn_still(d, open)) > 0) {
		if (waited >= OUTBOX_WAIT_MS) {
			log_warn("outbox: a write transaction has been open "
			    "for over %d ms; its rows wait", OUTBOX_WAIT_MS);
			outlived = open;	/* not waited for again */
			open = NULL;
			break;
		}
		usleep((useconds_t)pause * 1000);
		waited += pause;
		pause = pause < 64 ? pause * 2 : pause;
	}
	free(open);
	return still == 0 ? taken : still > 0 ? OUTBOX_WAITED : -1;
}

/* Deletes the drained rows up to `upto` but the newest (cleared), and
 * says so in the setting OUTBOX_FLOOR, in the same transaction: a
 * snapshot that reads it knows every id up to it committed before it (or
 * never will), deleted or not (settle.c).  The floor only rises: two
 * drains at once (the worker's, tallyctl flush's), the one of the later
 * cutoff committed first, left the other's lower floor, and a correction
 * then took the rows between, deleted, for rows its recount had not
 * seen: their deltas counted twice. */
static int
delete_upto(struct db *d, long long upto)
{
	struct dbq *s;
	int rc = -1;

	fault_point("outbox-floor");
	if (db_begin(d) == -1)
		return -1;
	if ((s = dbq_stmt(d, STMT_OUTBOX_FLOOR_RAISE)) != NULL) {
		dbq_bind_text(s, 1, OUTBOX_FLOOR, -1);
		dbq_bind_i64(s, 2, upto);
		rc = dbq_step(s) == DBQ_DONE ? 0 : -1;
		dbq_done(s);
	}
	if (rc == -1) {
		db_rollback(d);
		return -1;
	}
	if ((s = dbq_stmt(d, STMT_OUTBOX_CLEAR)) != NULL) {
		dbq_bind_i64(s, 1, upto);
		rc = dbq_step(s) == DBQ_DONE ? 0 : -1;
		dbq_done(s);
	}
	if (rc == 0 && (s = dbq_stmt(d, STMT_OUTBOX_DONE)) != NULL) {
		dbq_bind_i64(s, 1, upto);
		rc = dbq_step(s) == DBQ_DONE ? 0 : -1;
		dbq_done(s);
	}
	if (rc == -1 || db_commit(d) == -1) {
		db_rollback(d);
		return -1;
	}
	return 0;
}

/* Every row up to it was cleared by a drain of this process (Redis down:
 * its deltas in the backlog), so the next drain reads after it: a row is
 * never uncleared, and a drain once up deletes them.  Each drain read
 * every cleared row again (the statement skips them one by one): an
 * outage of an hour at a few hundred actions a second left a million,
 * read each second, while the worker had the backlog to keep. */
static long long cleared_upto;

int
outbox_drain(struct app *a, long long min_age_ms)
{
	struct dbq *s;
	long long cutoff = 0, after = cleared_upto, *ids, horizon;
	struct delta *ds;
	int *nds, *done, n, i, j, total = 0, up, step, all_cleared = 1;
	unsigned int *held;
	unsigned char in[OUTBOX_MAX];

	if ((s = dbq_stmt(a->db, STMT_OUTBOX_CUTOFF)) == NULL)
		return -1;
	dbq_bind_i64(s, 1, clock_wall_ms() - min_age_ms);
	if ((step = dbq_step(s)) == DBQ_ROW)
		cutoff = dbq_i64(s, 0);
	dbq_done(s);
	if (step == DBQ_ERR)
		return -1;
	/* never past a row that may still commit (ids out of order): rows
	 * wait while a transaction that may hold an earlier id runs */
	if (cutoff > 0 && (horizon = outbox_horizon(a->db)) < cutoff) {
		if (horizon < 0)
			return horizon == OUTBOX_WAITED ? OUTBOX_WAITED : -1;
		cutoff = horizon;
	}
	if (cutoff <= 0)
		return 0;
	ids = xcalloc(DRAIN_ROWS, sizeof(*ids));
	nds = xcalloc(DRAIN_ROWS, sizeof(*nds));
	done = xcalloc(DRAIN_ROWS, sizeof(*done));
	held = xcalloc(DRAIN_ROWS, sizeof(*held));
	ds = xcalloc((size_t)DRAIN_ROWS * OUTBOX_MAX, sizeof(*ds));
	up = rds_up(a->rds);
	for (;;) {
		if ((n = read_rows(a->db, after, cutoff, ids, ds, nds)) <= 0)
			break;
		/* Most rows were applied by their actions: only the others
		 * are applied here (again is harmless: at most once). */
		memset(done, 0, (size_t)n * sizeof(*done));
		memset(held, 0, (size_t)n * sizeof(*held));
		/* read even after a row of this pass failed (up 0): a later
		 * batch's row that its action sent in part must keep what a
		 * node took out of the backlog too; not when Redis answers
		 * nothing (rds_up()) */
		if ((up || rds_up(a->rds)) &&
		    applied_rows(a, ids, ds, nds, n, done, held) == -1) {
			up = 0;
			memset(done, 0, (size_t)n * sizeof(*done));
			memset(held, 0, (size_t)n * sizeof(*held));
		}
		for (i = 0; i < n; i++) {
			all_cleared &= !done[i];
			if (nds[i] == 0 || done[i])
				continue;
			memset(in, 0, sizeof(in));
			if (up && cstore_apply_once_1(a, ids[i],
			    ds + (size_t)i * OUTBOX_MAX, nds[i], in) == -1)
				up = 0;
			all_cleared &= !up;	/* applied: not cleared */
			/* a row after one Redis refused is not sent: what
			 * its buckets' marks say they hold stays out of the
			 * backlog all the same */
			for (j = 0; j < nds[i]; j++)
				in[j] |= (held[i] >> j) & 1u;
			if (!up && to_backlog(a, ids[i],
			    ds + (size_t)i * OUTBOX_MAX, nds[i], in) == -1) {
				n = -1;
				break;
			}
		}
		if (n == -1)
			break;
		/* Applied: no later application of these rows may count. */
		if (up && finish(a, ds, nds, n, ids[n - 1]) == -1)
			up = 0;
		after = ids[n - 1];
		total += n;
		if (n < DRAIN_ROWS)
			break;
	}
	/* Every row up to cutoff is applied and finished, or cleared (its
	 * deltas in the backlog): they go, but the newest. */
	if (n != -1 && up && delete_upto(a->db, cutoff) == -1)
		n = -1;
	if (n != -1 && all_cleared && after > cleared_upto)
		cleared_upto = after;
	free(ids);
	free(nds);
	free(done);
	free(held);
	free(ds);
	return n == -1 ? -1 : total;
}
