/* ckeep.c -- counters' live values kept per process; see ckeep.h.
 *
 * The file-level state is the process's, between requests: the table,
 * its generation and epoch, two counters. */
#include <sys/mman.h>

#include <stdint.h>
#include <string.h>

#include "base/buf.h"
#include "count/ckeep.h"
#include "store/rds.h"

/* Slots a hash's fields may take.  Windows overlap; with 8, two posts
 * (four counters each) filled one, and at the benchmark's 10,000 users
 * (the table under half full) 8 % of the counters were evicted by their
 * neighbours: 0.7 counter reads a feed, each a round trip.  With 16, 2 %
 * in the unit test, and 0.06 reads a feed (docs/BENCHMARKS.md); a lookup
 * reads two cache lines of tags where it read one. */
#define CKEEP_WINDOW	16

struct ck_entry {
	unsigned long long hk;		/* rds_key_hash() of the hash */
	unsigned long long gen;		/* valid when the table's */
	unsigned long long used_at;	/* lookups so far, when last used */
	long long	 v;
	char		 name[CKEEP_NAME];
};

/* per process: kept between requests.  A lookup reads the window's tags
 * (the hash of each slot's whole name, 0 free: eight in one cache line)
 * and touches an entry only when its tag matches: on a feed of 30 posts
 * over 30,000 a window of whole entries was 16 cache misses a counter. */
static struct ck_entry	*table;		/* CKEEP_SLOTS, allocated on first use */
static unsigned long long *tags;	/* CKEEP_SLOTS, beside it */
static unsigned long long gen = 1;	/* forgetting all is a new generation */
static unsigned long long epoch;	/* drops so far */
static unsigned long long nhits, nmisses;

#define HUGE_PAGE	((size_t)2 << 20)

/* bytes of zeroes on 2 MB pages where the kernel gives them (THP in its
 * "madvise" mode, Debian's default): a lookup lands anywhere in 27 MB,
 * and on 4 KB pages nearly every one missed the TLB as well as the
 * caches.  Falls back to xcalloc(). */
static void *
zeroed_huge(size_t bytes)
{
	size_t len = bytes + HUGE_PAGE;
	unsigned char *p;
	uintptr_t at;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return xcalloc(1, bytes);
	at = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	(void)madvise((void *)at, bytes, MADV_HUGEPAGE);
	return (void *)at;
}

/* "<hash>\n<field>" into out; 0, or -1 when too long to keep. */
static int
name_of(const char *hash, const char *field, char *out)
{
	size_t hn = strlen(hash), fn = strlen(field);

	if (hn + fn + 2 > CKEEP_NAME)
		return -1;
	memcpy(out, hash, hn);
	out[hn] = '\n';
	memcpy(out + hn + 1, field, fn + 1);
	return 0;
}

/* The first slot of a hash's window (its fields' slots). */
static size_t
window_of(unsigned long long hk)
{
	return (size_t)((hk >> 17) % (CKEEP_SLOTS - CKEEP_WINDOW + 1));
}

/* The tag of the whole name "<hash>\n<field>", from the hash's part
 * (rds_key_hash() reads a name in order: the hash's bytes are hashed
 * once for all its fields): never 0 (a free slot's). */
static unsigned long long
tag_of(unsigned long long hk, const char *field)
{
	unsigned long long t = rds_key_hash_more(rds_key_hash_more(hk, "\n",
	    1), field, strlen(field));

	return t != 0 ? t : 1;
}

unsigned long long
ckeep_hash(const char *hash)
{
	return rds_key_hash(hash, strlen(hash));
}

void
ckeep_prefetch(unsigned long long hk)
{
	size_t w;

	if (table == NULL)
		return;
	w = window_of(hk);
	__builtin_prefetch(&tags[w]);
	__builtin_prefetch(&tags[w + CKEEP_WINDOW - 1]);
}

void
ckeep_prefetch_field(unsigned long long hk, const char *field)
{
	unsigned long long t;
	size_t w;
	int i;

	if (table == NULL)
		return;
	w = window_of(hk);
	t = tag_of(hk, field);
	for (i = 0; i < CKEEP_WINDOW; i++)
		if (tags[w + i] == t) {
			__builtin_prefetch(&table[w + i].gen);
			__builtin_prefetch(&table[w + i].name[CKEEP_NAME / 2]);
			return;
		}
}

int
ckeep_get(const char *hash, const char *field, long long *v)
{
	return ckeep_get_hk(hash, ckeep_hash(hash), field, v);
}

int
ckeep_get_hk(const char *hash, unsigned long long hk, const char *field,
    long long *v)
{
	char name[CKEEP_NAME];
	unsigned long long t;
	size_t w;
	int i;

	if (table == NULL || name_of(hash, field, name) == -1) {
		nmisses++;
		return 0;
	}
	w = window_of(hk);
	t = tag_of(hk, field);
	for (i = 0; i < CKEEP_WINDOW; i++)
		if (tags[w + i] == t && table[w + i].gen == gen &&
		    strcmp(table[w + i].name, name) == 0) {
			table[w + i].used_at = nhits + nmisses;
			*v = table[w + i].v;
			nhits++;
			return 1;
		}
	nmisses++;
	return 0;
}

void
ckeep_put(const char *hash, const char *field, long long v,
    unsigned long long at_epoch)
{
	char name[CKEEP_NAME];
	unsigned long long hk, t;
	struct ck_entry *e = NULL;
	size_t w, k = 0;
	int i;

	if (at_epoch != epoch || name_of(hash, field, name) == -1)
		return;
	if (table == NULL) {
		table = zeroed_huge(CKEEP_SLOTS * sizeof(*table));
		tags = zeroed_huge(CKEEP_SLOTS * sizeof(*tags));
	}
	hk = ckeep_hash(hash);
	w = window_of(hk);
	t = tag_of(hk, field);
	/* the same name, else a free slot, else the least recently used */
	for (i = 0; e == NULL && i < CKEEP_WINDOW; i++)
		if (tags[w + i] == t && table[w + i].gen == gen &&
		    strcmp(table[w + i].name, name) == 0)
			e = &table[k = w + (size_t)i];
	for (i = 0; e == NULL && i < CKEEP_WINDOW; i++)
		if (tags[w + i] == 0 || table[w + i].gen != gen)
			e = &table[k = w + (size_t)i];
	if (e == NULL)
		for (e = &table[k = w], i = 1; i < CKEEP_WINDOW; i++)
			if (table[w + i].used_at < e->used_at)
				e = &table[k = w + (size_t)i];
	e->hk = hk;
	e->gen = gen;
	e->used_at = nhits + nmisses;
	e->v = v;
	memcpy(e->name, name, strlen(name) + 1);
	tags[k] = t;
}

void
ckeep_drop(const char *key, size_t len)
{
	unsigned long long hk;
	size_t w;
	int i;

	epoch++;
	if (table == NULL)
		return;
	if (key == NULL) {
		gen++;
		return;
	}
	hk = rds_key_hash(key, len);
	w = window_of(hk);
	for (i = 0; i < CKEEP_WINDOW; i++)
		if (tags[w + i] != 0 && table[w + i].gen == gen &&
		    table[w + i].hk == hk &&
		    strncmp(table[w + i].name, key, len) == 0 &&
		    table[w + i].name[len] == '\n')
			tags[w + i] = 0;
}

unsigned long long
ckeep_epoch(void)
{
	return epoch;
}

unsigned long long
ckeep_hits(void)
{
	return nhits;
}

unsigned long long
ckeep_misses(void)
{
	return nmisses;
}
