/* rconn.h -- one connection to one Redis server (a unix socket, or
 * host:port for a cluster node), the part of rds.h below the routing.
 *
 * hiredis has two error channels and so does this module: rconn_cmd()
 * returns NULL when the transport failed (the context is then dropped,
 * and reconnection waits out a backoff so a dead Redis costs a request
 * nothing but a clock read), and a reply of type REDIS_REPLY_ERROR when
 * Redis refused the command.  Connect and command timeouts are short
 * (200 ms / the caller's timeout): callers fall back to SQLite rather
 * than wait, and after a failure a process leaves the server alone for a
 * growing backoff (250 ms doubling to 4 s), which a host's processes
 * share (rhealth.h).
 */
#ifndef TALLY_RCONN_H
#define TALLY_RCONN_H

#include <stddef.h>

#include "base/cfg.h"

struct rconn {
	struct redisContext	*c;
	int		 pending;	/* queued replies not read yet */
	unsigned	 gen;		/* bumped per connection: scripts reload */
	char		 addr[CFG_SOCK_MAX + 1];
	char		 local[CFG_SOCK_MAX + 1];	/* dial this unix socket
						 * for addr; "": addr */
	const char	*auth;		/* AUTH at connect; NULL: none */
	int		 timeout_ms;
	long long	 retry_at_ms;	/* monotonic; no connect before */
	long long	 answered_ms;	/* monotonic; the last reply */
	long long	 connected_ms;	/* monotonic; this connection's start */
	int		 peer_closed;	/* the failure was the server closing */
	long long	 failed_ms;	/* monotonic; this process's last failure */
	long long	 refused_ms;	/* monotonic; a write it last refused */
	struct rhealth	*health;	/* the host's view of the server, or NULL */
	long long	 try_until_ms;	/* monotonic; this process's claimed try */
	int		 backoff_ms;
	/* For /metrics: commands sent, and round trips (a command waited
	 * for, or the first reply read after a batch of appends). */
	unsigned long long ncmds, ntrips;
	int		 unsent;	/* appends since the last read */
};

/* addr: a unix socket path ("/..."), or host:port. */
void		 rconn_init(struct rconn *, const char *addr, int timeout_ms);
void		 rconn_close(struct rconn *);
/* Connects if needed: 0, or -1 (down, or in its backoff). */
int		 rconn_connect(struct rconn *);
/* A second connection to the same server, its timeouts and AUTH set
 * (a subscriber: rtrack.h), or NULL.  The caller redisFree()s it. */
struct redisContext	*rconn_dial_another(const struct rconn *);
/* 1 when a connection is up or could be made now, 0 otherwise. */
int		 rconn_up(struct rconn *);
/* Closes the connection, its queued replies unread, without a backoff
 * (a pipeline given up for another server's sake): the next call
 * connects again at once. */
void		 rconn_abandon(struct rconn *);
/* Drops the context after a transport error (starts the backoff). */
void		 rconn_drop(struct rconn *);
/* One command, waited for (settles queued replies first). */
struct redisReply	*rconn_cmd(struct rconn *, int argc, const char **argv,
		    const size_t *lens);
/* Queues one command: 0, or -1 when the server is down. */
int		 rconn_append(struct rconn *, int argc, const char **argv,
		    const size_t *lens);
/* The same for a command already in the protocol's form. */
int		 rconn_append_raw(struct rconn *, const char *cmd, size_t len);
/* Sends what is queued without reading: 0, or -1 (dropped). */
int		 rconn_flush(struct rconn *);
/* The next queued reply: 0, or -1 when the transport failed. */
int		 rconn_get_reply(struct rconn *, struct redisReply **out);
/* Reads and frees n queued replies: error replies, or -1. */
int		 rconn_collect(struct rconn *, int n);
/* Reads and drops replies a caller left queued: 0, or -1. */
int		 rconn_settle(struct rconn *);
/* 1 while the server refuses writes (rhealth.h: a write refused within
 * RHEALTH_REFUSED_MS, here or by another process of the host). */
int		 rconn_refusing(const struct rconn *);
/* Takes the server as refusing writes from now (a refusal read, or its
 * renewal: rds_refusing_renew()). */
void		 rconn_refused(struct rconn *);

#endif
