/* db.h -- the database connection of one process (SQLite, or PostgreSQL:
 * pg.h), with its statement cache.
 *
 * Open after fork(), never share across processes.  Every statement from
 * dbq_stmt() must be handed back with dbq_done() (reset + clear bindings) on
 * every path, or it holds its read snapshot.  Write transactions are
 * BEGIN IMMEDIATE (db_begin), short, and never contain Redis I/O.
 */
#ifndef TALLY_DB_H
#define TALLY_DB_H

#include <stdint.h>

#include "store/sql.h"

struct metrics;

struct db;

#define DB_BUSY_MS	5000	/* how long a statement waits for a lock */
/* Once a connection's wait for the writers' lock ran out, the lock is
 * known held: for DB_STUCK_MS after that (renewed by each of its waits
 * that runs out), that connection's waits last DB_STUCK_WAIT_MS, so that
 * the requests that queued behind the wait are answered busy at once,
 * not after DB_BUSY_MS each (past nginx's fastcgi_read_timeout, a 504).
 * Its taking the lock ends it.  Logged when it starts, every DB_STUCK_MS
 * while it lasts, and when it ends. */
#define DB_STUCK_MS	10000	/* how long the lock is known held */
#define DB_STUCK_WAIT_MS	200	/* a wait for it meanwhile */
#define DB_CKPT_WAIT_MS	20	/* how long a checkpoint waits for readers */
#define DB_CKPT_PASSES	4	/* passive checkpoints before the locked one */
#define DB_CKPT_LEFT	64	/* frames one may copy and be the last */

/* A connection of its own, for a thread beside the process's (a run's
 * lease renewer, count/runs.c): path opened as the process's is; NULL on
 * a failure (logged).  db_free() closes and frees it. */
struct db	*db_new(const char *path);
void		 db_free(struct db *);
/* What the writers' lock times are recorded as (/metrics,
 * metrics_lock()): m and the holder's slot (NULL: not recorded). */
void		 db_lock_metrics(struct db *, struct metrics *m, int who);
/* Statements run since the start, and round trips to the database
 * server (PostgreSQL's; 0 for SQLite, which runs in the process): the
 * per-request cost in /metrics. */
unsigned long long db_nstmt(const struct db *);
unsigned long long db_ntrips(const struct db *);
/* Statements whose results came read ahead with others' (dbq.h:
 * dbq_ahead_take(); 0 for SQLite). */
unsigned long long db_nahead(const struct db *);
/* Write transactions committed since the start (db_commit(), a group's
 * db_group_end(): one for the group): actions a commit in /metrics. */
unsigned long long db_ncommits(const struct db *);
/* Counts each statement's runs by its number into runs (STMT__MAX
 * counters, shared: metrics.h), NULL: not counted. */
void		 db_count_runs(struct db *, uint64_t *runs);
/* 1 inside a group commit (db_group_begin()): what is committed waits for
 * app_commit_done(). */
int		 db_grouped(const struct db *);
/* 1 when groups may run in several processes at once: PostgreSQL's, each
 * its own transaction waiting only on the rows it shares with another.
 * 0 on SQLite, whose group holds the writers' lock: a pool of one
 * groups there. */
int		 db_groups_at_once(const struct db *);
/* The engine's name, as /healthz says it: "sqlite" or "postgresql". */
const char	*db_engine_name(const struct db *);
/* Savepoints released (kept) so far: a caller compares two readings to
 * know whether what it did in between was kept. */
unsigned long long db_released(const struct db *);

/* BEGIN IMMEDIATE, after taking the writers' lock: an flock() on
 * "<database>-wlock".  Writers of all processes queue on it in the
 * kernel and are woken the moment it is free, where SQLite's own lock
 * would make them poll (failed lock calls and sleeps: under concurrent
 * likes they were half the syscalls of a request).  Released by
 * db_commit() and db_rollback(), and by the kernel if the process dies. */
int		 db_begin(struct db *);
int		 db_commit(struct db *);
/* The transaction's next statement carries its COMMIT where each
 * statement is a round trip to a server (PostgreSQL: one round trip
 * less); db_commit() then only reports how it went.  A statement that
 * fails leaves the transaction for db_rollback(), as ever.  Nothing on
 * SQLite, and in a group (whose end commits). */
void		 db_commit_next(struct db *);
void		 db_rollback(struct db *);
/* Opens the write transaction early: the next db_begin() joins it instead
 * of opening its own, so what is read before (a request's session) and
 * the write are one transaction.  0, or -1 (then nothing is held and
 * db_begin() opens its own).  A hold whose transaction ended before the
 * join (SQLite rolled it back by itself) makes that db_begin() fail.
 * db_release() rolls back what is still open
 * after the request: a hold that nobody joined, or a page's leftover. */
int		 db_hold(struct db *);
void		 db_release(struct db *);
/* 1 when the write transaction that failed last lost to another one (a
 * deadlock on PostgreSQL, whose writers run at once) and was rolled back
 * whole: running the action again may pass.  0 on SQLite, and in a group
 * (whose actions keep their locks: the group is lost, db_group_lost()). */
int		 db_retryable(struct db *);
/* 1 when the write that failed last waited for a lock and ran out of
 * time (DB_BUSY_MS: the writers' lock or SQLite's own on SQLite,
 * lock_timeout on PostgreSQL): that write was not made, and the same
 * write a moment later may well pass (web/route.c answers 503 when the
 * request committed nothing else).  db_forget_failure() clears it (and
 * the failure db_retryable() reads): its readers call it where a
 * request's writes start (web/route.c, web/batch.c), so that an earlier
 * request's, or an after-commit hook's, is never taken for its own. */
int		 db_busy(struct db *);
void		 db_forget_failure(struct db *);
/* A read transaction for several reads that belong together (a group
 * commit's sessions, checked before its write transaction): one snapshot
 * and one WAL read lock for all, not one a statement.  SQLite only: -1 on
 * PostgreSQL or inside a transaction (the reads then run as before).
 * db_read_end() ends it; nothing when db_read_begin() opened none (a
 * transaction open then is another's). */
int		 db_read_begin(struct db *);
void		 db_read_end(struct db *);
/* A request's reads, or those of the requests a reader took together
 * (web/serve.c), in one read transaction: while on, the first read-only
 * statement run outside a transaction opens one (BEGIN; the snapshot is
 * taken by that statement, after the requests arrived), and it stays
 * open until db_reads_end().  A statement that writes, and every call
 * that opens a transaction of its own (db_begin(), db_hold(),
 * db_read_begin(), db_snapshot_begin(), db_group_begin(), db_exec()),
 * ends it first: a write never runs in it, and the reads after a write
 * see it.  Each autocommit statement took and dropped the WAL's read
 * lock (two fcntl() calls) and checked the WAL's header; a feed ran
 * three or four.  SQLite only: nothing on PostgreSQL, where a
 * transaction costs round trips.
 * A read whose answer refills a Redis cache guarded by something read
 * from Redis just before (a generation, a rebuild's lock or marker)
 * calls db_reads_end() first: the shared snapshot may be older than that
 * Redis read, and a change committed in between (a logout, a rename, a
 * moved marker, a post) went back into the cache as it was before. */
void		 db_reads_together(struct db *, int on);
void		 db_reads_end(struct db *);
/* A read snapshot for reads that must agree with each other, on either
 * engine (a counter's durable value and its backlog; a correction's
 * recounts): BEGIN, REPEATABLE READ on PostgreSQL.  db_snapshot_end()
 * commits it, or rolls it back when failed.  Not inside a transaction
 * (dbq_in_txn(), dbq.h).  Both 0, or -1 (logged). */
int		 db_snapshot_begin(struct db *);
int		 db_snapshot_end(struct db *, int failed);
/* Group commit (web/batch.h): one write transaction for the actions of
 * several requests that queued together.  Between db_group_begin() and
 * db_group_end(), db_begin() opens a savepoint, db_commit() releases it
 * (the action's changes are kept, to be committed with the group's) and
 * db_rollback() rolls back to it: each action still succeeds or fails
 * alone, and sees what the actions before it in the group wrote, as if
 * each had committed.  Nothing an action did is durable before
 * db_group_end() returns 0; what must follow a commit (its counter
 * deltas: app_after_commit()) waits for it.  -1 when the lock or BEGIN
 * fails, or a transaction is open (nothing is open then).
 * On PostgreSQL the group takes no lock: groups of several processes run
 * at once, and each action's savepoint rides with its first statement
 * (pg_savepoint()).  An action that lost to another transaction there
 * (a deadlock: the locks the group's earlier actions hold are still
 * held, so running it again in the group would lose again) loses the
 * group: db_group_lost(). */
int		 db_group_begin(struct db *);
/* 1 when an action of the open group lost to another transaction: the
 * group must be rolled back whole (db_group_end() does) and its actions
 * run again, each alone. */
int		 db_group_lost(const struct db *);
/* 1 inside a group on PostgreSQL: an action's outbox row waits for the
 * group's end, where the group's rows are one statement that carries
 * the COMMIT (outbox_group_end()), not a round trip an action. */
int		 db_group_defers(const struct db *);
/* At a group's end on PostgreSQL, before its last statement: rolls back
 * a savepoint a request left open (as db_group_end() would), so that the
 * statement is the group's own; then, when commit and unless the group
 * was lost, the statement carries the group's COMMIT (db_group_end()
 * reports how it went).  Nothing on SQLite or outside a group. */
void		 db_group_commit_next(struct db *, int commit);
/* Makes the open group lost (db_group_lost()): what it cannot commit as
 * it is (an action's part that was never sent) is rolled back whole by
 * db_group_end(), and its actions run again alone. */
void		 db_group_lose(struct db *);
/* COMMIT: 0, or -1 (every action of the group rolled back; always when
 * the group was lost). */
int		 db_group_end(struct db *);
/* Checkpoints the WAL and, once it holds min_frames frames or more (or
 * when truncate), starts it over from its beginning (truncated to 0 bytes
 * when truncate).  A WAL with frames that has not grown since the last
 * call on this connection (nobody writes) is truncated too: the writers
 * lose nothing to the two syncs then, and the file gives its space back
 * (a restart alone leaves it at its size until the next write).  Passive
 * checkpoints first copy what they can, writers going on between them
 * (each holds the writers' lock: ckpt.c, SQLite's WAL-reset bug), each
 * pass what
 * the writers appended during the one before, until one copied fewer than
 * DB_CKPT_LEFT frames (at most DB_CKPT_PASSES passes); when no reader
 * needs older frames, the rest and the restart run under the writers'
 * lock (two syncs: a short stall), readers getting DB_CKPT_WAIT_MS to
 * leave the WAL.  With one pass, the locked part copied everything
 * appended during it and held likes up to 16 ms, which set their p99.
 * Under a steady write load a passive checkpoint alone never catches up
 * with the last frame, so the WAL would only grow (and every page
 * lookup in it slow down).  0, 1 when readers kept the WAL (copied,
 * not restarted), -1 on error. */
int		 db_checkpoint(struct db *, int min_frames, int truncate);
/* Copies what the WAL holds into the database (a passive checkpoint
 * under the writers' lock, no restart: ckpt.c), so that readers read those
 * pages from the database's map and no more from the WAL; nothing on
 * PostgreSQL.  0 (also when another connection was checkpointing: the
 * next call copies), or -1 (logged). */
int		 db_checkpoint_copy(struct db *);
/* Syncs the WAL (what the connection committed is on disk now) and
 * leaves the copy into the database to the next checkpoint: without it,
 * the close of the file's last connection copies the whole WAL and syncs
 * both files, a tenth of a 200,000-counter `tallyctl flush`, for pages
 * the worker's checkpoint copies anyway.  0 or -1. */
int		 db_leave_wal(struct db *);
/* SQLite checkpoints the WAL no more after a commit on this connection
 * (wal_autocheckpoint 0): its checkpoint would run inside a request's
 * or a flush's commit; the worker checkpoints (db_checkpoint(),
 * db_checkpoint_copy()).
 * db_optimize(): refreshes the planner's statistics (PRAGMA optimize),
 * 0 or -1.  Both nothing on PostgreSQL. */
void		 db_autocheckpoint_off(struct db *);
int		 db_optimize(struct db *);
/* Starts writing what was committed to the WAL out to disk, without
 * waiting for it (sync_file_range()), so that a later sync waits only
 * for what came after.  db_wal_sync(): waits until the WAL is on disk
 * (fdatasync()); 0 or -1.  Both use the WAL's file alone, never the
 * connection: any thread may call them while another owns it (db_own()),
 * one thread at a time. */
void		 db_wal_writeback(struct db *);
int		 db_wal_sync(struct db *);
/* The connection is the calling thread's alone until db_disown() (the
 * flusher's apply thread): any other thread's statement is a bug, and
 * fails an assertion.  (Connections are opened NOMUTEX: one thread at a
 * time, which this checks.) */
void		 db_own(struct db *);
void		 db_disown(struct db *);

/* The database's data version as a read transaction begun now sees it
 * (SQLITE_FCNTL_DATA_VERSION): it changes with every commit to the
 * file, by this connection or any other of any process (and may with a
 * checkpoint that restarts the WAL), never with a read or a rollback.
 * Equal values at two times: nothing was committed in between, so
 * anything read at the first is what SQLite holds at the second.  One
 * statement (a PRAGMA: the read transaction's locks, no page read).
 * 0, or -1 when there is no such version (PostgreSQL, an error, or a
 * transaction of this connection open). */
int		 db_data_version(struct db *, unsigned int *v);
/* The same version as the connection's last transaction saw it, without
 * beginning one (no statement, no lock): anything read from now on is
 * at that version or a later one, so it is a safe bound to check what is
 * read next against (at worst it says "changed" for nothing).  0, or -1
 * as above. */
int		 db_data_version_seen(struct db *, unsigned int *v);

/* Runs SQL without results: the store layer's own (transactions, a
 * connection's pragmas) and tests'; the program's statements are the
 * table's (sql.h).  0 or -1 (logged). */
int		 db_exec(struct db *, const char *sql);

#endif
