/* dbmap.c -- the "tally" VFS: a main database's pages through a map the
 * process keeps, and a WAL frame written in one call; see dbmap.h.
 * Every method but the fetches, the mmap_size control and a WAL's frame
 * headers passes to the default VFS's file, which follows this one's
 * struct in the same allocation. */
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/dbmap.h"

struct map {			/* one file's map in this process */
	struct map	*next;
	dev_t		 dev;
	ino_t		 ino;
	unsigned char	*base;		/* DBMAP_BYTES of the file; NULL: the
					   map failed (the entry still says
					   the file is open in the process) */
	int		 refs;		/* open connections of the file */
};

/* A WAL frame's header: SQLite writes it, then the frame's page right
 * after it, in two calls (wal.c's walWriteOneFrame()). */
#define FRAME_HDR	24
#define FRAME_MAX	(FRAME_HDR + 65536)	/* the largest page's frame */

struct mfile {
	sqlite3_file	 base;		/* pMethods: &io (NULL: not open) */
	sqlite3_file	*real;		/* the default VFS's, right after */
	struct map	*map;		/* a main database's, or NULL */
	sqlite3_int64	 size;		/* the file's size when last measured */
	sqlite3_int64	 limit;		/* mmap_size: fetches when > 0 */
	int		 wal;		/* a WAL: a frame's header is held */
	int		 read_last;	/* its last call was a read */
	int		 held;		/* hdr is written, not yet passed on */
	sqlite3_int64	 held_off;	/* ... at this offset */
	unsigned char	 hdr[FRAME_HDR];
	unsigned char	*join;		/* a header and its page (FRAME_MAX) */
};

static sqlite3_vfs vfs;
static sqlite3_vfs *dflt;
static struct map *maps;		/* every map of the process */
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dbmap_stats stats;
/* The WAL whose frame header this thread holds (a connection is used by
 * one thread at a time, and its writes run on it): passed on before any
 * shared-memory call of the thread, the commit's publication included. */
static __thread struct mfile *holding;

#define REAL(f)		(((struct mfile *)(f))->real)
#define RM(f)		(REAL(f)->pMethods)
#define COUNT(field)	__atomic_add_fetch(&stats.field, 1, __ATOMIC_RELAXED)

/* The entry of the file at path, its map made when no other connection
 * of the process has the file open: then no lock of the process on it
 * can be dropped by the close of the descriptor used here (the caller's
 * own connection holds none yet).  A map that cannot be made leaves an
 * entry without one, so that a later open does not try again while this
 * connection may hold locks.  NULL when the file cannot be looked at or
 * memory runs out. */
static struct map *
map_get(const char *path)
{
	struct stat st, fst;
	struct map *m;
	void *p = MAP_FAILED;
	int fd;

	if (stat(path, &st) == -1)
		return NULL;
	pthread_mutex_lock(&maps_lock);
	for (m = maps; m != NULL; m = m->next)
		if (m->dev == st.st_dev && m->ino == st.st_ino) {
			m->refs++;
			goto out;
		}
	if ((m = calloc(1, sizeof(*m))) == NULL)
		goto out;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
		if (fstat(fd, &fst) == 0 && fst.st_dev == st.st_dev &&
		    fst.st_ino == st.st_ino)	/* not replaced in between */
			p = mmap(NULL, (size_t)DBMAP_BYTES, PROT_READ,
			    MAP_SHARED, fd, 0);
		close(fd);
	}
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	m->base = p == MAP_FAILED ? NULL : p;
	m->refs = 1;
	m->next = maps;
	maps = m;
	if (m->base != NULL)
		COUNT(maps);
out:
	pthread_mutex_unlock(&maps_lock);
	return m;
}

static void
map_put(struct map *m)
{
	struct map **pp;

	if (m == NULL)
		return;
	pthread_mutex_lock(&maps_lock);
	if (--m->refs == 0) {
		for (pp = &maps; *pp != m; pp = &(*pp)->next)
			;
		*pp = m->next;
		if (m->base != NULL)
			munmap(m->base, (size_t)DBMAP_BYTES);
		free(m);
	}
	pthread_mutex_unlock(&maps_lock);
}

/* The file's size now; 0 (nothing handed out) when it cannot be had. */
static void
measure(struct mfile *m)
{
	sqlite3_int64 sz;

	m->size = RM(m)->xFileSize(m->real, &sz) == SQLITE_OK ? sz : 0;
}

/* A write that went through: the file is at least that long. */
static int
write_real(struct mfile *m, const void *buf, int amt, sqlite3_int64 off)
{
	int rc = RM(m)->xWrite(m->real, buf, amt, off);

	if (rc == SQLITE_OK && off + amt > m->size)
		m->size = off + amt;
	return rc;
}

/* Writes m's held frame header, if any, where SQLite wrote it. */
static int
release(struct mfile *m)
{
	if (!m->held)
		return SQLITE_OK;
	m->held = 0;
	if (holding == m)
		holding = NULL;
	return write_real(m, m->hdr, FRAME_HDR, m->held_off);
}

/* The same for whatever WAL this thread holds a header of: before any
 * lock or shared-memory call, the commit's publication (xShmBarrier)
 * among them.  In SQLite 3.40 nothing is held by then: a frame's header
 * is joined to its page or written by the xSync that splits them, and a
 * checksum rewrite's headers (each after a read) are never held; this
 * is the rule that would keep a later SQLite right. */
static int
release_held(void)
{
	return holding != NULL ? release(holding) : SQLITE_OK;
}

static int
m_close(sqlite3_file *f)
{
	struct mfile *m = (struct mfile *)f;
	int held = release(m), rc = RM(f)->xClose(m->real);

	map_put(m->map);	/* after: the file is closed for SQLite */
	m->map = NULL;
	free(m->join);
	m->join = NULL;
	return held != SQLITE_OK ? held : rc;
}

static int
m_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
	struct mfile *m = (struct mfile *)f;
	int rc = release(m);

	m->read_last = 1;
	return rc != SQLITE_OK ? rc : RM(f)->xRead(REAL(f), buf, amt, off);
}

/* A WAL frame goes to the file in one call, not two (its header, then
 * its page, as SQLite writes them): a header is held until the next
 * call, and joined to that one's bytes when it is the write that begins
 * where the header ends; anything else writes the header first, as
 * SQLite did (dbmap.h).  A header written right after a read is not
 * held: SQLite's checksum rewrite reads each frame and writes its
 * header, and its last would wait for the commit's barrier, where a
 * failed write could not fail the commit. */
static int
m_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
	struct mfile *m = (struct mfile *)f;
	int rc, after_read = m->read_last;

	m->read_last = 0;
	if (m->held && off == m->held_off + FRAME_HDR && amt > 0 &&
	    amt <= FRAME_MAX - FRAME_HDR &&
	    (m->join != NULL || (m->join = malloc(FRAME_MAX)) != NULL)) {
		m->held = 0;
		holding = NULL;
		memcpy(m->join, m->hdr, FRAME_HDR);
		memcpy(m->join + FRAME_HDR, buf, (size_t)amt);
		COUNT(joined);
		return write_real(m, m->join, FRAME_HDR + amt, m->held_off);
	}
	if ((rc = release(m)) != SQLITE_OK)
		return rc;
	if (m->wal && amt == FRAME_HDR && !after_read) {
		if ((rc = release_held()) != SQLITE_OK)	/* another WAL's */
			return rc;
		memcpy(m->hdr, buf, FRAME_HDR);
		m->held_off = off;
		m->held = 1;
		holding = m;
		return SQLITE_OK;
	}
	return write_real(m, buf, amt, off);
}

static int
m_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct mfile *m = (struct mfile *)f;
	int rc = release(m);

	if (rc == SQLITE_OK)
		rc = RM(f)->xTruncate(m->real, size);
	if (m->size > size)
		m->size = size;
	return rc;
}

static int
m_sync(sqlite3_file *f, int flags)
{
	int rc = release((struct mfile *)f);

	return rc != SQLITE_OK ? rc : RM(f)->xSync(REAL(f), flags);
}

static int
m_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	int rc = release((struct mfile *)f);

	return rc != SQLITE_OK ? rc : RM(f)->xFileSize(REAL(f), size);
}

static int
m_lock(sqlite3_file *f, int level)
{
	int rc = release_held();

	return rc != SQLITE_OK ? rc : RM(f)->xLock(REAL(f), level);
}

/* An unlock is made whatever the header's write gave (SQLite does not
 * look at every unlock's answer: a lock left held would stop every
 * writer). */
static int
m_unlock(sqlite3_file *f, int level)
{
	int held = release_held(), rc = RM(f)->xUnlock(REAL(f), level);

	return held != SQLITE_OK ? held : rc;
}

static int
m_check_reserved(sqlite3_file *f, int *out)
{
	return RM(f)->xCheckReservedLock(REAL(f), out);
}

/* mmap_size is this file's: the default VFS's file never maps. */
static int
m_file_control(sqlite3_file *f, int op, void *arg)
{
	struct mfile *m = (struct mfile *)f;
	sqlite3_int64 want;

	if (op != SQLITE_FCNTL_MMAP_SIZE) {
		int rc = release(m);

		return rc != SQLITE_OK ? rc :
		    RM(f)->xFileControl(m->real, op, arg);
	}
	want = *(sqlite3_int64 *)arg;
	*(sqlite3_int64 *)arg = m->limit;
	if (want >= 0)
		m->limit = m->map == NULL || m->map->base == NULL ? 0 :
		    want < DBMAP_BYTES ? want : DBMAP_BYTES;
	return SQLITE_OK;
}

static int
m_sector_size(sqlite3_file *f)
{
	return RM(f)->xSectorSize(REAL(f));
}

static int
m_device(sqlite3_file *f)
{
	return RM(f)->xDeviceCharacteristics(REAL(f));
}

/* The WAL's index: a commit is published (its index header written)
 * after a barrier, and every frame it names must be in the file by then
 * for whoever reads it, or recovers the index from the file after this
 * process dies. */
static int
m_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
	int rc = release_held();

	return rc != SQLITE_OK ? rc :
	    RM(f)->xShmMap(REAL(f), pg, pgsz, extend, pp);
}

static int
m_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	int held = release_held(), rc;

	if (held != SQLITE_OK && !(flags & SQLITE_SHM_UNLOCK))
		return held;	/* not taken; an unlock is made (m_unlock()) */
	rc = RM(f)->xShmLock(REAL(f), offset, n, flags);
	return held != SQLITE_OK ? held : rc;
}

static void
m_shm_barrier(sqlite3_file *f)
{
	(void)release_held();
	RM(f)->xShmBarrier(REAL(f));
}

static int
m_shm_unmap(sqlite3_file *f, int delete)
{
	(void)release_held();
	return RM(f)->xShmUnmap(REAL(f), delete);
}

/* A page wholly inside the file as last measured, else NULL: the pager
 * then reads it (xRead). */
static int
m_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp)
{
	struct mfile *m = (struct mfile *)f;

	*pp = NULL;
	if (m->limit <= 0)	/* no map: limit 0 */
		return SQLITE_OK;
	if (off < 0 || amt <= 0 || off + amt > m->size ||
	    off + amt > m->limit) {
		COUNT(declined);
		return SQLITE_OK;
	}
	*pp = m->map->base + off;
	COUNT(fetched);
	return SQLITE_OK;
}

/* A page given back: nothing.  Everything (p NULL: the pager found the
 * database changed, or lets go of the map): the map stays, and the
 * file's size is measured again. */
static int
m_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	(void)off;
	if (p == NULL && ((struct mfile *)f)->limit > 0)
		measure((struct mfile *)f);
	return SQLITE_OK;
}

static const sqlite3_io_methods io = {
	3, m_close, m_read, m_write, m_truncate, m_sync, m_file_size, m_lock,
	m_unlock, m_check_reserved, m_file_control, m_sector_size, m_device,
	m_shm_map, m_shm_lock, m_shm_barrier, m_shm_unmap, m_fetch, m_unfetch
};

static int
m_open(sqlite3_vfs *v, sqlite3_filename name, sqlite3_file *f, int flags,
    int *out)
{
	struct mfile *m = (struct mfile *)f;
	sqlite3_int64 none = 0;
	int rc, moved = 0;

	(void)v;
	memset(m, 0, sizeof(*m));
	m->real = (sqlite3_file *)(m + 1);
	if ((rc = dflt->xOpen(dflt, name, m->real, flags, out)) != SQLITE_OK)
		return rc;	/* base.pMethods NULL: not closed */
	if (RM(m)->iVersion < 3)	/* no shm, no fetch */
		goto refuse;
	/* the default VFS's own map stays off, whatever its default */
	RM(m)->xFileControl(m->real, SQLITE_FCNTL_MMAP_SIZE, &none);
	m->base.pMethods = &io;
	m->wal = (flags & SQLITE_OPEN_WAL) != 0;
	if (!(flags & SQLITE_OPEN_MAIN_DB) || name == NULL)
		return SQLITE_OK;
	/* A main database is in the process's list as long as it is open
	 * (map_get): one the list cannot hold is not opened at all. */
	if ((m->map = map_get(name)) == NULL)
		goto refuse;
	/* The path named another file by the time it was looked at (the
	 * file renamed over): no pages from that one's map.  Unlisted, this
	 * connection's file is safe: no path leads to it any more. */
	if (RM(m)->xFileControl(m->real, SQLITE_FCNTL_HAS_MOVED, &moved) !=
	    SQLITE_OK || moved) {
		map_put(m->map);
		m->map = NULL;
		return SQLITE_OK;
	}
	measure(m);
	return SQLITE_OK;
refuse:
	RM(m)->xClose(m->real);
	m->base.pMethods = NULL;
	m->map = NULL;
	return SQLITE_CANTOPEN;
}

int
dbmap_register(void)
{
	if ((dflt = sqlite3_vfs_find(NULL)) == NULL)
		return -1;
	/* The default's own methods, called with this struct: they read
	 * only what is copied (its pAppData, mxPathname). */
	vfs = *dflt;
	vfs.szOsFile = (int)sizeof(struct mfile) + dflt->szOsFile;
	vfs.pNext = NULL;
	vfs.zName = DBMAP_VFS;
	vfs.xOpen = m_open;
	return sqlite3_vfs_register(&vfs, 0) == SQLITE_OK ? 0 : -1;
}

void
dbmap_stats(struct dbmap_stats *s)
{
	s->fetched = __atomic_load_n(&stats.fetched, __ATOMIC_RELAXED);
	s->declined = __atomic_load_n(&stats.declined, __ATOMIC_RELAXED);
	s->maps = __atomic_load_n(&stats.maps, __ATOMIC_RELAXED);
	s->joined = __atomic_load_n(&stats.joined, __ATOMIC_RELAXED);
}
