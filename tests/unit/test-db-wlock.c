/* test-db-wlock.c -- the writers' lock of db_begin() (shared/store/db.h): a
 * second process's db_begin() waits while a transaction is open and goes
 * on the moment it commits; a writer killed inside its transaction frees
 * the lock at once (the kernel drops the flock); commit and rollback both
 * release it; db_hold() opens the transaction the next db_begin() joins,
 * and db_release() rolls back one nobody joined.  And db_checkpoint(): the WAL starts over from its
 * beginning (emptied when truncating, or when the WAL stopped growing), a reader that
 * still needs old frames makes it give up at once instead of holding the
 * writers, and it never leaves the writers' lock taken.  Every checkpoint
 * holds the lock, and so does a write in autocommit until it ends: no
 * write resets the WAL while a checkpoint begins (ckpt.c: SQLite's
 * WAL-reset bug). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/file.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/db.h"
#include "store/dbq.h"
#include "tmpdb.h"

static struct tmpdb tdb;
#define path (tdb.path)

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
setup(void **state)
{
	(void)state;
	return tmpdb_make_t(&tdb, "wlock");
}

static int
teardown(void **state)
{
	(void)state;
	return tmpdb_remove(&tdb);
}

/* A child that opens the database, begins, tells the parent through the
 * pipe, then commits after hold_ms -- or dies with SIGKILL if kill_it. */
static pid_t
holder(int hold_ms, int kill_it, int *rd)
{
	int p[2];
	pid_t pid;
	struct db d;

	assert_int_equal(pipe(p), 0);
	if ((pid = fork()) == 0) {
		close(p[0]);
		if (db_open(&d, path) == -1 || db_begin(&d) == -1 ||
		    db_exec(&d, "INSERT INTO t VALUES (1)") == -1)
			_exit(2);
		if (write(p[1], "b", 1) != 1)
			_exit(3);
		usleep((useconds_t)hold_ms * 1000);
		if (kill_it)
			raise(SIGKILL);
		_exit(db_commit(&d) == 0 ? 0 : 4);
	}
	close(p[1]);
	*rd = p[0];
	return pid;
}

static void
test_waits_for_the_holder(void **state)
{
	struct db d;
	char c;
	int rd, st;
	long long t0, waited;
	pid_t pid;

	(void)state;
	assert_int_equal(db_open(&d, path), 0);
	pid = holder(300, 0, &rd);
	assert_int_equal(read(rd, &c, 1), 1);	/* the child is inside */
	t0 = now_ms();
	assert_int_equal(db_begin(&d), 0);
	waited = now_ms() - t0;
	assert_true(waited >= 200);		/* it waited for the commit */
	assert_true(waited < 3000);		/* and went on at once */
	assert_int_equal(db_exec(&d, "INSERT INTO t VALUES (2)"), 0);
	assert_int_equal(db_commit(&d), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(rd);
	db_close(&d);
}

static void
test_killed_holder_frees_it(void **state)
{
	struct db d;
	char c;
	int rd, st;
	long long t0;
	pid_t pid;

	(void)state;
	assert_int_equal(db_open(&d, path), 0);
	pid = holder(100, 1, &rd);
	assert_int_equal(read(rd, &c, 1), 1);
	t0 = now_ms();
	assert_int_equal(db_begin(&d), 0);
	assert_true(now_ms() - t0 < 3000);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	db_rollback(&d);
	close(rd);
	db_close(&d);
}

static void
test_commit_and_rollback_release(void **state)
{
	struct db a, b;

	(void)state;
	assert_int_equal(db_open(&a, path), 0);
	assert_int_equal(db_open(&b, path), 0);	/* own descriptor: own flock */
	assert_int_equal(db_begin(&a), 0);
	assert_true(a.wlocked);
	db_rollback(&a);
	assert_false(a.wlocked);
	assert_int_equal(db_begin(&b), 0);	/* free again */
	assert_int_equal(db_commit(&b), 0);
	assert_false(b.wlocked);
	assert_int_equal(db_begin(&a), 0);
	assert_int_equal(db_commit(&a), 0);
	db_close(&a);
	db_close(&b);
}

static long long
count_t(struct db *d)
{
	sqlite3_stmt *s;
	long long n;

	assert_int_equal(sqlite3_prepare_v2(d->h, "SELECT COUNT(*) FROM t",
	    -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

/* db_hold(): the transaction is open (and the lock held) at once; the
 * next db_begin() joins it, so what was read before and the write commit
 * together; db_release() rolls back a hold nobody joined and frees the
 * lock, and leaves a committed one alone. */
static void
test_hold_join_release(void **state)
{
	struct db a, b;
	long long n0;

	(void)state;
	assert_int_equal(db_open(&a, path), 0);
	assert_int_equal(db_open(&b, path), 0);
	n0 = count_t(&a);

	/* joined: one transaction, committed by the page */
	assert_int_equal(db_hold(&a), 0);
	assert_true(a.wlocked);
	assert_false(sqlite3_get_autocommit(a.h));
	assert_int_equal(db_begin(&a), 0);	/* joins, no nested BEGIN */
	assert_int_equal(db_exec(&a, "INSERT INTO t VALUES (7)"), 0);
	assert_int_equal(db_commit(&a), 0);
	assert_false(a.wlocked);
	db_release(&a);				/* nothing left: no-op */
	assert_int_equal(count_t(&b), n0 + 1);

	/* not joined (a refused request): rolled back, lock free */
	assert_int_equal(db_hold(&a), 0);
	assert_int_equal(db_exec(&a, "INSERT INTO t VALUES (8)"), 0);
	db_release(&a);
	assert_false(a.wlocked);
	assert_true(sqlite3_get_autocommit(a.h));
	assert_int_equal(count_t(&b), n0 + 1);
	assert_int_equal(db_begin(&b), 0);	/* the other writer goes on */
	assert_int_equal(db_commit(&b), 0);

	/* joined, then the page rolled back: the next begin opens anew */
	assert_int_equal(db_hold(&a), 0);
	assert_int_equal(db_begin(&a), 0);
	db_rollback(&a);
	assert_false(a.held);
	assert_int_equal(db_begin(&a), 0);
	assert_int_equal(db_exec(&a, "INSERT INTO t VALUES (9)"), 0);
	assert_int_equal(db_commit(&a), 0);
	assert_int_equal(count_t(&b), n0 + 2);
	db_close(&a);
	db_close(&b);
}

/* Frames in the WAL now (a passive checkpoint reports them). */
static int
wal_frames(struct db *d)
{
	int nlog = -1, nckpt = -1;

	assert_int_equal(sqlite3_wal_checkpoint_v2(d->h, NULL,
	    SQLITE_CHECKPOINT_PASSIVE, &nlog, &nckpt), SQLITE_OK);
	return nlog;
}

static void
writes(struct db *d, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		assert_int_equal(db_begin(d), 0);
		assert_int_equal(db_exec(d, "INSERT INTO t VALUES (3)"), 0);
		assert_int_equal(db_commit(d), 0);
	}
}

static void
test_checkpoint_starts_the_wal_over(void **state)
{
	struct db a, b;

	(void)state;
	assert_int_equal(db_open(&a, path), 0);
	assert_int_equal(db_open(&b, path), 0);
	db_exec(&a, "PRAGMA wal_autocheckpoint = 0");
	db_exec(&b, "PRAGMA wal_autocheckpoint = 0");
	writes(&a, 100);
	/* the next write starts from the WAL's beginning */
	assert_int_equal(db_checkpoint(&b, 0, 0), 0);
	assert_false(b.wlocked);
	writes(&a, 1);
	assert_true(wal_frames(&b) <= 4);
	/* truncate: an empty file */
	writes(&a, 50);
	assert_int_equal(db_checkpoint(&b, 0, 1), 0);
	assert_int_equal(wal_frames(&b), 0);
	db_close(&a);
	db_close(&b);
}

/* Below min_frames a WAL that grows is left alone; one that stopped
 * growing (nobody writes) is truncated: its file is empty again. */
static void
test_checkpoint_truncates_an_idle_wal(void **state)
{
	struct db a, b;
	struct stat st;
	char wal[320];

	(void)state;
	snprintf(wal, sizeof(wal), "%s-wal", path);
	assert_int_equal(db_open(&a, path), 0);
	assert_int_equal(db_open(&b, path), 0);
	db_exec(&a, "PRAGMA wal_autocheckpoint = 0");
	db_exec(&b, "PRAGMA wal_autocheckpoint = 0");
	writes(&a, 30);
	assert_int_equal(db_checkpoint(&b, 1000, 0), 0);
	/* (all copied: the next writer starts the WAL over by itself) */
	writes(&a, 5);
	assert_int_equal(db_checkpoint(&b, 1000, 0), 0);	/* changed */
	assert_true(wal_frames(&b) > 0);
	assert_int_equal(stat(wal, &st), 0);
	assert_true(st.st_size > 0);
	assert_int_equal(db_checkpoint(&b, 1000, 0), 0);	/* did not */
	assert_false(b.wlocked);
	assert_int_equal(wal_frames(&b), 0);
	assert_int_equal(stat(wal, &st), 0);
	assert_int_equal(st.st_size, 0);
	/* and writers go on from the beginning */
	writes(&a, 1);
	assert_true(wal_frames(&b) <= 4);
	db_close(&a);
	db_close(&b);
}

static void
test_checkpoint_gives_way_to_old_readers(void **state)
{
	struct db a, b, r;
	long long t0;

	(void)state;
	assert_int_equal(db_open(&a, path), 0);
	assert_int_equal(db_open(&b, path), 0);
	assert_int_equal(db_open(&r, path), 0);
	db_exec(&a, "PRAGMA wal_autocheckpoint = 0");
	writes(&a, 20);
	/* r reads a snapshot that later writes leave behind */
	assert_int_equal(db_exec(&r, "BEGIN; SELECT count(*) FROM t;"), 0);
	writes(&a, 20);
	t0 = now_ms();
	assert_int_equal(db_checkpoint(&b, 0, 0), 1);
	assert_true(now_ms() - t0 < 1000);	/* gave up, did not wait */
	assert_false(b.wlocked);
	assert_int_equal(db_begin(&a), 0);	/* writers go on */
	db_rollback(&a);
	assert_int_equal(db_exec(&r, "COMMIT"), 0);
	assert_int_equal(db_checkpoint(&b, 0, 0), 0);
	writes(&a, 1);
	assert_true(wal_frames(&b) <= 4);
	db_close(&a);
	db_close(&b);
	db_close(&r);
}

/* The worker's copy of the WAL beside the writers waits for a writer's
 * transaction to end: it copied while a writer could reset the WAL. */
static void
test_copy_waits_for_the_writer(void **state)
{
	struct db b;
	char c;
	int rd, st;
	long long t0;
	pid_t pid;

	(void)state;
	assert_int_equal(db_open(&b, path), 0);
	db_exec(&b, "PRAGMA wal_autocheckpoint = 0");
	writes(&b, 10);
	pid = holder(300, 0, &rd);
	assert_int_equal(read(rd, &c, 1), 1);	/* the child is inside */
	t0 = now_ms();
	assert_int_equal(db_checkpoint_copy(&b), 0);
	assert_true(now_ms() - t0 >= 200);	/* after the commit */
	assert_false(b.wlocked);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(rd);
	db_close(&b);
}

/* Whether another process could take the writers' lock now. */
static int
lock_free(void)
{
	char lk[320];
	int fd, got;

	snprintf(lk, sizeof(lk), "%s-wlock", path);
	assert_true((fd = open(lk, O_RDWR | O_CLOEXEC)) != -1);
	got = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return got;
}

/* A write outside db_begin() holds the writers' lock until it ends: its
 * rows read (RETURNING), its reset. */
static void
test_autocommit_write_holds_the_lock(void **state)
{
	struct db a;
	struct dbq *q;
	pid_t pid;
	int st;

	(void)state;
	assert_int_equal(db_open(&a, path), 0);
	assert_non_null(q = dbq_prepare_once(&a,
	    "INSERT INTO t VALUES (5), (6) RETURNING x"));
	assert_int_equal(dbq_step(q), DBQ_ROW);
	/* asked from another process: flock() is the file's, per open */
	if ((pid = fork()) == 0)
		_exit(lock_free() ? 1 : 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	dbq_done(q);
	assert_false(a.wlocked);
	assert_true(lock_free());
	dbq_finalize(q);
	/* one that ends in its first step lets it go there */
	assert_non_null(q = dbq_prepare_once(&a, "INSERT INTO t VALUES (7)"));
	assert_int_equal(dbq_step(q), DBQ_DONE);
	assert_false(a.wlocked);
	dbq_finalize(q);
	db_close(&a);
}

/* A write in autocommit from a thread that blocks every signal (a run's
 * lease renewer): db_wlock()'s timer could not wake its flock(), which
 * waited for as long as the lock was held.  It gives up after its
 * busy_ms as any writer does. */
static void *
blocked_writer(void *arg)
{
	struct db *d = arg;
	struct dbq *q;
	sigset_t all;
	long rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if ((q = dbq_prepare_once(d, "INSERT INTO t VALUES (8)")) == NULL)
		return (void *)2L;
	rc = dbq_step(q);
	dbq_finalize(q);
	return (void *)rc;
}

static void
test_autocommit_write_of_a_thread_gives_up(void **state)
{
	struct db c;
	pthread_t t;
	void *rc;
	char ch;
	int rd, st;
	long long t0;
	pid_t pid;

	(void)state;
	assert_int_equal(db_open(&c, path), 0);
	c.busy_ms = 200;
	pid = holder(1500, 0, &rd);
	assert_int_equal(read(rd, &ch, 1), 1);	/* the child is inside */
	t0 = now_ms();
	assert_int_equal(pthread_create(&t, NULL, blocked_writer, &c), 0);
	assert_int_equal(pthread_join(t, &rc), 0);
	assert_int_equal((long)rc, DBQ_ERR);
	assert_true(now_ms() - t0 < 1200);	/* not the holder's 1.5 s */
	assert_false(c.wlocked);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(rd);
	db_close(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waits_for_the_holder),
		cmocka_unit_test(test_killed_holder_frees_it),
		cmocka_unit_test(test_commit_and_rollback_release),
		cmocka_unit_test(test_hold_join_release),
		cmocka_unit_test(test_checkpoint_starts_the_wal_over),
		cmocka_unit_test(test_checkpoint_truncates_an_idle_wal),
		cmocka_unit_test(test_checkpoint_gives_way_to_old_readers),
		cmocka_unit_test(test_copy_waits_for_the_writer),
		cmocka_unit_test(test_autocommit_write_holds_the_lock),
		cmocka_unit_test(test_autocommit_write_of_a_thread_gives_up),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, setup, teardown);
}
