/* dbmap.h -- SQLite's database file read through a map a process keeps
 * while other processes write.
 *
 * In WAL mode a reader whose next transaction finds that any other
 * process committed throws its whole page cache away (SQLite's pager has
 * no finer rule), and then reads every page again: with pread() a page
 * copy at a time, or with SQLite's own map (mmap_size) by unmapping the
 * file and faulting every page in again.  On a site where likes keep
 * committing, that is a large part of most reads (docs/BENCHMARKS.md,
 * "Reads beside writes").
 *
 * The "tally" VFS passes everything to the default one except a main
 * database's page fetches (xFetch, used when mmap_size > 0): those come
 * from one MAP_SHARED map of the file per process, made once and kept
 * until the process's last connection to the file closes.  A change by
 * another process does not unmap it: the map is the file itself (Linux's
 * page cache is the one both pread() and the map read), so a page read
 * through it is what pread() would read at that moment, and the pages
 * stay mapped.  The rules that keep it right:
 *   - a page is handed out only when it lies wholly inside the file as
 *     last measured (its size is measured when the file is opened and
 *     whenever SQLite says it changed: the xUnfetch(0, NULL) of a new
 *     read transaction), so a read never touches past the end of the
 *     file; anything else goes to the default VFS's read;
 *   - SQLite only fetches pages of its read snapshot that are not in the
 *     WAL; a checkpoint never truncates below a snapshot still in use,
 *     so the pages it holds stay in the file while it reads them;
 *   - every main database a connection has open is in the process's
 *     list (its map, or a note that none could be made), and a map is
 *     made, with a descriptor of its own that is closed at once, only
 *     when no other connection of the process has the file open and the
 *     new one holds no lock yet: closing a descriptor drops all of the
 *     process's POSIX locks on the file (SQLite's locks), and one
 *     dropped shared lock lets another process's last close delete the
 *     WAL under a live reader;
 *   - a file renamed over between SQLite's open and the map's gets no
 *     map (SQLITE_FCNTL_HAS_MOVED).
 * A file larger than DBMAP_BYTES is read past that point as before.  A
 * disk that fails under the map is a SIGBUS where pread() would return
 * an error: the trade SQLite's own map makes too.
 *
 * A WAL frame is written in one call: SQLite writes its 24-byte header,
 * then its page right after it, two pwrite()s a frame, six a like for
 * the single writer.  A 24-byte write to a WAL is held (the file's, and
 * the thread's: a connection runs on one thread at a time) and joined to
 * the next write when that one begins where the header ends; any other
 * call on the WAL, and any call on the database's shared memory by the
 * thread, writes the header first, as SQLite did.  A commit is published
 * to other connections after a shared-memory barrier, so every frame it
 * names is in the file by then, and a process killed after it leaves
 * them whole for the WAL's recovery (test-dbmap.c: the index deleted,
 * rebuilt from the frames' checksums).  A frame joined or not, the file
 * holds the same bytes at the same offsets.  (With locking_mode
 * EXCLUSIVE set before the WAL opens SQLite keeps its index in the heap
 * and makes no shared-memory calls; tally never sets it.)
 */
#ifndef TALLY_DBMAP_H
#define TALLY_DBMAP_H

#define DBMAP_VFS	"tally"
#define DBMAP_BYTES	0x7fff0000LL	/* SQLite's largest mmap_size */

/* Registers the "tally" VFS (not as the default).  Once per process,
 * before the first sqlite3_open_v2() that names it.  0, or -1. */
int	dbmap_register(void);

/* What this process's maps did: pages handed out, fetches sent to the
 * default read, maps made (one per file while it is open); WAL frames
 * written in one call. */
struct dbmap_stats {
	unsigned long long	fetched, declined, maps, joined;
};
void	dbmap_stats(struct dbmap_stats *);

#endif
