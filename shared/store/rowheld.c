/* rowheld.c -- the rows a host's writers found held; see rowheld.h. */
#include <stdint.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/shmfile.h"
#include "store/db.h"
#include "store/rowheld.h"

#define ROWHELD_BYTES	4096
#define ROWHELD_SLOTS	(ROWHELD_BYTES / (int)sizeof(struct slot))
#define ROWHELD_PROBE	16	/* slots a row may take, from its own */
/* A claimed try waits its lock_timeout; this much more covers the rest
 * of its request. */
#define ROWHELD_CLAIM_MS	(DB_BUSY_MS + 1000)
/* Past anything this module sets: a time further ahead is another
 * boot's. */
#define ROWHELD_AHEAD_MS	(ROWHELD_MS + ROWHELD_CLAIM_MS)

struct slot {
	int64_t		row;		/* 0: never taken */
	int64_t		until;		/* held (or claimed) until; 0: free */
};

static struct slot *table;

int
rowheld_open(const char *path)
{
	if (table != NULL)
		return 0;
	return (table = shmfile_map(path, ROWHELD_BYTES)) == NULL ? -1 : 0;
}

/* until is still ahead of now, and not from another boot. */
static int
ahead(int64_t until, long long now)
{
	return until > now && until - now <= ROWHELD_AHEAD_MS;
}

/* The i-th slot row may take (i < ROWHELD_PROBE). */
static struct slot *
probe(long long row, int i)
{
	int at = (int)((uint64_t)row * 0x9e3779b97f4a7c15ULL >> 56) %
	    ROWHELD_SLOTS;

	return &table[(at + i) % ROWHELD_SLOTS];
}

static struct slot *
find(long long row)
{
	int i;

	if (table == NULL || row <= 0)
		return NULL;
	for (i = 0; i < ROWHELD_PROBE; i++) {
		struct slot *s = probe(row, i);

		if (__atomic_load_n(&s->row, __ATOMIC_ACQUIRE) == row)
			return s;
	}
	return NULL;
}

enum rowheld
rowheld_check(long long row)
{
	struct slot *s = find(row);
	int64_t until;
	long long now;

	if (s == NULL || (until = __atomic_load_n(&s->until,
	    __ATOMIC_ACQUIRE)) == 0)
		return ROWHELD_GO;
	now = clock_mono_ms();
	if (ahead(until, now))
		return ROWHELD_BUSY;
	/* its time passed: this process tries, the others wait for it */
	if (__atomic_compare_exchange_n(&s->until, &until,
	    now + ROWHELD_CLAIM_MS, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return ROWHELD_TRY;
	return until == 0 ? ROWHELD_GO : ROWHELD_BUSY;
}

int
rowheld_mark(long long row)
{
	struct slot *s = find(row);
	int64_t cur, was;
	long long now = clock_mono_ms();
	int i;

	if (table == NULL || row <= 0)
		return 1;
	if (s == NULL) {
		/* a slot never taken, or one free whose row is another's */
		for (i = 0; i < ROWHELD_PROBE && s == NULL; i++) {
			struct slot *t = probe(row, i);

			if (ahead(__atomic_load_n(&t->until, __ATOMIC_ACQUIRE),
			    now))
				continue;
			cur = __atomic_load_n(&t->row, __ATOMIC_ACQUIRE);
			if (__atomic_compare_exchange_n(&t->row, &cur, row, 0,
			    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				s = t;
		}
		if (s == NULL) {
			log_warn("row %lld: no room in the held rows' table",
			    row);
			return 1;
		}
	}
	was = __atomic_exchange_n(&s->until, now + ROWHELD_MS,
	    __ATOMIC_ACQ_REL);
	return was == 0 || !ahead(was, now);
}

void
rowheld_free(long long row)
{
	struct slot *s = find(row);

	if (s != NULL)
		__atomic_store_n(&s->until, 0, __ATOMIC_RELEASE);
}
