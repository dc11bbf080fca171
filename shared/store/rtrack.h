/* rtrack.h -- what Redis changed since a process read it: the invalidation
 * messages of Redis's client-side caching (CLIENT TRACKING), so that a
 * process may keep what it read and still show only what Redis holds now.
 *
 * The process's data connection (rds.h) is tracked: Redis remembers every
 * key it reads, and the first change to such a key afterwards (by any
 * client, this one included; an expiry, an eviction, a FLUSHALL) sends
 * the key's name, once, to a second connection of the process subscribed
 * to __redis__:invalidate.  A sync sends a PING on that second
 * connection and reads up to its answer: Redis queued every
 * message for a change made before it read the PING ahead of the PING's
 * answer, so whatever a client was told happened before this request
 * arrived has been seen.  That is the guarantee a page cache needs (the
 * user who liked a post and then opens a page sees the like).
 *
 * Anything doubtful forgets everything (the drop callback with a NULL
 * key): the subscriber lost, the data connection replaced (Redis forgets
 * the tracking of a closed connection), a reply not understood.  One
 * Redis server only: on a Redis Cluster each master tracks its own keys
 * and a sync answers -1 (nothing may be kept).
 */
#ifndef TALLY_RTRACK_H
#define TALLY_RTRACK_H

#include <stddef.h>

#include "store/rds.h"

struct rtrack {
	struct redisContext *sub;		/* subscribed to the invalidations */
	unsigned	 gen;		/* the data connection's, when tracked */
	long long	 retry_at_ms;	/* monotonic; no connect before */
	int		 fails;		/* failures in a row */
	unsigned long long nsyncs;	/* round trips (a request's cost) */
};

/* Called for each key Redis says changed (key NULL: forget all). */
typedef void	(*rtrack_drop_fn)(void *arg, const char *key, size_t len);

/* A sync in two steps, so that other work overlaps its round trip.
 * rtrack_sync_send() makes sure the data connection of rd is tracked and
 * sends the PING; rtrack_sync_recv() reads every invalidation sent before
 * its answer, calling drop for each.  0: what was read on rd since the
 * tracking began and not dropped is what Redis holds; -1 (from either):
 * keep nothing (drop was called with NULL when something had been
 * kept). */
int	rtrack_sync_send(struct rtrack *, struct rds *rd, rtrack_drop_fn drop,
	    void *arg);
int	rtrack_sync_recv(struct rtrack *, rtrack_drop_fn drop, void *arg);
/* 1 when reads made on rd since the last successful sync are tracked
 * (the data connection was not replaced meanwhile). */
int	rtrack_still(const struct rtrack *, const struct rds *rd);

#endif
