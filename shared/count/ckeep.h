/* ckeep.h -- counters' live values a process keeps between requests while
 * Redis says they did not change.
 *
 * A post's counts are read by every follower of its author, on every
 * feed, and change far less often than they are read: on traffic spread
 * over 300 users, 30 HMGETs a feed were a third of Redis's time and a
 * seventh of the handler's (docs/BENCHMARKS.md).  A reader process keeps
 * what it read, per counter, and the Redis side of store/rtrack.h tells it
 * which keys changed since: the data connection is tracked, so the first
 * change of a key this process read (by anyone; an expiry, a flush) sends
 * the key's name to the process's invalidation connection, and a sync
 * reads every such name sent before the request arrived (web/keep.h does
 * the syncs, and says when a request has had one).
 *
 * The rules, each checked by cstore.c before it uses this table:
 *   - a value is stored only when it was read on the tracked data
 *     connection (not a replica's, not a connection replaced meanwhile)
 *     and no invalidation was processed between the read's send and its
 *     reply (ckeep_epoch(): a name dropped in between may be the one);
 *   - a value is used only by a request that had a sync after it arrived
 *     (its caller says so: CKEEP_READ), so a change made before the
 *     request, by anyone, was dropped before the lookup;
 *   - anything doubtful forgets everything (ckeep_drop(NULL): the
 *     tracking lost, the connection replaced).
 * A value missing from Redis (not loaded yet) is never kept: the load
 * (cstore.c) writes it, and the next reader reads it.
 *
 * The table is a process's: CKEEP_SLOTS entries (about 27 MB of address
 * space, resident as it fills, 2 MB at a time where the kernel gives
 * huge pages: a 10,000-user feed's lookups 45 -> 35 us), 16-way by the
 * hash's name,
 * the oldest of a full window replaced.  Its size is the traffic benchmark's 10,000 users
 * (30,000 posts, four counts each, and the authors'): with 65,536 entries
 * a spread feed read 92 counts kept and sent 13.9 Redis commands, with
 * 262,144 it reads 118 kept and sends 6.0, and Redis's CPU a feed fell
 * by a quarter (docs/BENCHMARKS.md).
 */
#ifndef TALLY_CKEEP_H
#define TALLY_CKEEP_H

#include <stddef.h>

#define CKEEP_SLOTS	(1 << 18)
/* Longest "<hash>\n<field>" kept, its NUL included: a post's counter
 * with ten-digit ids is 48. */
#define CKEEP_NAME	64

/* What a read may do with the table (cstore_send_kept()). */
enum {
	CKEEP_STORE = 1,	/* the data connection is tracked: keep what is read */
	CKEEP_READ = 2,		/* a sync came after the request: use what is kept */
};

/* The value of field in hash, when kept: 1 (and *v), or 0. */
int	ckeep_get(const char *hash, const char *field, long long *v);
/* The same in parts, for the counters of a page: a hash's part of every
 * lookup of its fields, once (ckeep_hash()), and the memory of its slots
 * asked for ahead (ckeep_prefetch()), for every hash of the page before
 * the first lookup: a lookup waited for its slots' tags (a cache miss
 * in 27 MB, about 125 ns) one after another.  ckeep_hash() is the hash
 * key's rds_key_hash() (store/rds.h). */
unsigned long long ckeep_hash(const char *hash);
void	ckeep_prefetch(unsigned long long hk);
void	ckeep_prefetch_field(unsigned long long hk, const char *field);
int	ckeep_get_hk(const char *hash, unsigned long long hk,
	    const char *field, long long *v);
/* Keeps a value read when ckeep_epoch() was epoch (refused when a drop
 * came since). */
void	ckeep_put(const char *hash, const char *field, long long v,
	    unsigned long long epoch);
/* Forgets every value of the key named (key NULL: all); bumps the epoch. */
void	ckeep_drop(const char *key, size_t len);
unsigned long long ckeep_epoch(void);
/* Lookups answered and not, so far (/metrics). */
unsigned long long ckeep_hits(void);
unsigned long long ckeep_misses(void);

#endif
