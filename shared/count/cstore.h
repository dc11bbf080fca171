/* cstore.h -- live counter values in Redis, with their pending deltas.
 *
 * Counters live in CSTORE_BUCKETS buckets (an object's bucket: a
 * multiplicative hash of its id, cname_bucket(); a post's counters are
 * in its author's bucket, so that a like, which moves the post's and the
 * author's counters, is one script on one Redis Cluster node); every key
 * of bucket B carries the hash tag {c<B>}, so each script below touches
 * one slot:
 *   {c<B>}:u<ID>      user:  posts followers following likes unread
 *   {c<B>}:ut<ID>     user per topic:  posts:<TID> rating:<TID>
 *   {c<B>}:p<ID>      post:  likes comments reposts views
 *   {c<B>}:t<ID>      topic: posts
 *   {c<B>}:pending    the bucket's deltas not yet in SQLite, one field
 *                     per counter: "<object>:<field>" ("u7:likes"); a
 *                     post's object names its author: "p42@7:likes"
 *   {c<B>}:inflight   the pending hash a flush batch took (renamed)
 *   {c<B>}:meta       b: the batch holding inflight; v: a version that
 *                     every take and ack bumps; f: the fence of dead
 *                     batches (flush.h); o: the outbox rows a drain
 *                     finished (outbox.h); w: the token of the
 *                     reconciliation watching the bucket (moved.h)
 *   {c<B>}:outbox     the outbox rows applied to this bucket and not yet
 *                     drained (a sorted set of row ids)
 *   {c<B>}:fence      counters under a correction (settle.h): per pending
 *                     field, "<token>|<ms>" of the settler holding it
 *   {c<B>}:flog       per fenced field, the deltas applied meanwhile with
 *                     their outbox row ids: "<id>:<d>;" each
 *   {c<B>}:tokens     the tokens of row-less deltas applied (backlog
 *                     rows', a sorted set by time, kept CSTORE_TOKEN_MS)
 *   {c<B>}:seq        per pending field, how many changes it had since
 *                     the bucket's last take (a flush's take drops it)
 *                     while meta w was set: a reconciliation sets w,
 *                     then reads seq before and after a family's truth
 *                     to see which keys moved between (moved.h)
 *   {c<B>}:settled    per pending field, the version of the backlog row
 *                     a settle's correction has put in pending, until
 *                     the row is deleted (settle.c)
 * A change is one script per bucket (capply.c), which also carries the
 * other rows of its call in that bucket (a group commit's): live += d
 * where loaded, pending += d (a field back at 0 is dropped), seq += the
 * changes when watched, each counter once for the sum of the call's
 * rows.  The flusher sweeps every bucket, so nothing else marks a bucket
 * dirty.
 *
 * A live value that is missing is loaded as  counters row + pending +
 * the inflight part when SQLite has not applied its batch yet (read in
 * one SQLite snapshot), by a script that refuses (and the reader retries)
 * when a take or ack touched the bucket meanwhile.
 */
#ifndef TALLY_CSTORE_H
#define TALLY_CSTORE_H

#include "count/cname.h"
#include "count/counters.h"
#include "store/app.h"

/* A fence older than this is a dead settler's (settle.h): dropped.  The
 * scripts (capply.c, settle.c) write it out as 10000: a script is string
 * literals only. */
#define CSTORE_FENCE_MS		10000

/* How long the tokens of row-less deltas are remembered ({cB}:tokens):
 * a delta that waits in the backlog longer could be applied twice.
 * token_lua (capply.c) writes it out as 3600000. */
#define CSTORE_TOKEN_MS		3600000
/* Applies a delta that has no outbox row (a backlog row's, backlog.h)
 * to Redis, at most once per token however often it is called (the
 * token names this one delta: a write that timed out may have been
 * done).  1 applied now, 0 applied before, -1 Redis failed. */
int	cstore_apply_token(struct app *, const char *token,
	    const struct delta *);
/* A view d (+1, posting.h): counted with the viewer's key (viewer, a
 * user's or an anonymous address's, in the slot of d's bucket:
 * cname_bucket_key()) set for window_ms, in one script, when that key
 * was not there.  1 counted, 0
 * the viewer's key was there, -1 Redis failed (not known; nothing waits
 * in the backlog: a view Redis did not run is not counted, as when Redis
 * is down). */
int	cstore_apply_view(struct app *, const struct delta *d,
	    const char *viewer, const char *window_ms);
/* The same in two halves, so that the script goes in one round trip with
 * the page's reads (queued after it, they see the view): the send queues
 * it (0, or -1: nothing queued), the recv reads its reply (as above;
 * scripts flushed under the connection lose that one view, NOSCRIPT,
 * and the next call loads it again).  Either way the process forgets
 * the post's count it kept (count/ckeep.h): it is older than the view. */
int	cstore_view_send(struct app *, const struct delta *d,
	    const char *viewer, const char *window_ms);
int	cstore_view_recv(struct app *);
/* Applies the deltas of outbox row id (outbox.h), at most once per
 * bucket however often it is called: 1 applied now (in at least one
 * bucket), 0 applied before, -1 when Redis failed (nothing known). */
int	cstore_apply_once(struct app *, long long id, const struct delta *,
	    int n);
/* cstore_apply_once() of several rows in one round trip (a group
 * commit's, web/batch.h), one script per bucket for all of them: row i
 * is ids[i] with its n[i] deltas ds[i]; rc[i] is its result.  A caller
 * keeping rows in arrays keeps at most CSTORE_ONCE_MAX. */
#define CSTORE_ONCE_MAX	64
void	cstore_apply_once_n(struct app *, const long long *ids,
	    const struct delta *const *ds, const int *n, int rows, int *rc);
/* The same, and which deltas Redis holds: in[k] (k over every row's
 * deltas, row by row) is 1 when the bucket of delta k answered that its
 * row is applied there, now or before; 0 when it refused or did not
 * answer (a row of rc -1 may be applied in some buckets: a cluster
 * whose one node refuses writes). */
void	cstore_apply_once_in(struct app *, const long long *ids,
	    const struct delta *const *ds, const int *n, int rows, int *rc,
	    unsigned char *in);
int	cstore_apply_once_1(struct app *, long long id, const struct delta *,
	    int n, unsigned char *in);
/* Adds deltas Redis did not take to SQLite's counter_backlog (in the
 * caller's transaction, if one is open): shown on top of the durable
 * values meanwhile and settled exactly (recounted) by the worker when
 * Redis answers again.  0 or -1. */
int	cstore_backlog(struct app *, const struct delta *, int n);

/* A counter as read: its value, and whether it could be read at all.  A
 * failed read is shown as a failure, never as 0. */
struct count {
	long long	v;	/* 0 when !ok: not a value */
	int		ok;
};

/* Reads the n counters named by keys (their d fields are ignored; a
 * post's counters name their owner, cname.h) into out.  Loads the missing ones into Redis.  With Redis down, values come
 * from the counters table plus the backlog (without the unflushed part).
 * With Redis refusing writes (rds_refusing(): the deltas it refused wait
 * in the backlog, its live values are behind), each value is what a load
 * would store, computed and stored nowhere: the counters table plus the
 * backlog (but what a settle has already put in Redis, settle.c) plus
 * Redis's unflushed part.
 * Returns how many could not be read (out[i].ok == 0): 0 when all were. */
int	cstore_get(struct app *, const struct delta *keys, int n,
	    struct count *out);

/* cstore_get() in two steps, so that a page can queue other commands
 * behind the counters' and read their replies (in queue order) before
 * cstore_recv(), which may send commands of its own (the loads).  ds
 * must live until cstore_recv(), which frees the queue. */
struct cstore_q {
	const struct delta	*ds;
	int			 n, queued, down;
	int			 refusing;	/* rds_refusing() at the send */
	struct rds		*rd;
	char			(*hash)[48], (*field)[48];
	int			*grp;
	unsigned		 keep;	/* CKEEP_* (ckeep.h) */
	unsigned		 gen;	/* the data connection's at the send */
	unsigned long long	 epoch;	/* ckeep_epoch() at the send */
	long long		*hv;	/* the values kept, where st[i] is 1 */
	unsigned char		*st;	/* 1 kept, 2 its hash's HMGET queued */
};
void	cstore_send(struct app *, const struct delta *keys, int n,
	    struct cstore_q *);
/* The same, using and filling the values the process keeps as keep says
 * (ckeep.h: CKEEP_READ, CKEEP_STORE; on the master's connection only). */
void	cstore_send_kept(struct app *, const struct delta *keys, int n,
	    unsigned keep, struct cstore_q *);
int	cstore_recv(struct app *, struct cstore_q *, struct count *out);

/* The counters-table value of d's counter into *v (0 when absent).  0, or
 * -1 on a SQLite error (*v then 0, not a value). */
int	cstore_durable(struct db *, const struct delta *d, long long *v);
/* d's counter's backlog row: its delta into *delta (0 when there is
 * none) and its version into *ver (-1: none).  0, or -1 on a SQLite
 * error. */
int	cstore_backlog_get(struct db *, const struct delta *d,
	    long long *delta, long long *ver);

#endif
