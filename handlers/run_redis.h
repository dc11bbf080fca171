/* run_redis.h -- the Redis servers tally-run supervises. */
#ifndef TALLY_RUN_REDIS_H
#define TALLY_RUN_REDIS_H

#include <stddef.h>

#include "base/cfg.h"
#include "base/supervise.h"

/* Most Redis services one run starts. */
#define RUN_REDIS_MAX	8	/* >= CLUSTER_NODES */

/* Fills svcs[*k...] with the Redis servers (stopped last: stop group 2)
 * and advances *k; sets the variables the programs read to reach them
 * (TALLY_REDIS_REPLICA, TALLY_REDIS_AUTH).  Started by the caller.
 * 0, or -1 after logging why. */
int	run_redis_plan(struct svc *svcs, size_t *k, const struct cfg *c,
	    const char *redis_server);

/* The password the servers ask for (REPLICA=1, REDIS_CLUSTER=1), or
 * NULL. */
const char *run_redis_password(void);

/* 1 when the plan is a Redis Cluster (then cluster_ready() after the
 * servers start, cluster_tick() while they run). */
int	run_redis_is_cluster(void);

#endif
