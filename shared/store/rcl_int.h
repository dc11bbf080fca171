/* rcl_int.h -- what the cluster's own files share: rcl_map.c defines
 * these, rcl.c calls them; nothing outside them. */
#ifndef TALLY_RCL_INT_H
#define TALLY_RCL_INT_H

struct rcl;

/* A node that failed after this long made its caller wait (hung, or
 * past its timeout); sooner, it refused at once (restarted, dead). */
#define RCL_WAITED_MS	50

/* The node serving slot (-1: any master), refreshing the map when it is
 * stale or has no node for it; -1 when none is known, the cluster is in
 * its backoff, or the caller's budget is spent. */
int	rcl_node_for(struct rcl *, int slot);
/* After a node failed since t0 (monotonic ms): 1 when it made us wait
 * (which spends the caller's budget, rcl_budget()), 0 when it failed at
 * once. */
int	rcl_waited(struct rcl *, long long t0);

/* 1 when the caller was made to wait as often as its budget allows:
 * every command then fails at once. */
int	rcl_spent(const struct rcl *);

#endif
