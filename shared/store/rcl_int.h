/* rcl_int.h -- what rcluster.c and rcl_map.c share (nothing outside
 * them). */
#ifndef TALLY_RCL_INT_H
#define TALLY_RCL_INT_H

struct rcl;

/* The node serving slot (-1: any master), refreshing the map when it is
 * stale or has no node for it; -1 when none is known or the cluster is
 * in its backoff. */
int	rcl_node_for(struct rcl *, int slot);
/* After a node failed since t0 (monotonic ms): 1 when it made us wait,
 * and the whole cluster then starts its backoff; 0 when it failed at
 * once. */
int	rcl_waited(struct rcl *, long long t0);

#endif
