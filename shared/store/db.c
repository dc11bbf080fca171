/* db.c -- the connection: opening (pragmas, migrations), transactions
 * (the writers' lock: wlock.c), savepoints and group commits; see db.h.
 *
 * One file: why this file of over 500 lines is one concept -- each call
 * moves the one state of struct db (held, grouped, savepoint open, lock
 * taken and its times), and the rules between them are read together.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/time.h>

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/metrics.h"
#include "store/db.h"
#include "store/db_int.h"
#include "store/dbmap.h"
#include "store/dbq.h"
#include "store/pg.h"
#include "store/pg_ahead.h"
#include "store/refold.h"
#include "store/schema.h"

void
db_own(struct db *d)
{
	d->owner = pthread_self();
	__atomic_store_n(&d->owned, 1, __ATOMIC_RELEASE);
}

void
db_disown(struct db *d)
{
	__atomic_store_n(&d->owned, 0, __ATOMIC_RELEASE);
}

int
db_exec(struct db *d, const char *sql)
{
	char *err = NULL;

	db_check_owner(d);
	if (d->pg != NULL)
		return pg_exec(d->pg, sql);
	db_reads_close(d);
	if (sqlite3_exec(d->h, sql, NULL, NULL, &err) != SQLITE_OK) {
		log_err("sqlite: %s: %.60s", err ? err : "?", sql);
		sqlite3_free(err);
		return -1;
	}
	return 0;
}

enum { SP_SAVE, SP_RELEASE, SP_READ, SP_READ_END, SP_NSTMT };
_Static_assert(SP_NSTMT == sizeof(((struct db *)0)->spst) /
    sizeof(((struct db *)0)->spst[0]), "one prepared statement each");

/* Runs SAVEPOINT act (SP_SAVE), RELEASE act (SP_RELEASE), BEGIN
 * (SP_READ) or COMMIT (SP_READ_END), prepared once: a group commit runs
 * them for each request or group, and sqlite3_exec() parsed them every
 * time.  0, or -1. */
static int
sp_run(struct db *d, int i)
{
	static const char *const sql[SP_NSTMT] = { "SAVEPOINT act",
	    "RELEASE act", "BEGIN", "COMMIT" };

	return db_run_prepared(d, &d->spst[i], sql[i]);
}

/* In a group commit: one savepoint a request.  0, or -1.  A group whose
 * transaction SQLite rolled back by itself (SQLITE_FULL, IOERR, NOMEM) is
 * lost: a SAVEPOINT then began a transaction of its own, which its
 * RELEASE committed outside the group. */
static int
sp_begin(struct db *d)
{
	if (d->sp)
		return 0;	/* joined: the request's hold opened it */
	if (d->pg != NULL)
		pg_savepoint(d->pg);	/* sent with the next statement */
	else if (sqlite3_get_autocommit(d->h)) {
		d->lost = 1;
		return -1;
	} else if (sp_run(d, SP_SAVE) == -1)
		return -1;
	d->sp = 1;
	return 0;
}

/* Drops the open savepoint's changes, if one is open. */
static void
sp_rollback(struct db *d)
{
	if (d->sp && d->pg != NULL) {
		/* an action that lost to another transaction: the group is
		 * lost with it (db_group_lost()) */
		if (pg_retryable(d->pg))
			d->lost = 1;
		if (pg_savepoint_rollback(d->pg) == -1)
			d->lost = 1;
	} else if (d->sp)
		sqlite3_exec(d->h, "ROLLBACK TO act; RELEASE act", NULL, NULL,
		    NULL);
	d->sp = 0;
}

int
db_begin(struct db *d)
{
	if (d->group) {
		d->held = 0;
		return sp_begin(d);
	}
	if (d->held) {		/* join the transaction db_hold() opened */
		d->held = 0;
		if (d->pg != NULL ? pg_in_txn(d->pg) :
		    !sqlite3_get_autocommit(d->h) && !db_reads_is_open(d))
			return 0;
		/* It is gone: SQLite rolled it back by itself (SQLITE_FULL,
		 * IOERR, NOMEM), or the server's connection dropped.  What
		 * was read under it is no snapshot of a write begun now, and
		 * an open transaction now is another's (a later read's):
		 * the action fails, its caller rolls back. */
		log_err("db: the held transaction ended before its write");
		return -1;
	}
	if (d->pg != NULL)
		return pg_begin(d->pg);
	db_reads_close(d);	/* before the writers' lock */
	if (db_wlock(d) == -1)
		return -1;
	if (db_exec(d, "BEGIN IMMEDIATE") == -1) {
		db_wunlock(d);
		return -1;
	}
	return 0;
}

int
db_commit(struct db *d)
{
	if (d->group) {
		/* PostgreSQL's savepoint stays: the next one shadows it */
		if (!d->sp || (d->pg == NULL && sp_run(d, SP_RELEASE) == -1)) {
			db_rollback(d);
			return -1;
		}
		d->sp = 0;
		d->released++;
		return 0;
	}
	if (db_exec(d, "COMMIT") == -1) {
		db_rollback(d);
		return -1;
	}
	d->ncommits++;
	db_wunlock(d);
	return 0;
}

void
db_commit_next(struct db *d)
{
	if (d->pg != NULL && !d->group)
		pg_commit_next(d->pg);
}

void
db_rollback(struct db *d)
{
	if (d->group) {		/* the request's own changes only */
		sp_rollback(d);
		return;
	}
	if (d->pg != NULL) {
		if (pg_in_txn(d->pg))
			pg_exec(d->pg, "ROLLBACK");
		return;
	}
	/* db_reads_together()'s is no transaction of the caller's: it
	 * stays, for the reads to come */
	if (!sqlite3_get_autocommit(d->h) && !db_reads_is_open(d))
		sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
	db_wunlock(d);
}

int
db_hold(struct db *d)
{
	if (db_begin(d) == -1)
		return -1;
	d->held = 1;
	return 0;
}

void
db_release(struct db *d)
{
	d->held = 0;
	db_rollback(d);		/* a no-op when nothing is open */
}

void
db_forget_failure(struct db *d)
{
	d->busy = 0;
	if (d->pg != NULL)
		pg_forget_failure(d->pg);
}

int
db_retryable(struct db *d)
{
	return d->pg != NULL && !d->group && pg_retryable(d->pg);
}

int
db_busy(struct db *d)
{
	return d->pg != NULL ? pg_busy(d->pg) : d->busy;
}

int
db_read_begin(struct db *d)
{
	if (d->pg != NULL)
		return -1;
	db_reads_close(d);
	if (!sqlite3_get_autocommit(d->h) || sp_run(d, SP_READ) == -1)
		return -1;
	d->read_own = 1;
	return 0;
}

void
db_read_end(struct db *d)
{
	/* only its own: a transaction open when db_read_begin() refused
	 * is another's, which a COMMIT here would end half done */
	if (!d->read_own)
		return;
	d->read_own = 0;
	if (sqlite3_get_autocommit(d->h))
		return;
	if (sp_run(d, SP_READ_END) == -1)
		sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
}

int
db_snapshot_begin(struct db *d)
{
	return db_exec(d, "BEGIN");	/* pg_exec(): REPEATABLE READ */
}

int
db_snapshot_end(struct db *d, int failed)
{
	return db_exec(d, failed ? "ROLLBACK" : "COMMIT");
}

int
db_optimize(struct db *d)
{
	return db_exec(d, "PRAGMA optimize");	/* pg_exec(): nothing */
}

int
db_group_begin(struct db *d)
{
	if (d->group)
		return -1;
	if (d->pg != NULL) {	/* no lock: the rows' own, as ever */
		if (pg_in_txn(d->pg) || pg_begin(d->pg) == -1)
			return -1;
		d->group = 1;
		d->sp = 0;
		d->lost = 0;
		return 0;
	}
	db_reads_close(d);	/* before the writers' lock */
	if (db_wlock(d) == -1)
		return -1;
	if (db_exec(d, "BEGIN IMMEDIATE") == -1) {
		db_wunlock(d);
		return -1;
	}
	d->group = 1;
	d->sp = 0;
	d->lost = 0;
	return 0;
}

int
db_group_end(struct db *d)
{
	int rc;

	sp_rollback(d);		/* a request left its own open: not kept */
	d->group = 0;
	d->held = 0;
	if (d->pg != NULL) {
		if (d->lost) {
			pg_exec(d->pg, "ROLLBACK");
			return -1;
		}
		if ((rc = pg_exec(d->pg, "COMMIT")) == -1 &&
		    pg_in_txn(d->pg))
			pg_exec(d->pg, "ROLLBACK");
		d->ncommits += rc == 0;
		return rc;
	}
	rc = db_exec(d, "COMMIT");
	d->ncommits += rc == 0;
	if (rc == -1 && !sqlite3_get_autocommit(d->h))
		sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
	db_wunlock(d);
	return rc;
}

int
db_data_version_seen(struct db *d, unsigned int *v)
{
	/* in db_reads_together()'s transaction: its snapshot's */
	if (d->pg != NULL || d->h == NULL ||
	    (!sqlite3_get_autocommit(d->h) && !db_reads_is_open(d)))
		return -1;
	return sqlite3_file_control(d->h, "main", SQLITE_FCNTL_DATA_VERSION,
	    v) == SQLITE_OK ? 0 : -1;
}

int
db_data_version(struct db *d, unsigned int *v)
{
	int rc;

	if (db_data_version_seen(d, v) == -1 || (d->dv == NULL &&
	    sqlite3_prepare_v3(d->h, "PRAGMA data_version", -1,
	    SQLITE_PREPARE_PERSISTENT, &d->dv, NULL) != SQLITE_OK))
		return -1;
	/* The pager learns of other connections' commits when a read
	 * transaction begins: read the version inside the pragma's (and
	 * keep it for the reads to come, db_reads_together()). */
	db_reads_open(d);
	rc = sqlite3_step(d->dv) == SQLITE_ROW ?
	    db_data_version_seen(d, v) : -1;
	sqlite3_reset(d->dv);
	return rc;
}

static int
db_version(struct db *d)
{
	sqlite3_stmt *s;
	int v = -1;

	if (sqlite3_prepare_v2(d->h, "PRAGMA user_version", -1, &s, NULL)
	    != SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return v;
}

static int
db_migrate(struct db *d)
{
	char pragma[64];
	int v;

	if ((v = db_version(d)) == -1)
		return -1;
	if (v >= schema_version)
		return 0;
	if (db_begin(d) == -1)
		return -1;
	/* Another process may have migrated while we waited for the lock. */
	if ((v = db_version(d)) == -1)
		goto fail;
	for (; v < schema_version; v++) {
		if (db_exec(d, schema_migrations[v]) == -1)
			goto fail;
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d",
		    v + 1);
		if (db_exec(d, pragma) == -1)
			goto fail;
		log_info("schema migrated to version %d", v + 1);
	}
	return db_commit(d);
fail:
	db_rollback(d);
	return -1;
}

/* Waiting for the write lock.  sqlite3_busy_timeout() sleeps 1, 2, 5,
 * 10... ms between tries, long against write transactions of ~0.1 ms:
 * under concurrent likes it made the p99.  This one tries again after
 * 50 us, backs off to 1 ms, and gives up after DB_BUSY_MS. */
static int
busy_wait(void *arg, int tries)
{
	struct db *d = arg;
	long long now = clock_mono_us();

	if (tries == 0)
		d->busy_since_us = now;
	if (now - d->busy_since_us >= d->busy_ms * 1000LL) {
		d->busy = 1;
		return 0;
	}
	usleep(tries < 20 ? 50 : tries < 200 ? 200 : 1000);
	return 1;
}

/* Counts every statement SQLite starts, whatever ran it. */
static int
count_stmt(unsigned type, void *arg, void *p, void *x)
{
	(void)type;
	(void)p;
	(void)x;
	((struct db *)arg)->nstmt++;
	return 0;
}

static const char *map_vfs;	/* set once, by sqlite_setup() */

/* Before SQLite's first use: no memory statistics (they are kept under a
 * global mutex taken on every allocation, and nothing here reads them:
 * sqlite3_memory_used()); the "tally" VFS. */
static void
sqlite_setup(void)
{
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (dbmap_register() == -1)
		log_warn("sqlite: no \"%s\" VFS: pages read a copy at a time",
		    DBMAP_VFS);
	else
		map_vfs = DBMAP_VFS;
}

/* Pages of the database file come through the process's map of it
 * (store/dbmap.h: the "tally" VFS), which a change by another process
 * does not undo; pages still in the WAL through SQLite's page cache and
 * pread().  SQLite's own map (the default VFS's) unmaps the whole file
 * whenever a reader's next transaction finds the database changed, and
 * with pread() alone every such reader reads its pages again, a copy a
 * page: on a site where writes keep coming, that is most transactions of
 * every process (docs/BENCHMARKS.md, "Reads beside writes"). */
int
db_open(struct db *d, const char *path)
{
	static pthread_once_t setup = PTHREAD_ONCE_INIT;

	static const char *const pragmas =
	    "PRAGMA journal_mode = WAL;"
	    "PRAGMA synchronous = NORMAL;"
	    "PRAGMA foreign_keys = ON;"
	    "PRAGMA trusted_schema = OFF;"
	    "PRAGMA temp_store = MEMORY;"
	    "PRAGMA cache_size = -8000;"
	    "PRAGMA mmap_size = 2147418112;"	/* DBMAP_BYTES: above */
	    "PRAGMA journal_size_limit = 67108864;";

	const char *file;

	memset(d, 0, sizeof(*d));
	d->wlock_fd = -1;
	d->busy_ms = DB_BUSY_MS;
	if (pg_is_url(path))
		return (d->pg = pg_open(path, &d->nstmt)) != NULL ? 0 : -1;
	db_wlock_open(d, path);
	pthread_once(&setup, sqlite_setup);
	if (sqlite3_open_v2(path, &d->h, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, map_vfs) != SQLITE_OK) {
		log_err("sqlite open %s: %s", path,
		    d->h ? sqlite3_errmsg(d->h) : "out of memory");
		db_close(d);
		return -1;
	}
	sqlite3_busy_handler(d->h, busy_wait, d);
	if ((file = sqlite3_db_filename(d->h, "main")) != NULL &&
	    *file != '\0')		/* not in memory */
		d->wal_path = sqlite3_filename_wal(file);
	sqlite3_trace_v2(d->h, SQLITE_TRACE_STMT, count_stmt, d);
	if (refold_sqlite_function(d->h) == -1 ||
	    db_exec(d, pragmas) == -1 || db_migrate(d) == -1) {
		db_close(d);
		return -1;
	}
	return 0;
}

void
db_close(struct db *d)
{
	int i;

	pg_close(d->pg);
	for (i = 0; i < STMT__MAX; i++)
		dbq_finalize(d->st[i]);
	sqlite3_finalize(d->dv);
	for (i = 0; i < SP_NSTMT; i++)
		sqlite3_finalize(d->spst[i]);
	for (i = 0; i < 2; i++)
		sqlite3_finalize(d->rdst[i]);
	sqlite3_close(d->h);
	if (d->wlock_fd > 0)	/* 0: never opened (a zeroed struct) */
		close(d->wlock_fd);
	if (d->wal_fd > 0)
		close(d->wal_fd);
	memset(d, 0, sizeof(*d));
	d->wlock_fd = -1;
	d->busy_ms = DB_BUSY_MS;
}

struct db *
db_new(const char *path)
{
	struct db *d = calloc(1, sizeof(*d));

	if (d == NULL) {
		log_err("db: out of memory");
		return NULL;
	}
	if (db_open(d, path) == -1) {
		free(d);
		return NULL;
	}
	return d;
}

void
db_free(struct db *d)
{
	if (d == NULL)
		return;
	db_close(d);
	free(d);
}

void
db_lock_metrics(struct db *d, struct metrics *m, int who)
{
	d->metrics = m;
	d->lock_who = who;
}

unsigned long long
db_ntrips(const struct db *d)
{
	return d->pg != NULL ? pg_ntrips(d->pg) : 0;
}

unsigned long long
db_nahead(const struct db *d)
{
	return d->pg != NULL ? pg_ahead_taken(d->pg) : 0;
}

unsigned long long
db_nstmt(const struct db *d)
{
	return d->nstmt;
}

unsigned long long
db_ncommits(const struct db *d)
{
	return d->ncommits;
}

void
db_count_runs(struct db *d, uint64_t *runs)
{
	d->stmt_runs = runs;
}

int
db_grouped(const struct db *d)
{
	return d->group;
}

int
db_group_defers(const struct db *d)
{
	return d->group && d->pg != NULL;
}

void
db_group_commit_next(struct db *d, int commit)
{
	if (!d->group || d->pg == NULL)
		return;
	sp_rollback(d);
	if (commit && !d->lost)
		pg_commit_next(d->pg);
}

void
db_group_lose(struct db *d)
{
	if (d->group)
		d->lost = 1;
}

int
db_group_lost(const struct db *d)
{
	return d->group && d->lost;
}

int
db_groups_at_once(const struct db *d)
{
	return d->pg != NULL;
}

const char *
db_engine_name(const struct db *d)
{
	return d->pg != NULL ? "postgresql" : "sqlite";
}

unsigned long long
db_released(const struct db *d)
{
	return d->released;
}
