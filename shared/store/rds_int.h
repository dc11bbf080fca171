/* rds_int.h -- the Redis of a process from inside: what store/ alone
 * opens, closes and looks into (app.c, rds.c, rtrack.c; tests).  Above
 * store/ a struct rds is opaque (rds.h) and no hiredis name is seen.
 */
#ifndef TALLY_RDS_INT_H
#define TALLY_RDS_INT_H

#include "store/rcl.h"
#include "store/rconn.h"

struct rds_keys;

struct rds {
	struct rconn	 one;	/* the server, when not a cluster */
	struct rcl	*cl;	/* a Redis Cluster (rcl.h), or NULL */
	struct rds_keys	*rec;	/* rds_record(), or NULL */
	struct rds_stash *stash; /* rds_stash_use(), or NULL */
	unsigned long long nstashes;	/* rds_stash_use()s of one */
};

void	rds_init(struct rds *, const char *path, int timeout_ms);
/* The same on a Redis Cluster: seeds "host:port,..." (-1 when none
 * parses); sockdir: see rcl_open().  Every call of rds.h is then routed
 * by key slot. */
int	rds_init_cluster(struct rds *, const char *seeds, int timeout_ms,
	    const char *auth, const char *sockdir);
/* AUTH with this password at every connect (NULL: none). */
void	rds_set_auth(struct rds *, const char *auth);
void	rds_close(struct rds *);

#endif
