/* rcl.h -- Redis Cluster routing: the part of rds.h that makes a
 * cluster of nodes look like one Redis.
 *
 * Debian's hiredis 0.14 has no cluster support, so this is the project's
 * own, kept to what tally needs:
 *   - the slot map from CLUSTER SLOTS (slot = CRC16 of the key's hash tag,
 *     mod 16384), one connection per node (rconn.h);
 *   - every command routed by the slot of its first key (EVAL/EVALSHA: the
 *     first of KEYS; a command without keys goes to any master);
 *   - a pipeline that spans nodes is split: each node gets its commands in
 *     order, every node's are sent before the first reply is read, and the
 *     replies are handed back in the order the commands were queued;
 *   - MOVED updates the map (and a full refresh follows) and retries; ASK
 *     retries once on the named node after ASKING; TRYAGAIN, CLUSTERDOWN
 *     and LOADING are retried with a growing pause inside half the
 *     command timeout, a pipeline's entries all within that one wait,
 *     which spends the caller's budget once (rcl_budget()), the map read
 *     again at its rate; NOSCRIPT in a pipeline loads the script on that node
 *     and retries.  Past that, the caller sees what rds.h promises: NULL
 *     for a transport failure (the degraded path), or the error reply.
 *     A pipeline's retries run once all its replies are in: a command
 *     retried runs after the commands queued behind it, so no command of
 *     a pipeline may rely on what an earlier one did (a script that
 *     changes a key answers with what the caller must read of it).
 * A node that fails marks the map stale: the next command (at most once
 * per RCL_REFRESH_MS) asks any reachable node for CLUSTER SLOTS, which is
 * how a promoted replica is found after a master dies.
 *
 * Each node has the host's backoff of one server (rhealth.h).  While
 * every master of the map is marked down on the host (the cluster hangs
 * whole: not a failover, where the others answer), the cluster has one
 * more backoff of its own, in the same table: the nodes' six backoffs,
 * each ending at its own time, let a host pay a timeout six times as
 * often as one Redis would (half the pages served during an outage
 * waited 250 ms).  Then one process a backoff tries, as for one server;
 * a node that answers ends it for every process.  The masters are kept
 * as a bit mask beside the map (masters), so that the question costs a
 * look at each master's slot, not a walk of 16,384 slots.
 */
#ifndef TALLY_RCL_H
#define TALLY_RCL_H

#include <stddef.h>

#include "store/rconn.h"

#define RCL_NODES	32
#define RCL_SLOTS	16384
#define RCL_REFRESH_MS	100
#define RCL_NONE	0xff	/* map: no node known for the slot */
_Static_assert(RCL_NODES <= 32, "rcl.masters: a bit a node");

struct rcl_entry;

struct rcl {
	struct rconn	 nodes[RCL_NODES];	/* masters and replicas seen */
	int		 nnodes;
	int		 nseeds;		/* the first, kept for ever */
	unsigned int	 naming;		/* bit i: the map being read
						   names nodes[i] */
	unsigned char	 map[RCL_SLOTS];	/* node index, or RCL_NONE */
	int		 stale;			/* refresh before next use */
	long long	 refreshed_ms;		/* monotonic; last attempt */
	long long	 down_until;		/* no node answered: wait */
	int		 down_ms;		/* that backoff */
	unsigned int	 masters;		/* bit i: nodes[i] serves a slot */
	struct rhealth	*health;		/* the whole cluster's, host-wide */
	long long	 try_until_ms;		/* its try, claimed: ends then */
	int		 waits_left;		/* rcl_budget(); -1: no limit */
	long long	 pause_until;		/* a pipeline's (or command's)
						   waits for a cluster that
						   asks for one end then; 0:
						   none began */
	int		 timeout_ms;
	const char	*auth;
	const char	*sockdir;	/* local nodes' unix sockets, or NULL */
	struct rcl_entry *q;			/* the pipeline, in order */
	size_t		 nq, capq, head;
	int		 failed;	/* a reply of the pipeline failed:
					   what is left queued is its
					   caller's, who stopped reading */
	unsigned long long ncmds, ntrips;
};

/* seeds: "host:port,host:port,...".  NULL when none parses.  sockdir
 * (or NULL): where nodes on 127.0.0.1 also listen on a unix socket,
 * <sockdir>/<port>/redis.sock (tally-run's cluster): those are reached
 * there, which costs less than loopback TCP. */
struct rcl	*rcl_open(const char *seeds, int timeout_ms, const char *auth,
		    const char *sockdir);
void		 rcl_close(struct rcl *);

/* The slot of a key: CRC16 (XMODEM) of its hash tag (the text between
 * the first '{' and the next '}', when not empty), else of the key. */
int		 rcl_keyslot(const char *key, size_t len);

/* The slot of a command: of its first key (EVAL/EVALSHA: of KEYS[1]),
 * or -1 when it has none (PING, SCRIPT, SCAN, INFO, CLUSTER...). */
int		 rcl_cmd_slotof(int argc, const char **argv, const size_t *lens);

/* The node at host:port, added to the table when new; -1 when full or
 * addr is not a host:port (rcl_addr_valid()).  A full table takes the
 * place of a node it no longer needs: not a seed, no master of the map
 * nor named by the map being read, nothing queued anywhere (a cluster
 * whose nodes come back under new addresses, one after another, would
 * otherwise fill it, and slots served by a new node stay unreachable
 * until the process restarts). */
int		 rcl_node_at(struct rcl *, const char *addr);
/* 1 when addr is "host:port": a host of letters, digits, '.' and '-'
 * (at most 253), a port of digits from 1 to 65535; else 0.  What a
 * cluster tells us goes through it: no path, no option, no stranger's
 * syntax becomes a connection. */
int		 rcl_addr_valid(const char *addr);
/* A CLUSTER SLOTS reply into map (RCL_SLOTS entries, RCL_NONE where no
 * node), the nodes it names added to the table: ranges of two integers
 * within 0..RCL_SLOTS-1, start <= end, each with a valid host:port;
 * anything else is skipped.  0, or -1 when the reply is no map at all. */
int		 rcl_map_parse(struct rcl *, const struct redisReply *rep,
		    unsigned char *map);
/* The node at addr when the cluster's map has it serve a slot; -1
 * otherwise: a MOVED or ASK elsewhere is not followed. */
int		 rcl_node_known(const struct rcl *, const char *addr);
/* A MOVED or ASK error: its slot (0..RCL_SLOTS-1) and host:port (valid)
 * into *slot and addr; 'M', 'A', or 0 when err is neither or bent. */
int		 rcl_redirect_parse(const char *err, int *slot, char *addr,
		    size_t sz);

/* From now on a node may make the caller wait (hang until the timeout)
 * at most waits times; past that every command fails at once, as a
 * down Redis does, until the next call.  -1 (from rcl_open()): no
 * limit.  A request allows one: with every node hung, a page whose keys
 * are on three masters would otherwise wait three timeouts, and one
 * more for the slot map. */
void		 rcl_budget(struct rcl *, int waits);

/* 1 when the map is known and its nodes could be reached. */
int		 rcl_up(struct rcl *);

/* One command, routed by its key (slot -1: any master).  NULL: the
 * transport failed. */
struct redisReply	*rcl_cmd(struct rcl *, int argc, const char **argv,
		    const size_t *lens);
struct redisReply	*rcl_cmd_slot(struct rcl *, int slot, int argc,
		    const char **argv, const size_t *lens);

/* Pipelining: queue (script: the source when argv is an EVALSHA, for a
 * NOSCRIPT retry), then read every reply in order. */
int		 rcl_append(struct rcl *, int argc, const char **argv,
		    const size_t *lens, const char *script);
int		 rcl_get_reply(struct rcl *, struct redisReply **out);
/* Replies queued and not read yet. */
int		 rcl_pending(const struct rcl *);
/* Reads and drops what is queued: 0, or -1 when a node failed. */
int		 rcl_settle(struct rcl *);
/* After a reply of the pipeline failed, what is left queued: dropped,
 * as one server's connection drops it when a read fails, where nothing
 * may be queued (a command, a script: rds.c).  A caller that stops at a
 * failure reads the rest of its own replies (rds_collect()), or the next
 * pipeline would read them as its own (another post's counts on a page,
 * a take's arrays read as a recovery's). */
void		 rcl_drop_failed(struct rcl *);

/* The masters (node indexes) serving slots, for commands that must run
 * on every master (SCAN).  Returns how many. */
int		 rcl_masters(struct rcl *, int *idx, int max);
/* 1 when the map as last known has keys a and b on one node. */
int		 rcl_same_node(const struct rcl *, const char *a, const char *b);
/* One command on node idx, no redirection. */
struct redisReply	*rcl_node_cmd(struct rcl *, int idx, int argc,
		    const char **argv, const size_t *lens);

/* Who serves what: "first-last:id@run_id;..." for every slot range, from
 * CLUSTER SLOTS and each master's INFO.  It changes when a replica is
 * promoted or a master restarts (and may have lost its last writes).
 * *hash: the whole signature's (FNV-1a, 63 bits); out: as many of its
 * ranges as fit, then "..." (a cluster resharded into many ranges
 * outgrew any fixed text, and its failovers went unnoticed).  0, or -1
 * when the cluster could not be asked. */
int		 rcl_signature(struct rcl *, char *out, size_t sz,
		    unsigned long long *hash);

#endif
