/* ckpt.c -- copying the WAL into the database with the writers held up
 * as briefly as possible; see db_checkpoint() in db.h.
 *
 * Every checkpoint holds the writers' lock, which every write of tally's
 * takes (db_begin(), and a write in autocommit: dbq.c), so that no write
 * resets the WAL while a checkpoint begins.  SQLite up to 3.51.2 (Debian
 * 12 has 3.40.1) has a race there, the "WAL-reset bug" of its WAL
 * documentation, fixed in 3.51.3: a checkpoint that begins while another
 * connection's commit resets the WAL, soon after a checkpoint that
 * copied the whole WAL, may leave a wrong count of copied frames, and a
 * later checkpoint then skips frames of a committed transaction: those
 * pages go back to what they were.  Copying every 25 ms beside the
 * writers (the worker's nap) made that start many times a second.  A
 * full run once ended with a like back in its table whose unlike's other
 * rows were all kept, which this race explains (a page of the unlike's
 * transaction not copied) and nothing of tally's was found to.  The
 * copies now hold the writers up while they copy (docs/BENCHMARKS.md). */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <sqlite3.h>

#include "base/log.h"
#include "store/db.h"
#include "store/db_int.h"

/* A passive checkpoint: copies what no reader needs, the writers held
 * (above).  *nlog: the WAL's frames when it began; *nckpt: the frames
 * copied so far (either may be NULL).  busy_ok: another connection
 * checkpointing at the moment, or the writers' lock not had in time, is
 * no error (the next call copies).  0, or -1 (logged). */
static int
passive(struct db *d, int *nlog, int *nckpt, int busy_ok)
{
	int rc;

	/* what is in the WAL now on disk before the lock: the copy's own
	 * sync of it, under the lock, then has only the last frames to do */
	(void)db_wal_sync(d);
	if (db_wlock(d) == -1) {
		if (busy_ok)
			return 0;
		log_warn("checkpoint: the writers' lock not free");
		return -1;
	}
	d->in_ckpt = 1;
	rc = sqlite3_wal_checkpoint_v2(d->h, NULL, SQLITE_CHECKPOINT_PASSIVE,
	    nlog, nckpt);
	db_wunlock(d);
	d->in_ckpt = 0;
	if (rc == SQLITE_OK || (busy_ok && rc == SQLITE_BUSY))
		return 0;
	log_warn("checkpoint: %s", sqlite3_errmsg(d->h));
	return -1;
}

int
db_checkpoint_copy(struct db *d)
{
	return d->pg != NULL ? 0 : passive(d, NULL, NULL, 1);
}

int
db_checkpoint(struct db *d, int min_frames, int truncate)
{
	unsigned int dv;
	int rc, idle, pass, nlog = 0, nckpt = 0, before;

	if (d->pg != NULL)
		return 0;	/* the server checkpoints its own WAL */
	/* The long part (syncing the WAL, copying its pages) in passes the
	 * writers go on between; then the restart, after a last short one
	 * (a restart waits for the readers under the lock). */
	if (passive(d, &nlog, &nckpt, 0) == -1)
		return -1;
	/* Idle: nothing committed since the last call (the frame count
	 * alone could match by chance after a writer restarted the WAL). */
	if (db_data_version_seen(d, &dv) == -1)
		dv = 0;
	idle = nlog > 0 && nlog == d->ckpt_frames && dv != 0 &&
	    dv == d->ckpt_version;
	d->ckpt_frames = nlog;
	d->ckpt_version = dv;
	if (idle)
		truncate = 1;
	else if (!truncate && nlog < min_frames)
		return 0;	/* short enough: no stall for the writers */
	if (nckpt < nlog)
		return 1;	/* a reader still needs old frames: a restart
				 * would hold the writers while it waits */
	/* What the writers appended during that pass is copied by another,
	 * shorter one, and so on: the part under the lock (it held likes up
	 * to 16 ms when it copied one pass's appends) stays a few frames. */
	for (pass = 1; pass < DB_CKPT_PASSES; pass++) {
		before = nckpt;
		if (passive(d, &nlog, &nckpt, 0) == -1)
			return -1;
		if (nckpt < nlog)
			return 1;
		if (nckpt - before < DB_CKPT_LEFT)
			break;
	}
	if (db_wlock(d) == -1)
		return -1;
	d->in_ckpt = 1;
	d->busy_ms = DB_CKPT_WAIT_MS;
	rc = sqlite3_wal_checkpoint_v2(d->h, NULL, truncate ?
	    SQLITE_CHECKPOINT_TRUNCATE : SQLITE_CHECKPOINT_RESTART, &nlog,
	    &nckpt);
	d->busy_ms = DB_BUSY_MS;
	db_wunlock(d);
	d->in_ckpt = 0;
	if (rc == SQLITE_BUSY)
		return 1;
	if (rc != SQLITE_OK) {
		log_err("checkpoint: %s", sqlite3_errmsg(d->h));
		return -1;
	}
	if (truncate)
		d->ckpt_frames = 0;
	return 0;
}

/* The WAL's descriptor, opened the first time it is there; -1 when it
 * is not, errno ENOENT when there is none to have (nothing committed
 * yet, a database in memory, PostgreSQL). */
static int
wal_fd(struct db *d)
{
	if (d->wal_fd > 0)
		return d->wal_fd;
	if (d->pg != NULL || d->wal_path == NULL) {
		errno = ENOENT;
		return -1;
	}
	if ((d->wal_fd = open(d->wal_path, O_RDONLY | O_CLOEXEC)) == -1) {
		d->wal_fd = 0;
		return -1;
	}
	return d->wal_fd;
}

void
db_wal_writeback(struct db *d)
{
	int fd = wal_fd(d);

	if (fd != -1)
		(void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

int
db_wal_sync(struct db *d)
{
	int fd = wal_fd(d);

	if (fd == -1)
		return errno == ENOENT ? 0 : -1;	/* nothing to sync */
	return fdatasync(fd);
}

int
db_leave_wal(struct db *d)
{
	if (d->pg != NULL)
		return 0;
	if (sqlite3_db_config(d->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1,
	    NULL) != SQLITE_OK)
		return -1;
	return db_wal_sync(d);
}

void
db_autocheckpoint_off(struct db *d)
{
	db_check_owner(d);
	if (d->pg == NULL)	/* PRAGMA wal_autocheckpoint = 0 */
		sqlite3_wal_autocheckpoint(d->h, 0);
}
