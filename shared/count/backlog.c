/* backlog.c -- the SQLite backlog of counter deltas Redis did not take,
 * settled; see backlog.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/log.h"
#include "count/backlog.h"
#include "count/cstore.h"
#include "count/settle.h"
#include "store/dbq.h"

/* A row-less counter's backlog row (views: no truth to settle to),
 * "<key>#<token>", goes to Redis under its token: applied once, whether
 * or not the write that timed out had been done; then the row goes (by
 * its version).  A row from before tokens ("<key>") gets one of its
 * own.  1 done, 0 Redis failed (the row stays), -1 SQLite failed. */
static int
backlog_apply(struct app *a, enum family fam, const char *key,
    long long delta, long long ver, long long owner)
{
	struct delta d = { fam, 0, 0, delta, owner };
	const char *hash = strchr(key, '#');
	char token[128];
	struct dbq *s;
	int rc;

	if (sscanf(key, "%lld:%lld", &d.k1, &d.k2) < 1)
		return 0;
	if (hash != NULL)
		snprintf(token, sizeof(token), "%s", hash + 1);
	else
		snprintf(token, sizeof(token), "backlog-%s-%lld", key, ver);
	if (delta != 0 && cstore_apply_token(a, token, &d) == -1)
		return 0;
	if ((s = dbq_stmt(a->db, STMT_BACKLOG_DONE)) == NULL)
		return -1;
	dbq_bind_text(s, 1, families[fam].name, -1);
	dbq_bind_text(s, 2, key, -1);
	dbq_bind_i64(s, 3, ver);
	rc = dbq_step(s);
	dbq_done(s);
	return rc == DBQ_DONE ? 1 : -1;
}

/* Keeps aside a row that no counter of this build can take (a family it
 * does not know, a key it cannot read: from another version, or written
 * by hand): waiting, it kept the backlog from ever being empty.  In
 * counter_backlog_bad, with when it was found, for an operator; what it
 * would have changed a reconciliation repairs.  1 kept aside, 0 it
 * changed since read (the next pass), -1 SQLite failed. */
static int
quarantine(struct db *d, const char *name, const char *key, long long ver)
{
	struct dbq *s;
	int kept = -1, gone = -1;

	if (db_begin(d) == -1)
		return -1;
	if ((s = dbq_stmt(d, STMT_BACKLOG_QUARANTINE)) != NULL) {
		dbq_bind_text(s, 1, name, -1);
		dbq_bind_text(s, 2, key, -1);
		dbq_bind_i64(s, 3, ver);
		dbq_bind_i64(s, 4, clock_wall_ms());
		kept = dbq_write(d, s);
	}
	if (kept >= 0 && (s = dbq_stmt(d, STMT_BACKLOG_DONE)) != NULL) {
		dbq_bind_text(s, 1, name, -1);
		dbq_bind_text(s, 2, key, -1);
		dbq_bind_i64(s, 3, ver);
		gone = dbq_write(d, s);
	}
	if (kept < 0 || gone != kept || db_commit(d) == -1) {
		db_rollback(d);
		return -1;
	}
	if (gone > 0)
		log_err("backlog row %s %s: no counter takes it, moved to "
		    "counter_backlog_bad (a reconciliation repairs what it "
		    "would have changed)", name, key);
	return gone > 0;
}

/* 1 when a counter of this build takes the backlog row of name and key:
 * a family it knows, and a key in the form it writes (counters_key(),
 * which a settle deletes the row by; a row-less counter's followed by
 * "#<token>").  " 12", "12x" or a rating's "12" parsed, but matched no
 * row to delete: settled again and again, never gone (and a view's
 * "12x" counted for post 12). */
static int
takes(const char *name, const char *key)
{
	enum family fam = counters_family(name);
	struct delta d = { fam, 0, 0, 0, 0 };
	const char *hash = strchr(key, '#');
	size_t len = hash != NULL ? (size_t)(hash - key) : strlen(key);
	char canon[64];

	if (fam == FAM__MAX || sscanf(key, "%lld:%lld", &d.k1, &d.k2) < 1 ||
	    (hash != NULL && families[fam].recount_one != NO_RECOUNT))
		return 0;
	counters_key(&d, canon, sizeof(canon));
	return strlen(canon) == len && strncmp(canon, key, len) == 0;
}

/* A backlog row as read: name and key whole (a row from elsewhere may
 * be of any length: cut, it would match no row to keep aside). */
struct brow {
	char		*name;
	char		*key;
	long long	 delta;
	long long	 ver;
};

static void
rows_free(struct brow *rows, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		free(rows[i].name);
		free(rows[i].key);
	}
	free(rows);
}

int
backlog_settle(struct app *a)
{
	struct brow *rows;
	struct rec_entry *e;
	struct rec_family rf;
	struct dbq *s;
	enum family fam;
	int n = 0, i, k, rc = DBQ_DONE, done = 0;

	rows = xcalloc(500, sizeof(*rows));
	e = xcalloc(500, sizeof(*e));
	if ((s = dbq_stmt(a->db, STMT_BACKLOG_BATCH)) == NULL) {
		rows_free(rows, 0);
		free(e);
		return -1;
	}
	dbq_bind_int(s, 1, 500);
	while (n < 500 && (rc = dbq_step(s)) == DBQ_ROW) {
		rows[n].name = xstrdup(dbq_text(s, 0) ? dbq_text(s, 0) : "");
		rows[n].key = xstrdup(dbq_text(s, 1) ? dbq_text(s, 1) : "");
		rows[n].delta = dbq_i64(s, 2);
		rows[n].ver = dbq_i64(s, 3);
		n++;
	}
	dbq_done(s);
	if (n < 500 && rc == DBQ_ERR) {
		rows_free(rows, n);
		free(e);
		return -1;
	}
	/* Rows no family takes are kept aside (their name emptied here:
	 * no family's below) */
	for (i = 0; i < n && done >= 0; i++) {
		if (takes(rows[i].name, rows[i].key))
			continue;
		if ((rc = quarantine(a->db, rows[i].name, rows[i].key,
		    rows[i].ver)) == -1)
			done = -1;
		else
			done += rc;
		rows[i].name[0] = '\0';
	}
	/* Family by family: the keys with truth settled together (their
	 * rows go once settled), the others' deltas applied. */
	for (fam = 0; fam < FAM__MAX && done >= 0; fam++) {
		for (k = 0, i = 0; i < n; i++) {
			if (counters_family(rows[i].name) != fam)
				continue;
			memset(&e[k], 0, sizeof(e[k]));
			(void)sscanf(rows[i].key, "%lld:%lld", &e[k].k1,
			    &e[k].k2);	/* read above */
			if (families[fam].obj == OBJ_POST &&
			    cname_post_owner(a->db, e[k].k1, &e[k].owner) == -1) {
				done = -1;
				break;
			}
			if (families[fam].recount_one == NO_RECOUNT) {
				rc = backlog_apply(a, fam, rows[i].key,
				    rows[i].delta, rows[i].ver, e[k].owner);
				if (rc == -1)
					done = -1;
				else
					done += rc;
				continue;
			}
			k++;
		}
		if (done < 0 || k == 0)
			continue;
		memset(&rf, 0, sizeof(rf));
		if ((rc = settle_keys(a, fam, 0, e, (size_t)k, &rf)) == -1)
			done = -1;
		else
			done += k - (int)rf.queued;
		/* a writer's transaction open: the rest waits for the next
		 * pass, not a wait of its own each */
		if (rc == SETTLE_WAITED)
			break;
	}
	rows_free(rows, n);
	free(e);
	return done;
}

int
backlog_waits(struct app *a)
{
	struct dbq *s = dbq_stmt(a->db, STMT_BACKLOG_BATCH);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_int(s, 1, 1);
	rc = dbq_step(s);
	dbq_done(s);
	return rc == DBQ_ROW ? 1 : rc == DBQ_DONE ? 0 : -1;
}
