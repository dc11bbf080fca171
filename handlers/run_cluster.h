/* run_cluster.h -- the local Redis Cluster of "make run REDIS_CLUSTER=1":
 * six nodes on 127.0.0.1, three masters and three replicas. */
#ifndef TALLY_RUN_CLUSTER_H
#define TALLY_RUN_CLUSTER_H

#include <stddef.h>

#include "base/cfg.h"
#include "base/supervise.h"

#define CLUSTER_NODES	6

/* Fills svcs[*k...] with the six nodes (ports REDIS_CLUSTER_PORT, 7001 by
 * default, to +5), writes $RUN_DIR/redis-cluster/nodes and sets
 * TALLY_REDIS_CLUSTER for the programs.  auth_conf: a 0600 file with
 * requirepass/masterauth.  0, or -1 after logging why. */
int	cluster_plan(struct svc *svcs, size_t *k, const struct cfg *c,
	    const char *redis_server, const char *auth_conf);

/* Once the nodes run: creates the cluster when it does not exist yet
 * (redis-cli --cluster create) and waits until every node reports it
 * ok.  0, or -1 after logging why. */
int	cluster_ready(const char *password);

/* Called about once a second by the supervisor: a node that came back
 * empty (no cluster configuration: its directory was lost) is met again
 * and made a replica of the master with the fewest; the others forget
 * the identity it had. */
void	cluster_tick(void *password);

#endif
