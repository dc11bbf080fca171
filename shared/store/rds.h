/* rds.h -- the Redis of one process: one server (rconn.h), or a Redis
 * Cluster routed by key slot (rcl.h), behind the same calls.
 *
 * hiredis has two error channels and so does this module: rds_cmd()
 * returns NULL when the transport failed (the context is then dropped,
 * and reconnection waits out a backoff so a dead Redis costs a request
 * nothing but a clock read), and a reply of type RDS_ERROR when Redis
 * refused the command.  The caller frees replies with rds_free().  Above
 * store/ a reply is an opaque rds_reply read through rds_type(),
 * rds_int(), rds_str(), rds_len(), rds_n() and rds_at(), and the RDS_*
 * types: no hiredis call, name or header leaves store/ (make lint checks
 * it).  Connect and command
 * timeouts are short (200 ms / 250 ms by default): callers fall back to SQLite rather than wait, and
 * after a failure the host's processes leave Redis alone for a growing
 * backoff (250 ms doubling to 4 s; rhealth.h).
 */
#ifndef TALLY_RDS_H
#define TALLY_RDS_H

#include <stddef.h>

#include "base/cfg.h"

/* hiredis's reply, never looked into above store/. */
typedef struct redisReply rds_reply;

/* A reply's types: hiredis's REDIS_REPLY_* (rds.c checks). */
#define RDS_STRING	1
#define RDS_ARRAY	2
#define RDS_INTEGER	3
#define RDS_NIL		4
#define RDS_STATUS	5
#define RDS_ERROR	6

/* A reply's parts: its type; an integer's value; a string's, a status's
 * or an error's bytes (NUL-terminated) and length; an array's length and
 * its i-th element (i < rds_n()). */
int		 rds_type(const rds_reply *);
long long	 rds_int(const rds_reply *);
const char	*rds_str(const rds_reply *);
size_t		 rds_len(const rds_reply *);
size_t		 rds_n(const rds_reply *);
rds_reply	*rds_at(const rds_reply *, size_t i);

/* The keys a stretch of work named (rds_record()), as rds_key_hash()es:
 * what a cached page depends on (rtrack.h). */
#define RDS_KEYS_MAX	96
struct rds_keys {
	unsigned long long	 h[RDS_KEYS_MAX];
	int			 n;
	int			 over;	/* more than RDS_KEYS_MAX */
};

struct rds;

/* Commands sent and round trips waited for, since the start (/metrics,
 * the per-request cost). */
unsigned long long rds_ncmds(const struct rds *);
unsigned long long rds_ntrips(const struct rds *);
/* Who serves the data (a cluster's: rcl_signature(); one server's: its
 * run id, new at every start), so a change (a failover, a restart that
 * may have lost the last writes it acknowledged) can be noticed.  0, or
 * -1 when it could not be asked. */
int		 rds_signature(struct rds *, char *out, size_t sz,
		    unsigned long long *hash);
/* 1 on a Redis Cluster. */
int		 rds_is_cluster(const struct rds *);
/* 1 when one server on this machine serves it (a unix socket): its
 * machine's boot is the caller's. */
int		 rds_is_local(const struct rds *);
/* The single server's connection: a number that changes with every new
 * connection (what was read before one may have changed unseen), and 0
 * on a cluster. */
unsigned	 rds_gen(const struct rds *);
/* 1 while a server of it refuses writes (rconn_refusing(): out of
 * memory, a replica, a failed save): its live counters may be behind
 * what SQLite holds (count/cstore.h). */
int		 rds_refusing(const struct rds *);
/* Its servers that refuse writes are taken as refusing RHEALTH_REFUSED_MS
 * more (the worker, while deltas they refused wait in the backlog). */
void		 rds_refusing_renew(struct rds *);
/* From now on Redis may make the caller wait out a timeout at most waits
 * times (-1, the default: no limit); past that every call fails at once
 * until the next rds_wait_budget().  Each request allows one.  One
 * server's backoff does this already (a failure leaves it alone); a
 * cluster's nodes each have their own (rcl_budget()). */
void		 rds_wait_budget(struct rds *, int waits);
/* 1 when keys a and b are served by one node: always on one server; on
 * a cluster, by the slot map as last known (a pipeline of both is then
 * one node's round trip). */
int		 rds_same_node(const struct rds *, const char *a, const char *b);
/* 1 when a connection is up or could be made now, 0 otherwise. */
int		 rds_up(struct rds *);
/* Runs one command given as argv; see the header comment. */
rds_reply	*rds_cmd(struct rds *, int argc, const char **argv,
		    const size_t *lens);
/* Convenience for NUL-terminated arguments, NULL-terminated list: at
 * most RDS_ARGS_MAX (more is an error, NULL and logged, never a cut). */
rds_reply	*rds_cmdv(struct rds *, const char *arg0, ...)
		    __attribute__((sentinel));
/* Calls fn(r, key, arg) on every key matching pattern, on every master
 * of a cluster (SCAN, so Redis never blocks; a key may come twice, as
 * SCAN promises no better).  Keys seen, or -1 when Redis failed or fn
 * returned -1. */
long long	 rds_scan(struct rds *, const char *pattern,
		    int (*fn)(struct rds *, const char *key, void *arg),
		    void *arg);
/* Deletes every key matching pattern (SCAN, so Redis never blocks).
 * Returns how many, or -1 when Redis failed. */
long long	 rds_del_matching(struct rds *, const char *pattern);
/* Drops the context after a transport error. */
void		 rds_drop(struct rds *);
/* From now on, until rds_record(r, NULL), every key a command names
 * (its first argument; a script's KEYS) is added to k, emptied first. */
void		 rds_record(struct rds *, struct rds_keys *k);
/* Adds a key, by its rds_key_hash() h, to what is recorded (nothing when
 * nothing is): a key the work depends on though it sent no command for
 * it, its value taken from what the process kept of an earlier read
 * (count/ckeep.h: ckeep_hash() is that hash). */
void		 rds_note(struct rds *, unsigned long long h);
/* A key's 64-bit FNV-1a hash, as rds_record() keeps it; _more() goes on
 * from the hash h of what came before key (rds_key_hash(ab) is
 * rds_key_hash_more(rds_key_hash(a), b)). */
unsigned long long rds_key_hash(const char *key, size_t len);
unsigned long long rds_key_hash_more(unsigned long long h, const char *key,
	    size_t len);
/* Frees a reply (NULL: nothing). */
void		 rds_free(rds_reply *);


/* Lua scripts, run by EVALSHA with a fallback to EVAL on NOSCRIPT (Redis
 * restarted, SCRIPT FLUSH).  A script's SHA1 is learned from SCRIPT LOAD
 * on first use and kept for the life of the process.  On one server,
 * rds_eval()'s first use of a script on a connection sends the load and
 * an EVAL of the source together: one round trip, as every later call. */
struct rds_script {
	const char	*src;
	char		 sha[41];
	const struct rconn *loaded_on;	/* connection (and gen) it is cached */
	unsigned	 gen;
};

/* Runs script with keys then args (all NUL-terminated).  Returns the
 * reply as rds_cmd() does. */
rds_reply	*rds_eval(struct rds *, struct rds_script *, int nkeys,
		    const char **keys, int nargs, const char **args);

/* Pipelining: rds_append_eval() queues a call without waiting (0, or -1
 * when Redis is down) -- by SHA1 once the script is cached on this
 * connection (loaded when nothing is queued), by source before that.
 * rds_script_ready() loads it now (nothing may be queued): a pipeline
 * that starts with a plain command and then calls a script would
 * otherwise send its source with every call, every time.  0, or -1.
 * rds_collect() reads n queued replies and frees them; it returns the
 * number of error replies, or -1 when the transport failed (context
 * dropped).  Every queued reply must be read. */
int		 rds_script_ready(struct rds *, struct rds_script *, int nkeys,
		    const char **keys);
int		 rds_append_eval(struct rds *, struct rds_script *, int nkeys,
		    const char **keys, int nargs, const char **args);
int		 rds_collect(struct rds *, int n);
/* Reads the next queued reply into *out (the caller frees it): 0, or -1
 * when the transport failed (context dropped). */
int		 rds_get_reply(struct rds *, rds_reply **out);

/* Replies read ahead for one piece of work: a reader's group sends the
 * first round trip of each of its pages at once, reads every reply in
 * one wait, and keeps each page's (web/batch.h).  rds_queued(): replies
 * queued and not read yet (one server; 0 on a cluster, where nothing is
 * read ahead).  rds_stash_fill() reads the next n into st: each reply,
 * or -1 where the transport failed.  While st is in use
 * (rds_stash_use(); NULL: none), rds_get_reply() hands out its replies
 * first, in order, then reads the connection again.  rds_stash_free()
 * frees what was not handed out. */
#define RDS_STASH_MAX	16
struct rds_stash {
	rds_reply	*rep[RDS_STASH_MAX];
	int		 n, next;
};
int		 rds_queued(const struct rds *);
/* Sends what is queued now, without waiting for a reply (one server):
 * another wait can run while Redis answers.  0, or -1 (the connection
 * dropped: its replies read as failed). */
int		 rds_send_queued(struct rds *);
/* Stashes put in use so far (/metrics: pages whose first round trip
 * went ahead). */
unsigned long long rds_nstashes(const struct rds *);
void		 rds_stash_fill(struct rds *, struct rds_stash *st, int n);
void		 rds_stash_use(struct rds *, struct rds_stash *st);
void		 rds_stash_free(struct rds_stash *st);

/* Queues one plain command (pipelining); 0, or -1 when Redis is down.
 * Read its reply with rds_collect(). */
int		 rds_append(struct rds *, int argc, const char **argv,
		    const size_t *lens);
/* The same for NUL-terminated arguments (at most 128; -1 beyond). */
int		 rds_append_strs(struct rds *, int argc, const char **argv);

/* Reads and drops the replies still queued (a pipeline its caller left
 * on an error path), logging how many, so that the next command reads
 * its own reply: 0, or -1 when the transport failed (context dropped).
 * rds_cmd() calls it first; the serving loop and the worker call it at
 * the end of every request or round. */
int		 rds_settle(struct rds *);

#endif
