/* rhealth.c -- a host's shared Redis backoff; see rhealth.h. */
#include <stdint.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/shmfile.h"
#include "store/rhealth.h"

#define RHEALTH_FIRST_MS	250
#define RHEALTH_MAX_MS		4000
/* A claimed try lasts its command timeout; this much more covers the
 * connect and the bookkeeping around it. */
#define RHEALTH_SLACK_MS	100
/* Past any backoff or claim a process can set (the worker's 5 s
 * timeout is the longest): a time further ahead is from another boot. */
#define RHEALTH_AHEAD_MS	15000
#define RHEALTH_BYTES		4096

/* One server's slot: a cache line, so that two servers' slots are not
 * written over each other's line. */
struct rhealth {
	uint64_t	key;		/* the address's hash; 0: free */
	int64_t		down_ms;	/* the last failure; 0: up */
	int64_t		due_ms;		/* the backoff ends */
	int64_t		claim_ms;	/* a claimed try's end */
	int64_t		up_ms;		/* the last answer that cleared it */
	int32_t		backoff_ms;
	int32_t		tmo_ms;		/* the longest wait that failed */
	int64_t		refused_ms;	/* a write last refused; 0: never */
	char		pad[8];
};

#define RHEALTH_SLOTS	(RHEALTH_BYTES / (int)sizeof(struct rhealth))
_Static_assert(sizeof(struct rhealth) == 64, "a slot is a cache line");

static struct rhealth *table;

int
rhealth_open(const char *path)
{
	if (table != NULL)
		return 0;
	if ((table = shmfile_map(path, RHEALTH_BYTES)) == NULL)
		return -1;
	return 0;
}

/* FNV-1a, never 0 (a free slot's key). */
static uint64_t
addr_key(const char *addr)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *addr != '\0'; addr++)
		h = (h ^ (unsigned char)*addr) * 1099511628211ULL;
	return h | 1;
}

struct rhealth *
rhealth_slot(const char *addr)
{
	uint64_t key, cur;
	int i, at;

	if (table == NULL || addr[0] == '\0')
		return NULL;
	key = addr_key(addr);
	at = (int)(key % RHEALTH_SLOTS);
	for (i = 0; i < RHEALTH_SLOTS; i++) {
		struct rhealth *h = &table[(at + i) % RHEALTH_SLOTS];

		cur = __atomic_load_n(&h->key, __ATOMIC_ACQUIRE);
		if (cur == 0) {
			/* take it, unless another process just did */
			if (__atomic_compare_exchange_n(&h->key, &cur, key, 0,
			    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				return h;
		}
		if (cur == key)
			return h;
	}
	log_warn("redis %s: no room in the shared backoff table", addr);
	return NULL;
}

/* t is still ahead of now, and not from another boot. */
static int
ahead(int64_t t, long long now)
{
	return t > now && t - now <= RHEALTH_AHEAD_MS;
}

int
rhealth_skip(struct rhealth *h, long long answered_ms, int timeout_ms,
    long long *try_until)
{
	int64_t down, claim, end;
	long long now;

	if (h == NULL)
		return 0;
	down = __atomic_load_n(&h->down_ms, __ATOMIC_ACQUIRE);
	if (down == 0 || down <= answered_ms)
		return 0;
	/* A caller that waits longer than the failed command did (the
	 * worker's 5 s beside a request's 250 ms, through an AOF rewrite)
	 * may find the server slow, not gone: it goes on, on its own. */
	if (timeout_ms > __atomic_load_n(&h->tmo_ms, __ATOMIC_ACQUIRE))
		return 0;
	now = clock_mono_ms();
	if (ahead(__atomic_load_n(&h->due_ms, __ATOMIC_ACQUIRE), now))
		return 1;
	/* The backoff is over: one process tries, the others wait for it. */
	claim = __atomic_load_n(&h->claim_ms, __ATOMIC_ACQUIRE);
	if (ahead(claim, now))
		return 1;
	if (try_until == NULL)		/* a question: a try may be made */
		return 0;
	end = (int64_t)(now + timeout_ms + RHEALTH_SLACK_MS);
	if (!__atomic_compare_exchange_n(&h->claim_ms, &claim, end, 0,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 1;
	*try_until = end;
	return 0;
}

void
rhealth_failed(struct rhealth *h, int timeout_ms)
{
	long long now;
	int32_t b;

	if (h == NULL)
		return;
	now = clock_mono_ms();
	/* the longest wait that failed since the mark (a new mark: this) */
	if (__atomic_load_n(&h->down_ms, __ATOMIC_ACQUIRE) == 0 ||
	    timeout_ms > __atomic_load_n(&h->tmo_ms, __ATOMIC_ACQUIRE))
		__atomic_store_n(&h->tmo_ms, timeout_ms, __ATOMIC_RELEASE);
	/* A failure while the backoff runs is one of the commands that were
	 * in flight when the server stopped: the mark stands as it is.  The
	 * first failure, or a try's after the backoff, takes it a step. */
	if (!ahead(__atomic_load_n(&h->due_ms, __ATOMIC_ACQUIRE), now) ||
	    __atomic_load_n(&h->down_ms, __ATOMIC_ACQUIRE) == 0) {
		b = __atomic_load_n(&h->backoff_ms, __ATOMIC_ACQUIRE);
		b = b == 0 ? RHEALTH_FIRST_MS : b >= RHEALTH_MAX_MS / 2 ?
		    RHEALTH_MAX_MS : b * 2;
		__atomic_store_n(&h->backoff_ms, b, __ATOMIC_RELEASE);
		__atomic_store_n(&h->due_ms, (int64_t)(now + b),
		    __ATOMIC_RELEASE);
	}
	__atomic_store_n(&h->claim_ms, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&h->down_ms, (int64_t)now, __ATOMIC_RELEASE);
}

void
rhealth_answered(struct rhealth *h)
{
	if (h == NULL || __atomic_load_n(&h->down_ms, __ATOMIC_ACQUIRE) == 0)
		return;
	__atomic_store_n(&h->up_ms, (int64_t)clock_mono_ms(),
	    __ATOMIC_RELEASE);
	__atomic_store_n(&h->backoff_ms, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&h->due_ms, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&h->claim_ms, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&h->down_ms, 0, __ATOMIC_RELEASE);
}

int
rhealth_marked(const struct rhealth *h)
{
	return h != NULL && __atomic_load_n(&h->down_ms, __ATOMIC_ACQUIRE) != 0;
}

long long
rhealth_up_ms(const struct rhealth *h)
{
	return h == NULL ? 0 : __atomic_load_n(&h->up_ms, __ATOMIC_ACQUIRE);
}

void
rhealth_refused(struct rhealth *h)
{
	if (h != NULL)
		__atomic_store_n(&h->refused_ms, (int64_t)clock_mono_ms(),
		    __ATOMIC_RELEASE);
}

int
rhealth_refusing(const struct rhealth *h)
{
	long long at, now;

	if (h == NULL ||
	    (at = __atomic_load_n(&h->refused_ms, __ATOMIC_ACQUIRE)) == 0)
		return 0;
	now = clock_mono_ms();
	/* a time ahead of now is from another boot: passed */
	return at <= now && now - at < RHEALTH_REFUSED_MS;
}
