/* metrics.c -- shared request counters; see metrics.h. */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/metrics.h"

const char *const metrics_handlers[METRICS_HANDLERS] = {
	"web", "social", "notify", "admin", "", "", "", "",
};
const double metrics_bounds_ms[METRICS_BUCKETS - 1] = {
	1, 5, 10, 25, 50, 100, 250, 1000,
};
const double metrics_lock_bounds_ms[METRICS_LOCK_BUCKETS - 1] = {
	0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 100,
};

const char *
metrics_locker(int i)
{
	if (i >= 0 && i < METRICS_HANDLERS)
		return metrics_handlers[i];
	return i == METRICS_LOCK_WORKER ? "worker" : i == METRICS_LOCK_CKPT ?
	    "checkpoint" : "";
}

/* The bucket of a time in us among n - 1 bounds in ms. */
static int
bucket_of(long long us, const double *bounds_ms, int n)
{
	int b;

	for (b = 0; b < n - 1; b++)
		if ((double)us / 1000.0 <= bounds_ms[b])
			break;
	return b;
}

struct metrics *
metrics_open(const struct cfg *c)
{
	char path[PATH_MAX + 32];
	struct stat st;
	void *p;
	int fd;

	if (cfg_path(c, "metrics.bin", path, sizeof(path)) == -1)
		return NULL;
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1) {
		log_warn("metrics %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1 ||
	    (st.st_size != (off_t)sizeof(struct metrics) &&
	    (ftruncate(fd, 0) == -1 ||
	    ftruncate(fd, (off_t)sizeof(struct metrics)) == -1))) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, sizeof(struct metrics), PROT_READ | PROT_WRITE,
	    MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

int
metrics_handler(const char *name)
{
	int i;

	for (i = 0; i < METRICS_HANDLERS; i++)
		if (*metrics_handlers[i] && strcmp(metrics_handlers[i], name) == 0)
			return i;
	return -1;
}

void
metrics_observe(struct metrics *m, int h, int status, long long us,
    const struct metrics_cost *c)
{
	struct metrics_slot *s;
	int b, cls = status / 100;

	if (m == NULL || h < 0 || h >= METRICS_HANDLERS)
		return;
	s = &m->slot[h];
	if (cls < 1 || cls > 5)
		cls = 0;
	b = bucket_of(us, metrics_bounds_ms, METRICS_BUCKETS);
	__atomic_fetch_add(&s->by_class[cls], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->bucket[b], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->sum_us, (uint64_t)(us > 0 ? us : 0),
	    __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->sqlite_stmts, c->stmts, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->sql_trips, c->sqltrips, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->sql_commits, c->commits, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->redis_cmds, c->cmds, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->redis_trips, c->trips, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->kept_whole, c->kept, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->counts_kept, c->ckept, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->pages_ahead, c->ahead, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->sql_ahead, c->sqlahead, __ATOMIC_RELAXED);
}

void
metrics_live(struct metrics *m, int what)
{
	if (m != NULL && what >= 0 && what < METRICS_LIVE__MAX)
		__atomic_fetch_add(&m->live[what], 1, __ATOMIC_RELAXED);
}

void
metrics_lock(struct metrics *m, int who, long long wait_us, long long hold_us)
{
	struct metrics_lock *l;

	if (m == NULL || who < 0 || who >= METRICS_LOCKERS)
		return;
	l = &m->lock[who];
	wait_us = wait_us > 0 ? wait_us : 0;
	hold_us = hold_us > 0 ? hold_us : 0;
	__atomic_fetch_add(&l->wait[bucket_of(wait_us, metrics_lock_bounds_ms,
	    METRICS_LOCK_BUCKETS)], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&l->hold[bucket_of(hold_us, metrics_lock_bounds_ms,
	    METRICS_LOCK_BUCKETS)], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&l->wait_us, (uint64_t)wait_us, __ATOMIC_RELAXED);
	__atomic_fetch_add(&l->hold_us, (uint64_t)hold_us, __ATOMIC_RELAXED);
}
