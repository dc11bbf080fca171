/* wlock.c -- the writers' lock: an flock() on "<database>-wlock" that
 * every write of tally's holds (db_begin(), a group commit, a write in
 * autocommit, a checkpoint); see db_int.h.  Apart from db.c, so that a
 * statement (dbq.c) takes it without a call back into db.c. */
#include <sys/file.h>
#include <sys/time.h>

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/metrics.h"
#include "store/db.h"
#include "store/db_int.h"

void
db_wunlock(struct db *d)
{
	if (d->wlocked) {
		flock(d->wlock_fd, LOCK_UN);
		d->wlocked = 0;
		/* how long it was waited for and held (/metrics) */
		metrics_lock(d->metrics, d->in_ckpt ? METRICS_LOCK_CKPT :
		    d->lock_who, d->wlock_at - d->wlock_asked,
		    clock_mono_us() - d->wlock_at);
	}
}

static void
on_alarm(int sig)
{
	(void)sig;	/* only interrupts a waiting flock() */
}

/* A wait of ms for the writers' lock ran out at now: the lock is known
 * held for DB_STUCK_MS more (db.h), which the log says once a while. */
static void
stuck(struct db *d, long long now, int ms)
{
	if (ms == DB_BUSY_MS) {		/* not known held before */
		d->stuck_since = d->stuck_logged = now;
		d->stuck_waits = 0;
		log_warn("writers' lock not free after %d ms; waits of %d ms "
		    "for it until it is taken", DB_BUSY_MS, DB_STUCK_WAIT_MS);
	} else if (now - d->stuck_logged >= DB_STUCK_MS * 1000LL) {
		d->stuck_logged = now;
		log_warn("writers' lock still not free after %lld ms; %d waits "
		    "for it ran out", (now - d->stuck_since) / 1000 +
		    DB_BUSY_MS, d->stuck_waits + 1);
	}
	d->stuck_waits++;
	d->stuck_until = now + DB_STUCK_MS * 1000LL;
}

/* The writers' lock: at once when free (one call), else a blocking wait
 * that SIGALRM cuts off after DB_BUSY_MS, as SQLite's busy timeout did;
 * after DB_STUCK_WAIT_MS while the lock is known held (db.h:
 * DB_STUCK_MS).  0, or -1 (timed out: the caller fails like on
 * SQLITE_BUSY). */
int
db_wlock(struct db *d)
{
	struct itimerval it = { { 0, 0 }, { 0, 0 } }, off = it;
	long long now;
	int rc, ms;

	if (d->wlock_fd <= 0 || d->wlocked)
		return 0;	/* no lock file, or held already */
	d->wlock_asked = d->wlock_at = clock_mono_us();
	if (flock(d->wlock_fd, LOCK_EX | LOCK_NB) == 0)
		goto held;
	if (errno != EWOULDBLOCK)
		return 0;	/* no usable lock file: SQLite's lock still holds */
	ms = d->wlock_at < d->stuck_until ? DB_STUCK_WAIT_MS : DB_BUSY_MS;
	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_usec = (ms % 1000) * 1000;
	setitimer(ITIMER_REAL, &it, NULL);
	rc = flock(d->wlock_fd, LOCK_EX);
	setitimer(ITIMER_REAL, &off, NULL);
	if (rc == -1) {
		d->busy = 1;
		now = clock_mono_us();
		if (now - d->wlock_asked < ms * 1000LL)
			return -1;	/* another signal cut it short */
		stuck(d, now, ms);
		return -1;
	}
	d->wlock_at = clock_mono_us();
held:
	if (d->stuck_until != 0)
		log_info("writers' lock taken again, %lld ms after a wait for "
		    "it first ran out; %d waits ran out", (d->wlock_at -
		    d->stuck_since) / 1000, d->stuck_waits);
	d->stuck_until = 0;
	d->wlocked = 1;
	return 0;
}

void
db_wlock_open(struct db *d, const char *path)
{
	struct sigaction sa;
	char lp[4096];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: flock() returns EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	/* Opened here, after any fork(): an flock() belongs to the open
	 * file, so a descriptor inherited across fork() would not exclude
	 * the other children. */
	if (strcmp(path, ":memory:") != 0 && *path != '\0' &&	/* a file */
	    snprintf(lp, sizeof(lp), "%s-wlock", path) < (int)sizeof(lp) &&
	    (d->wlock_fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1)
		log_warn("%s: %s (writers poll SQLite's lock)", lp,
		    strerror(errno));
}

/* The lock for a thread that blocks SIGALRM (a run's lease renewer,
 * count/runs.c), which db_wlock()'s timer cannot wake: asked again and
 * again, a pause between (1 ms doubling to 64), for d->busy_ms at most.
 * Waiting in flock() instead, it waited for as long as the lock was
 * held, and the timer's signal went to another thread.  0 or -1. */
static int
wlock_polled(struct db *d)
{
	long long until = clock_mono_us() + d->busy_ms * 1000LL;
	useconds_t pause = 1000;

	d->wlock_asked = clock_mono_us();
	while (flock(d->wlock_fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno != EWOULDBLOCK)
			return 0;	/* no usable lock file: SQLite's holds */
		if (clock_mono_us() >= until) {
			d->busy = 1;
			return -1;
		}
		usleep(pause);
		pause = pause < 64000 ? pause * 2 : pause;
	}
	d->wlock_at = clock_mono_us();
	d->wlocked = 1;
	return 0;
}

int
db_write_alone(struct db *d, const void *stmt)
{
	sigset_t cur;

	if (d->pg != NULL || !sqlite3_get_autocommit(d->h) || d->wlocked ||
	    d->wlock_fd <= 0)
		return 0;
	if (pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0 &&
	    sigismember(&cur, SIGALRM) ? wlock_polled(d) == -1 :
	    db_wlock(d) == -1)
		return -1;
	if (d->wlocked)		/* not: no lock file to take */
		d->auto_wlock = stmt;
	return 0;
}

void
db_write_alone_end(struct db *d, const void *stmt)
{
	if (d->auto_wlock != NULL && d->auto_wlock == stmt) {
		d->auto_wlock = NULL;
		db_wunlock(d);
	}
}
