/* test-dbmap.c -- the "tally" VFS (shared/store/dbmap.h): pages come
 * through the process's map of the database file, which outlives changes
 * by other connections and processes; a reader sees every commit, the file
 * growing under it (another process's checkpoint) and shrinking (VACUUM);
 * one map serves every connection of a process; a second connection
 * opening the file does not drop the first one's shared lock (a
 * descriptor of the file closed in the process would); and a WAL frame
 * goes to the file in one write, every commit whole in the file when a
 * process dies after it (the WAL recovered from the file alone). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/db.h"
#include "store/dbmap.h"
#include "tmpdb.h"

static struct tmpdb tdb;

static int
setup(void **state)
{
	(void)state;
	return tmpdb_make_t(&tdb, "dbmap");
}

static int
teardown(void **state)
{
	(void)state;
	return tmpdb_remove(&tdb);
}

static long long
one(struct db *d, const char *sql)
{
	sqlite3_stmt *s;
	long long v;

	assert_int_equal(sqlite3_prepare_v2(d->h, sql, -1, &s, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* read() and pread() calls of this process so far (/proc/self/io) */
static long long
read_calls(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	long long n = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "syscr: %lld", &n) == 1)
			break;
	fclose(f);
	assert_true(n >= 0);
	return n;
}

static off_t
file_size(void)
{
	struct stat st;

	assert_int_equal(stat(tdb.path, &st), 0);
	return st.st_size;
}

/* sql run by a process of its own, then a checkpoint that copies what
 * it wrote into the file (which grows, or shrinks after a VACUUM). */
static void
child_exec(const char *sql)
{
	struct db d;
	pid_t pid;
	int st;

	if ((pid = fork()) == 0) {
		if (db_open(&d, tdb.path) == -1 || db_exec(&d, sql) == -1 ||
		    db_checkpoint(&d, 0, 1) == -1)
			_exit(1);
		db_close(&d);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* n rows of ~1 KB each, from another process */
static void
child_writes(int n)
{
	char sql[160];

	snprintf(sql, sizeof(sql), "WITH RECURSIVE c(i) AS (SELECT 1 "
	    "UNION ALL SELECT i + 1 FROM c WHERE i < %d) "
	    "INSERT INTO t SELECT randomblob(1000) FROM c", n);
	child_exec(sql);
}

/* The main file's xFetch: a page inside the file is the file's bytes (as
 * pread() reads them), the page at its end and past it are NULL (the
 * pager then reads; touching them through the map would be SIGBUS). */
static void
fetch_bounds(struct db *d)
{
	sqlite3_file *f = NULL;
	sqlite3_int64 size;
	unsigned char page[4096];
	void *p;
	int fd;

	assert_int_equal(sqlite3_file_control(d->h, "main",
	    SQLITE_FCNTL_FILE_POINTER, &f), SQLITE_OK);
	assert_non_null(f);
	assert_int_equal(f->pMethods->xFileSize(f, &size), SQLITE_OK);
	assert_true(size >= 3 * 4096);
	assert_int_equal(f->pMethods->xFetch(f, 4096, 4096, &p), SQLITE_OK);
	assert_non_null(p);
	assert_true((fd = open(tdb.path, O_RDONLY)) != -1);
	assert_int_equal(pread(fd, page, sizeof(page), 4096), 4096);
	close(fd);
	assert_memory_equal(p, page, sizeof(page));
	assert_int_equal(f->pMethods->xUnfetch(f, 4096, p), SQLITE_OK);
	assert_int_equal(f->pMethods->xFetch(f, size - 4096 + 1, 4096, &p),
	    SQLITE_OK);
	assert_null(p);
	assert_int_equal(f->pMethods->xFetch(f, size, 4096, &p), SQLITE_OK);
	assert_null(p);
}

static void
test_pages_from_the_map(void **state)
{
	struct dbmap_stats a, b;
	struct db d, e;

	(void)state;
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(db_exec(&d, "INSERT INTO t SELECT randomblob(1000) "
	    "FROM (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3)"), 0);
	assert_int_equal(db_checkpoint(&d, 0, 1), 0);
	dbmap_stats(&a);
	assert_int_equal(one(&d, "SELECT count(length(x)) FROM t"), 3);
	dbmap_stats(&b);
	assert_true(b.fetched > a.fetched);	/* pages 2.. from the map */
	/* a second connection: the same map */
	assert_int_equal(db_open(&e, tdb.path), 0);
	dbmap_stats(&a);
	assert_int_equal(a.maps, b.maps);
	assert_int_equal(one(&e, "SELECT count(length(x)) FROM t"), 3);
	assert_int_equal(one(&d, "PRAGMA mmap_size"), DBMAP_BYTES);
	db_close(&e);
	db_close(&d);
}

static void
test_grows_and_shrinks_under_a_reader(void **state)
{
	struct dbmap_stats a, b;
	struct db d;
	off_t before, grown;
	long long calls;

	(void)state;
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(one(&d, "SELECT count(*) FROM t"), 0);
	before = file_size();
	/* another process commits and checkpoints: the file grows past
	 * what this process measured; the map, made before, reads it */
	child_writes(2000);
	grown = file_size();
	assert_true(grown > before + 1000 * 1000);
	dbmap_stats(&a);
	calls = read_calls();
	assert_int_equal(one(&d, "SELECT count(length(x)) FROM t"), 2000);
	assert_int_equal(one(&d, "SELECT sum(length(x)) FROM t"), 2000 * 1000);
	calls = read_calls() - calls;
	dbmap_stats(&b);
	/* ~500 pages twice, none of them a read() call (the WAL is empty
	 * after the child's checkpoint) */
	assert_true(b.fetched - a.fetched > 800);
	assert_true(calls < 20);
	assert_int_equal(b.maps, a.maps);		/* no new map */
	fetch_bounds(&d);
	/* it shrinks: most rows go, VACUUM and a checkpoint truncate the
	 * file; a read past its end would be SIGBUS, and none happens */
	child_exec("DELETE FROM t WHERE rowid > 10; VACUUM");
	assert_true(file_size() < grown / 4);
	assert_int_equal(one(&d, "SELECT count(*) FROM t"), 10);
	/* and grows again */
	child_writes(1500);
	assert_int_equal(one(&d, "SELECT count(length(x)) FROM t"), 1510);
	db_close(&d);
}

/* 0 when another process sees this one's read lock on SQLite's shared
 * range of the database file (F_GETLK, at 1 GiB + 2), else not 0. */
static int
shared_lock_seen(void)
{
	pid_t pid;
	int st;

	if ((pid = fork()) == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
		    .l_start = 0x40000000 + 2, .l_len = 510 };
		int fd = open(tdb.path, O_RDONLY);

		if (fd == -1 || fcntl(fd, F_GETLK, &fl) == -1)
			_exit(2);
		_exit(fl.l_type == F_RDLCK && fl.l_pid == getppid() ? 0 : 1);
	}
	if (pid == -1 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* A connection in WAL mode holds a shared lock on the database file for
 * as long as it is open (so that another process's connection, closing,
 * knows it is not the last and leaves the WAL).  A second connection of
 * the process opening and closing must not drop it, as closing any
 * descriptor of the file in the process would: another process still
 * sees it (F_GETLK on SQLite's shared range, at 1 GiB + 2). */
static void
test_open_keeps_locks(void **state)
{
	struct db d, e;

	(void)state;
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(one(&d, "SELECT count(*) FROM t"), 0);
	assert_int_equal(db_open(&e, tdb.path), 0);
	assert_int_equal(one(&e, "SELECT count(*) FROM t"), 0);
	db_close(&e);	/* the last but one: the map stays */
	assert_int_equal(shared_lock_seen(), 0);	/* d's lock is there */
	db_close(&d);
}

/* fn run by a process of its own, which must exit 0. */
static void
in_child(int (*fn)(void))
{
	pid_t pid;
	int st;

	if ((pid = fork()) == 0)
		_exit(fn());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

#ifndef __SANITIZE_ADDRESS__
/* This process's address space now, in bytes (/proc/self/status). */
static long long
vm_size(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	long long kb = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmSize: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/* In a process whose address space has no room for a map: the first
 * connection reads without one (mmap_size reads back 0), and a second
 * connection's open still must not take the first one's lock away (it
 * would, trying the map again with a descriptor of its own).  0 when so,
 * else where it went wrong. */
static int
no_map_child(void)
{
	struct rlimit rl;
	struct db d, e;
	sqlite3_stmt *s;
	long long vm = vm_size(), v = -1;

	if (vm <= 0)
		return 2;
	rl.rlim_cur = rl.rlim_max = (rlim_t)vm + ((rlim_t)512 << 20);
	if (setrlimit(RLIMIT_AS, &rl) == -1 || db_open(&d, tdb.path) == -1)
		return 3;
	if (sqlite3_prepare_v2(d.h, "PRAGMA mmap_size", -1, &s, NULL) !=
	    SQLITE_OK)
		return 4;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (v != 0 || sqlite3_exec(d.h, "SELECT count(*) FROM t", NULL, NULL,
	    NULL) != SQLITE_OK)
		return 5;		/* mapped after all, or no read */
	if (db_open(&e, tdb.path) == -1 || sqlite3_exec(e.h,
	    "SELECT count(*) FROM t", NULL, NULL, NULL) != SQLITE_OK)
		return 6;
	db_close(&e);
	if (shared_lock_seen() != 0)
		return 8;		/* d's lock is gone */
	db_close(&d);
	return 0;
}

static void
test_no_map_keeps_locks(void **state)
{
	(void)state;
	in_child(no_map_child);
}
#endif

/* One transaction of a child killed after its commits: many rows
 * updated over and over with a page cache of 8 pages (the pager spills
 * pages to the WAL and writes them again before the commit, and SQLite
 * rewrites those frames' checksums), a savepoint rolled back, then
 * committed transactions; it dies without closing (as kill -9 leaves
 * it).  The commits must all be in the WAL file itself: the parent
 * deletes the shared-memory index, so its open rebuilds the index from
 * the frames and their checksums, stopping at the first frame that is
 * not whole. */
static int
frames_child(void)
{
	struct dbmap_stats a, b;
	struct db d;
	int i;

	if (db_open(&d, tdb.path) == -1)
		return 2;
	dbmap_stats(&a);
	if (db_exec(&d, "PRAGMA cache_size = 8") == -1 ||
	    db_exec(&d, "BEGIN") == -1 ||
	    db_exec(&d, "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT "
	    "i + 1 FROM c WHERE i < 20000) INSERT INTO t SELECT 0 FROM c") == -1)
		return 3;
	for (i = 0; i < 20; i++)
		if (db_exec(&d, "UPDATE t SET x = x + 1") == -1)
			return 4;
	if (db_exec(&d, "SAVEPOINT s") == -1 ||
	    db_exec(&d, "UPDATE t SET x = x + 1000") == -1 ||
	    db_exec(&d, "ROLLBACK TO s") == -1 ||
	    db_exec(&d, "RELEASE s") == -1 || db_exec(&d, "COMMIT") == -1)
		return 5;
	for (i = 0; i < 30; i++)
		if (db_exec(&d, "UPDATE t SET x = x + 1 WHERE rowid % 7 = 0") ==
		    -1)
			return 6;
	dbmap_stats(&b);
	if (b.joined <= a.joined)
		return 7;	/* no frame written in one call */
	_exit(0);		/* no close, no checkpoint: the WAL stays */
}

static void
test_wal_frames_whole_after_a_crash(void **state)
{
	char shm[320], wal[320];
	struct stat st;
	struct db d;

	(void)state;
	in_child(frames_child);
	snprintf(wal, sizeof(wal), "%s-wal", tdb.path);
	snprintf(shm, sizeof(shm), "%s-shm", tdb.path);
	assert_int_equal(stat(wal, &st), 0);
	assert_true(st.st_size > 64 * 4096);	/* the frames are there */
	assert_int_equal(unlink(shm), 0);	/* the index from the WAL */
	assert_int_equal(db_open(&d, tdb.path), 0);
	assert_int_equal(one(&d, "SELECT count(*) FROM t"), 20000);
	/* 20 each, and 30 more for every seventh row (2,857 of them) */
	assert_int_equal(one(&d, "SELECT sum(x) FROM t"),
	    20000 * 20 + 2857 * 30);
	assert_int_equal(one(&d, "SELECT count(*) FROM pragma_integrity_check "
	    "WHERE integrity_check <> 'ok'"), 0);
	db_close(&d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pages_from_the_map,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_grows_and_shrinks_under_a_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_keeps_locks, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_wal_frames_whole_after_a_crash, setup, teardown),
#ifndef __SANITIZE_ADDRESS__	/* its shadow needs the address space */
		cmocka_unit_test_setup_teardown(test_no_map_keeps_locks, setup,
		    teardown),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
