/* db_int.h -- the connection's inside: what store/ alone opens, closes
 * and looks into (app.c, db.c, ckpt.c, dbq.c; tests).  Above store/ a
 * struct db is opaque (db.h).
 */
#ifndef TALLY_DB_INT_H
#define TALLY_DB_INT_H

#include <assert.h>
#include <pthread.h>
#include <stdint.h>

#include "store/sql.h"

struct metrics;
struct dbq;

struct db {
	struct sqlite3	*h;		/* the SQLite connection, or NULL */
	struct pgdb	*pg;		/* PostgreSQL instead (pg.h) */
	struct dbq	*st[STMT__MAX];	/* SQLite's, prepared once (dbq.c) */
	struct sqlite3_stmt *dv;	/* db_data_version()'s */
	struct sqlite3_stmt *spst[4];	/* SP_SAVE ... (db.c) */
	unsigned long long nstmt;	/* statements run (for /metrics) */
	unsigned long long ncommits;	/* write transactions committed */
	uint64_t	*stmt_runs;	/* each one's runs by number, shared
					   (metrics.h); NULL: not counted */
	long long	 busy_since_us;	/* monotonic; the wait in progress */
	int		 busy_ms;	/* how long it may last (DB_BUSY_MS) */
	int		 busy;		/* a wait for a lock ran out (db_busy()) */
	long long	 stuck_until;	/* monotonic us: waits are short until
					   then (DB_STUCK_MS); 0: none */
	long long	 stuck_since;	/* when the first of them ran out, */
	long long	 stuck_logged;	/* when that was last logged, */
	int		 stuck_waits;	/* and how many ran out since */
	int		 wlock_fd;	/* <path>-wlock, flock()ed by writers */
	int		 wal_fd;	/* the WAL, for db_wal_*() (0: not open) */
	const char	*wal_path;	/* its name (SQLite's, lives as long) */
	int		 wlocked;
	const void	*auto_wlock;	/* the statement that took it for a
					   write in autocommit, till it ends
					   (dbq.c sq_step()) */
	int		 held;		/* a db_hold() transaction not yet joined */
	int		 read_own;	/* db_read_begin()'s transaction open */
	int		 group;		/* db_group_begin(): a shared commit open */
	int		 sp;		/* a request's savepoint open in it */
	int		 lost;		/* an action of it lost to another
					   transaction (PostgreSQL), or SQLite
					   rolled it back by itself */
	unsigned long long released;	/* savepoints released (kept) so far */
	int		 ckpt_frames;	/* the WAL's frames at the last checkpoint */
	unsigned int	 ckpt_version;	/* and SQLITE_FCNTL_DATA_VERSION then */
	int		 owned;		/* db_own(): one thread's alone */
	pthread_t	 owner;
	/* The writers' lock's times, for /metrics (metrics_lock()) */
	struct metrics	*metrics;	/* NULL: not recorded */
	int		 lock_who;	/* this process's holder slot */
	int		 in_ckpt;	/* held by db_checkpoint() */
	long long	 wlock_asked;	/* monotonic us: asked for, */
	long long	 wlock_at;	/* and taken */
	int		 reads_on;	/* db_reads_together() */
	int		 reads_open;	/* its read transaction is open */
	struct sqlite3_stmt *rdst[2];	/* its BEGIN and COMMIT (dbreads.c) */
};

/* Opens path with tally's pragmas (WAL, busy timeout, foreign keys) and
 * applies pending migrations.  A libpq connection string instead of a
 * path ("postgresql://...") opens that PostgreSQL database (pg.h): the
 * calls of db.h behave the same, the SQLite-only ones (checkpoints) do
 * nothing.  Returns 0 or -1 (logged; db closed). */
int	db_open(struct db *, const char *path);
void	db_close(struct db *);

/* Asserts that the calling thread may use the connection (db_own()). */
static inline void
db_check_owner(const struct db *d)
{
	assert(!__atomic_load_n(&d->owned, __ATOMIC_ACQUIRE) ||
	    pthread_equal(d->owner, pthread_self()));
}

/* The writers' lock (db.h), an flock() on "<database>-wlock": 0 once
 * held (or when there is no lock file: SQLite's own lock still holds),
 * -1 when DB_BUSY_MS passed (logged).  Releasing it records how long it
 * was waited for and held (/metrics). */
/* The writers' lock (wlock.c): its file opened beside path's database
 * (none for one in memory: writers then wait on SQLite's own lock);
 * taken, waiting at most d->busy_ms (-1 then, db_busy()); given back. */
void	db_wlock_open(struct db *, const char *path);
int	db_wlock(struct db *);
void	db_wunlock(struct db *);
/* A write in autocommit (no db_begin(): a run's lease renewed, say) is
 * its own transaction: its statement stmt takes the writers' lock, as
 * db_begin() does, at its first step, and gives it back when it ends
 * (its last step, its reset; dbq.c).  Every write then holds the lock,
 * so none starts the WAL over while a checkpoint, which holds it too,
 * begins (ckpt.c: SQLite's WAL-reset bug).  0, or -1 when the lock was
 * not had (db_busy()). */
int	db_write_alone(struct db *, const void *stmt);
void	db_write_alone_end(struct db *, const void *stmt);

/* db_reads_together()'s transaction (dbreads.c), for db.c's
 * transactions and dbq.c's statements: a read-only statement run in
 * autocommit opens it (db_reads_open()), any other statement and any
 * transaction of the caller's ends it first (db_reads_close(), which
 * db_reads_end() is to the rest of the program);
 * db_reads_is_open() says whether it is (a ROLLBACK may have ended it). */
void	db_reads_open(struct db *);
void	db_reads_close(struct db *);
int	db_reads_is_open(struct db *);
/* Runs a statement of transaction control (sql), prepared once into
 * *st: 0, or -1 (logged).  In dbreads.c, which db.c calls and which
 * calls nothing of db.c's. */
struct sqlite3_stmt;
int	db_run_prepared(struct db *, struct sqlite3_stmt **st,
	    const char *sql);

#endif
