/* outbox.h -- an action's counter deltas, recorded in the action's own
 * SQLite transaction and applied to Redis at most once.
 *
 * Without it, a process killed between an action's commit and its Redis
 * delta left the counters short until the next reconciliation.  Now:
 *   1. the action computes its deltas (the formula, counters.h) before it
 *      commits and writes them as one counter_outbox row in the same
 *      transaction (outbox_add): committed together or not at all;
 *   2. after the commit it applies them (outbox_send): one script per
 *      Redis bucket that marks the row's id in {c<B>}:outbox, so a second
 *      application of the same row changes nothing (cstore_apply_once);
 *      when Redis fails, the row's deltas move to the SQLite backlog
 *      (cstore_backlog) in one transaction that clears the row;
 *   3. the worker drains the outbox every second (outbox_drain): every row
 *      older than a second is applied again -- a no-op where the action
 *      did it, the missing delta where its process died -- then deleted,
 *      and each bucket it touched learns "rows up to N are finished"
 *      (meta o), which refuses a late application and lets the marks go.
 * So after a SIGKILL at any point the counts converge within seconds,
 * with no reconciliation.  Reconciliation drains before it corrects a
 * key (an outbox row committed before its recount must be in Redis
 * before the correction, or it would be counted twice), and tallyctl
 * flush drains before it flushes.
 *
 * The finished-up-to mark must never pass a row that may still commit.
 * On SQLite (one writer at a time) ids commit in their order; on
 * PostgreSQL writers run at once, and a transaction that took id 10 may
 * commit after one that took id 11.  So the drain goes no further than
 * the horizon (outbox_horizon()): the newest id handed out before the
 * transactions then running had all ended.  A row below it is committed
 * or never will be; a row above it waits for a later drain, its action
 * having applied it meanwhile.  The newest row is never deleted, so an
 * id is never handed out twice (a cleared row keeps deltas '').
 *
 * A row's deltas, as text: "family k1 k2 d owner" per counter, ';' between
 * (rows written before owners existed end at d: owner 0, cname.h).
 */
#ifndef TALLY_OUTBOX_H
#define TALLY_OUTBOX_H

#include "count/counters.h"
#include "store/app.h"

#define OUTBOX_MAX	(2 * DELTA_MAX)
#define OUTBOX_AGE_MS	1000	/* the worker leaves younger rows to their
				   actions */

/* The deltas of one action, gathered before its commit. */
struct outbox {
	struct delta	ds[OUTBOX_MAX];
	int		n;
	long long	id;		/* its row, once added */
	int		deferred;	/* its row waits for the group's end
					   (outbox_group_end()) */
};

/* Appends the formula's deltas for a row change (counters_deltas). */
void	outbox_formula(struct outbox *, const struct row *old,
	    const struct row *new);
/* Appends n deltas (merged later by Redis, not here). */
void	outbox_deltas(struct outbox *, const struct delta *, int n);
/* Writes the row in the open write transaction (nothing when no delta).
 * In a group on PostgreSQL (db_group_defers()) the row waits for the
 * group's end instead: outbox_send() keeps it with the group, and
 * outbox_group_end() writes it.  0, or -1 (logged): the caller rolls
 * back. */
int	outbox_add(struct db *, struct outbox *);
/* outbox_add(), then the commit: the row's statement carries the COMMIT
 * where each statement is a round trip (db_commit_next()), but while a
 * test aims at the point between them (fault.h: outbox-commit).  0, or
 * -1 (logged): the caller rolls back. */
int	outbox_commit(struct db *, struct outbox *);
/* After the commit: applies the row to Redis (or moves it to the
 * backlog when Redis fails).  Never fails the action: what it cannot do
 * the worker's drain does.  Inside a group commit (web/batch.h) it waits
 * for the group's commit, and the group's rows go in one round trip. */
void	outbox_send(struct app *, struct outbox *);
/* At the end of a group on PostgreSQL, before db_group_end(): the rows
 * of the group's kept actions in one statement, which carries the
 * group's COMMIT (db_group_commit_next()) and gives each row its id
 * (while a test aims at outbox-commit, the COMMIT goes alone after it).
 * A group of ten likes was ten round trips for their rows and one for
 * the COMMIT; it is one.  Ids are taken after the group's transaction
 * id, as a lone action's are (outbox_horizon()).  Nothing when the group
 * was lost or kept no row.  0, or -1 (logged; the COMMIT then fails and
 * db_group_end() says so). */
int	outbox_group_end(struct app *);
/* Applies every row at least min_age_ms old (0: every row), then deletes
 * them and marks their buckets finished.  With Redis down, moves them to
 * the backlog instead.  Returns how many rows; OUTBOX_WAITED when rows
 * wait for a transaction that may still commit an earlier id
 * (outbox_horizon()), none applied; or -1. */
int	outbox_drain(struct app *, long long min_age_ms);

/* The newest outbox id below which every row is committed or never
 * will be: on PostgreSQL, the newest id handed out now, once every write
 * transaction of tally's running now has ended (each writer takes its
 * transaction id at BEGIN, before its outbox id: pg.c; tally's
 * connections are those whose application_name begins with "tally":
 * sql_pg.c); waits up to OUTBOX_WAIT_MS for them, else OUTBOX_WAITED
 * (logged: one of them stalls, or waits on a lock; while it runs, later
 * calls of the process answer OUTBOX_WAITED at once), or -1 when the
 * database failed.  Another client's transaction, which writes no outbox
 * row, is not waited for.  On SQLite any id (LLONG_MAX).  Outside a
 * transaction: it must see transactions end. */
#define OUTBOX_WAIT_MS	2000
#define OUTBOX_WAITED	(-2)
long long outbox_horizon(struct db *);

/* Applies again (at most once, as ever) every row up to id upto that
 * has a delta for which touches() says yes: a correction (settle.h)
 * makes sure that what its recount holds is in Redis.  0, or -1 when
 * SQLite or Redis failed. */
int	outbox_reapply(struct app *, long long upto,
	    int (*touches)(const struct delta *, void *), void *arg);

/* Calls fn for every delta of every row the outbox holds now: actions
 * committed whose deltas may not be in Redis yet (count/moved.h).  0,
 * or -1 when SQLite failed. */
int	outbox_each(struct app *, void (*fn)(const struct delta *, void *),
	    void *arg);

/* Row text to and from deltas (exposed for tests): encode returns the
 * length written (-1 when it does not fit); decode the number of deltas,
 * or -1 on a malformed text. */
int	outbox_encode(const struct delta *, int n, char *out, size_t sz);
int	outbox_decode(const char *, struct delta *, int max);

/* The setting that holds the newest id the drain deleted up to: every
 * id up to it committed before the drain's transaction, or never will. */
#define OUTBOX_FLOOR	"outbox_floor"

#endif
