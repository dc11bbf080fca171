/* reconcile.c -- reconciliation; see reconcile.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/rnd.h"
#include "count/cstore.h"
#include "count/moved.h"
#include "count/reconcile.h"
#include "count/recount.h"
#include "count/settle.h"
#include "store/dbq.h"

#define REC_CHUNK	500	/* keys per Redis pipeline */
#define REC_SETTLE	2000	/* candidates settled together */

static int
entry_cmp(const void *a, const void *b)
{
	const struct rec_entry *x = a, *y = b;

	if (x->k1 != y->k1)
		return x->k1 < y->k1 ? -1 : 1;
	if (x->k2 != y->k2)
		return x->k2 < y->k2 ? -1 : 1;
	return 0;
}

struct vec {
	struct rec_entry	*v;
	size_t		 n, cap;
};

static void
vec_push(struct vec *v, long long k1, long long k2, long long t, long long d)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 1024;
		v->v = xrealloc(v->v, v->cap * sizeof(*v->v));
	}
	v->v[v->n].k1 = k1;
	v->v[v->n].k2 = k2;
	v->v[v->n].t = t;
	v->v[v->n].d = d;
	v->v[v->n].owner = 0;
	v->n++;
}

/* Every post counter of v (sorted by k1) gets its post's author, which
 * names its bucket (cname.h): one pass over the posts, merged. */
static int
post_owners(struct db *db, struct vec *v)
{
	struct dbq *s = dbq_stmt(db, STMT_POST_OWNERS);
	size_t i = 0;
	long long id;
	int rc = DBQ_DONE;

	if (s == NULL)
		return -1;
	while (i < v->n && (rc = dbq_step(s)) == DBQ_ROW) {
		id = dbq_i64(s, 0);
		while (i < v->n && v->v[i].k1 < id)
			i++;		/* no such post: bucket of 0 */
		while (i < v->n && v->v[i].k1 == id)
			v->v[i++].owner = dbq_i64(s, 1);
	}
	dbq_done(s);
	return i < v->n && rc == DBQ_ERR ? -1 : 0;
}

static int
push_truth(const struct delta *dl, void *arg)
{
	vec_push(arg, dl->k1, dl->k2, dl->d, 0);
	return 0;
}

/* Truth and durable values of every key of fam, merged, sorted. */
static int
load_family(struct db *db, enum family fam, struct vec *out)
{
	struct vec truth = { 0 }, dur = { 0 };
	struct dbq *s;
	long long k1, k2;
	size_t i = 0, j = 0;
	const char *key;
	int rc;

	if (recount_family(db, fam, push_truth, &truth) < 0)
		goto fail;
	if ((s = dbq_stmt(db, STMT_COUNTERS_OF_FAMILY)) == NULL)
		goto fail;
	dbq_bind_text(s, 1, families[fam].name, -1);
	while ((rc = dbq_step(s)) == DBQ_ROW) {
		key = dbq_text(s, 0);
		k2 = 0;
		if (key == NULL || sscanf(key, "%lld:%lld", &k1, &k2) < 1)
			continue;
		vec_push(&dur, k1, k2, 0, dbq_i64(s, 1));
	}
	dbq_done(s);
	if (rc != DBQ_DONE)
		goto fail;
	if (truth.n > 1)
		qsort(truth.v, truth.n, sizeof(*truth.v), entry_cmp);
	if (dur.n > 1)
		qsort(dur.v, dur.n, sizeof(*dur.v), entry_cmp);
	while (i < truth.n || j < dur.n) {
		int c = i == truth.n ? 1 : j == dur.n ? -1 :
		    entry_cmp(&truth.v[i], &dur.v[j]);

		if (c < 0) {
			vec_push(out, truth.v[i].k1, truth.v[i].k2, truth.v[i].t, 0);
			i++;
		} else if (c > 0) {
			vec_push(out, dur.v[j].k1, dur.v[j].k2, 0, dur.v[j].d);
			j++;
		} else {
			vec_push(out, truth.v[i].k1, truth.v[i].k2, truth.v[i].t,
			    dur.v[j].d);
			i++;
			j++;
		}
	}
	free(truth.v);
	free(dur.v);
	return families[fam].obj == OBJ_POST ? post_owners(db, out) : 0;
fail:
	free(truth.v);
	free(dur.v);
	return -1;
}

/* Whether flush batch id is applied, asked of SQLite once while the same
 * id repeats (the keys of a chunk share a few batches; a stale "no" only
 * makes a candidate, which settle() checks exactly).  1, 0, or -1. */
static int
applied_once(struct app *a, const char *id, char last[24], int *res)
{
	if (strcmp(id, last) != 0) {
		*res = dbq_batch_applied(a->db, id);
		snprintf(last, 24, "%s", id);
	}
	return *res;
}

static int
id_cmp(const void *x, const void *y)
{
	long long a = *(const long long *)x, b = *(const long long *)y;

	return (a > b) - (a < b);
}

/* The objects of a kind whose live counters Redis holds, sorted, found
 * once a run (a SCAN of the keyspace's hashes of that kind). */
struct rec_live {
	long long	*ids[OBJ_USER_TOPIC];
	size_t		 n[OBJ_USER_TOPIC];
	int		 have[OBJ_USER_TOPIC];
};

/* Adds to all (sorted, every key with truth or a counters row) the keys
 * only Redis knows: an object whose live value says what neither its rows
 * nor SQLite's counters do (a value nobody recounted would never be
 * seen).  Pairs of (user, topic) are not scanned.  0, or -1. */
static int
add_redis_only(struct app *a, enum family fam, struct vec *all,
    struct rec_live *lv)
{
	enum obj obj = families[fam].obj;
	size_t i, j = 0, had = all->n;

	if (obj == OBJ_USER_TOPIC)
		return 0;
	if (!lv->have[obj]) {
		if (cname_live_objects(a, obj, &lv->ids[obj], &lv->n[obj]) == -1)
			return -1;
		if (lv->n[obj] > 1)
			qsort(lv->ids[obj], lv->n[obj], sizeof(long long), id_cmp);
		lv->have[obj] = 1;
	}
	for (i = 0; i < lv->n[obj]; i++) {
		if (i > 0 && lv->ids[obj][i] == lv->ids[obj][i - 1])
			continue;	/* SCAN may give a key twice */
		while (j < had && all->v[j].k1 < lv->ids[obj][i])
			j++;
		if (j < had && all->v[j].k1 == lv->ids[obj][i])
			continue;
		vec_push(all, lv->ids[obj][i], 0, 0, 0);
	}
	if (all->n == had)
		return 0;
	qsort(all->v, all->n, sizeof(*all->v), entry_cmp);
	return obj == OBJ_POST ? post_owners(a->db, all) : 0;
}

static int
reconcile_family(struct app *a, enum family fam, int dry,
    struct rec_family *rf, struct rec_live *lv)
{
	struct vec all = { 0 }, cand = { 0 };
	struct moved mv;
	struct rstate *st;
	char last[24] = "";
	long long p;
	size_t i, j, n;
	int rc = -1, last_applied = 0;

	/* Redis before the truth, the truth, what may still be on its way:
	 * a key that moved between the reads is settled, not compared
	 * (moved.h). */
	if (moved_begin(a, fam, &mv) == -1 ||
	    load_family(a->db, fam, &all) == -1 ||
	    add_redis_only(a, fam, &all, lv) == -1 ||
	    moved_pending(a, &mv) == -1) {
		moved_end(a, &mv);
		moved_free(&mv);
		free(all.v);
		return -1;
	}
	fault_point("reconcile-loaded");	/* truth read, Redis not yet */
	st = xcalloc(REC_CHUNK, sizeof(*st));
	for (i = 0; i < all.n; i += REC_CHUNK) {
		n = all.n - i < REC_CHUNK ? all.n - i : REC_CHUNK;
		if (settle_read_states(a, fam, all.v + i, n, st) == -1)
			goto out;
		for (j = 0; j < n; j++) {
			struct rec_entry *e = &all.v[i + j];

			rf->checked++;
			p = strtoll(st[j].pend, NULL, 10);
			if (st[j].batch[0] != '\0' &&
			    applied_once(a, st[j].batch, last, &last_applied) != 1)
				p += st[j].fly;
			if (e->t != e->d + p ||
			    (st[j].has_live && st[j].live != e->d + p) ||
			    moved_key(&mv, e, &st[j])) {
				vec_push(&cand, e->k1, e->k2, e->t, e->d);
				cand.v[cand.n - 1].owner = e->owner;
			}
		}
		/* Candidates wait for a full batch: one grace period each. */
		if (cand.n >= REC_SETTLE) {
			if (settle_keys(a, fam, dry, cand.v, cand.n, rf) == -1)
				goto out;
			cand.n = 0;
		}
	}
	if (cand.n > 0 && settle_keys(a, fam, dry, cand.v, cand.n, rf) == -1)
		goto out;
	rc = 0;
out:
	moved_end(a, &mv);
	moved_free(&mv);
	free(st);
	free(all.v);
	free(cand.v);
	return rc;
}

/* A value SQLite keeps in the rows it describes (posts.like_count, a
 * notification group's size and unread), checked and repaired by id
 * range in short transactions, each recount inside its own: a writer
 * comes between two chunks, never inside one.  On PostgreSQL, whose
 * writers run at once, the chunk's rows are locked first (in id order),
 * so the recount's snapshot, taken after, holds every writer that
 * changed them, and a later one adds its change to the repaired value.
 * Groups are locked after their posts' rows (pre, shared, in the posts'
 * id order), as a group commit takes a post's row and then its group
 * (web/batch.h): taken by the groups' ids alone, a chunk whose groups run
 * against their posts could hold one group a commit needs while waiting
 * for another the commit holds. */
struct rec_rows {
	enum stmt	 max_id, drift, pre, lock, fix;	/* pre: STMT__MAX, none */
	const char	*what;
};

static const struct rec_rows like_counts = {
	STMT_POST_MAX_ID, STMT_LIKE_COUNT_DRIFT, STMT__MAX,
	STMT_LIKE_COUNT_LOCK, STMT_LIKE_COUNT_FIX, "posts"
};
static const struct rec_rows note_groups = {
	STMT_NOTE_GROUP_MAX_ID, STMT_NOTE_GROUP_DRIFT,
	STMT_NOTE_GROUP_POSTS_LOCK, STMT_NOTE_GROUP_LOCK, STMT_NOTE_GROUP_FIX,
	"groups"
};

#define REC_TRIES	3	/* a repair lost to a deadlock, run again */

/* Repairs w's rows lo..hi in one transaction; how many it changed, or -1.
 * A transaction that lost to another (db_retryable(): a deadlock with a
 * writer that takes its rows in another order, which PostgreSQL broke by
 * failing this one) was rolled back whole and runs again: the busy site
 * it met is no reason to fail the run. */
static long long
repair_rows(struct app *a, const struct rec_rows *w, long long lo,
    long long hi)
{
	long long n;
	int tries;

	for (tries = 1; ; tries++) {
		if (db_begin(a->db) == 0 && (w->pre == STMT__MAX ||
		    dbq_run_ll2(a->db, w->pre, lo, hi) == 0) &&
		    dbq_run_ll2(a->db, w->lock, lo, hi) == 0 &&
		    dbq_run_ll2(a->db, w->fix, lo, hi) == 0) {
			n = dbq_changes(a->db);
			if (db_commit(a->db) == 0)
				return n;
		}
		db_rollback(a->db);
		if (tries == REC_TRIES || !db_retryable(a->db))
			return -1;
		log_info("reconcile: the repair of %s %lld-%lld lost to "
		    "another transaction, run again", w->what, lo, hi);
	}
}

/* w's rows against their truth, 5000 ids a transaction. */
static int
reconcile_rows(struct app *a, int dry, struct rec_family *rf,
    const struct rec_rows *w)
{
	struct dbq *s;
	long long max = 0, lo, n, err;
	int rc;

	if ((s = dbq_stmt(a->db, w->max_id)) == NULL)
		return -1;
	if ((rc = dbq_step(s)) == DBQ_ROW)
		max = dbq_i64(s, 0);
	dbq_done(s);
	if (rc == DBQ_ERR)	/* no rows known: no "checked, 0 wrong" */
		return -1;
	for (lo = 1; lo <= max; lo += 5000) {
		if ((s = dbq_stmt(a->db, w->drift)) == NULL)
			return -1;
		dbq_bind_i64(s, 1, lo);
		dbq_bind_i64(s, 2, lo + 4999);
		n = err = 0;
		if ((rc = dbq_step(s)) == DBQ_ROW) {
			n = dbq_i64(s, 0);
			err = dbq_i64(s, 1);
		}
		dbq_done(s);
		if (rc == DBQ_ERR)	/* a failed check is no "0 wrong" */
			return -1;
		rf->checked += (lo + 4999 < max ? 5000 : max - lo + 1);
		if (n == 0)
			continue;
		rf->wrong += n;
		if (err > rf->max_err)
			rf->max_err = err;
		if (rf->nex < REC_EXAMPLES)
			snprintf(rf->ex[rf->nex++], sizeof(rf->ex[0]),
			    "%s %lld-%lld", w->what, lo, lo + 4999);
		if (dry)
			continue;
		fault_point("reconcile-rows");	/* drift found, nothing locked */
		if ((n = repair_rows(a, w, lo, lo + 4999)) == -1)
			return -1;
		rf->fixed += n;
	}
	return 0;
}

int
reconcile_sample(struct app *a, enum family fam, int n, long long *checked,
    long long *wrong)
{
	struct rec_family rf;
	struct rec_entry e[16];
	struct dbq *s;
	long long mu = 0, mp = 0, mt = 0, id;
	int i, k = 0, rc;

	if (families[fam].recount_one == NO_RECOUNT)
		return 0;
	if ((s = dbq_stmt(a->db, STMT_MAX_IDS)) == NULL)
		return -1;
	if (dbq_step(s) == DBQ_ROW) {
		mu = dbq_i64(s, 0);
		mp = dbq_i64(s, 1);
		mt = dbq_i64(s, 2);
	}
	dbq_done(s);
	if (n > 16)
		n = 16;
	for (i = 0; i < n; i++) {
		memset(&e[k], 0, sizeof(e[k]));
		switch (families[fam].obj) {
		case OBJ_USER:
			if (mu == 0)
				continue;
			e[k].k1 = 1 + rnd_below(mu);
			break;
		case OBJ_POST:
			if (mp == 0)
				continue;
			e[k].k1 = 1 + rnd_below(mp);
			if (cname_post_owner(a->db, e[k].k1, &e[k].owner) == -1)
				return -1;
			break;
		case OBJ_TOPIC:
			if (mt == 0)
				continue;
			e[k].k1 = 1 + rnd_below(mt);
			break;
		case OBJ_USER_TOPIC:
			if (mp == 0 ||
			    (s = dbq_stmt(a->db, STMT_POST_AT_OR_AFTER)) == NULL)
				continue;
			id = 1 + rnd_below(mp);
			dbq_bind_i64(s, 1, id);
			if (dbq_step(s) == DBQ_ROW) {
				e[k].k1 = dbq_i64(s, 0);
				e[k].k2 = dbq_i64(s, 1);
			}
			dbq_done(s);
			if (e[k].k1 == 0)
				continue;
			break;
		}
		k++;
	}
	memset(&rf, 0, sizeof(rf));
	/* waited: the keys were not compared, so not counted wrong */
	if (k > 0 && (rc = settle_keys(a, fam, 1, e, (size_t)k, &rf)) != 0)
		return rc;
	*checked += k;
	*wrong += rf.wrong;
	return 0;
}

int
reconcile(struct app *a, int dry, int from, struct rec_report *rep,
    rec_progress progress, void *arg)
{
	struct rec_live lv;
	int step, rc = 0, i;

	memset(&lv, 0, sizeof(lv));
	for (step = from; step < REC_FAMILIES; step++) {
		if (step == 0)
			rc = reconcile_rows(a, dry, &rep->fam[0], &like_counts);
		else if (step == REC_NOTE_GROUPS)
			rc = reconcile_rows(a, dry, &rep->fam[step],
			    &note_groups);
		else if (families[step - 1].recount == NO_RECOUNT)
			rc = 0;		/* views: no truth rows */
		else
			rc = reconcile_family(a, (enum family)(step - 1), dry,
			    &rep->fam[step], &lv);
		if (rc == -1) {
			log_warn("reconcile: %s failed (Redis or SQLite)",
			    rep->fam[step].name);
			break;
		}
		if (progress != NULL && progress(arg, (step + 1) * 100 /
		    REC_FAMILIES, step + 1, rep) == -1) {
			rc = -1;
			break;
		}
	}
	for (i = 0; i < OBJ_USER_TOPIC; i++)
		free(lv.ids[i]);
	return rc == -1 ? -1 : 0;
}
