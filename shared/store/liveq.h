/* liveq.h -- what the live badges must tell, and to whom: a queue and a
 * set in Redis (social/live.h says when; handlers/live.c publishes).
 *
 *   {g}:live:q  a list of changes: "u<uid>" (that user's badges moved),
 *               "a<uid>" (that author published or deleted a post: the
 *               followed badge of each follower), "g" (a notice or the
 *               red dot: everyone's), "o<uid>" (a stream of that user
 *               opened: the publisher knows it at once, to close it
 *               should Redis fail), "c<uid>" (close that user's
 *               streams: a logout or a new password on a host without
 *               nginx's publisher, social/live.h).  Capped at LIVEQ_CAP: a change
 *               that falls off is corrected by the page's next poll.
 *   {g}:live    the users with an open stream, each scored by the time
 *               (ms) its registration lapses; a stream registers when it
 *               opens, and again whenever it hears a message
 *               (LIVEQ_STREAM_MS: longer than nginx keeps one after its
 *               last message, nchan_subscriber_timeout).
 *   a flag per user with an open stream, "1" for LIVEQ_STREAM_MS, in the
 *               slot of the user's counters (the caller names it:
 *               count/cname.h, "{c<B>}:u<uid>:lv").
 * A user's change asks the flag before it tells ("u<uid>"): the question
 * rides in the pipeline that applies the change, on the node that holds
 * the user's counters, so a user with no stream open costs one EXISTS
 * there.  Written blind instead (as it was), on a Redis Cluster a like
 * woke a second master, the queue's, for a user who was not listening.  A
 * flag set after the change was applied misses nothing: the stream reads
 * the badges after setting it (liveq_join()).  "a", "g" and "o" changes
 * (posts, notices, opened streams) are rare and written blind; the
 * publisher filters every change by {g}:live.
 */
#ifndef TALLY_LIVEQ_H
#define TALLY_LIVEQ_H

#include "store/rds.h"

#define LIVEQ_CAP	100000
#define LIVEQ_STREAM_MS	(11 * 60 * 1000)
#define LIVEQ_TAKE_MAX	1024	/* changes taken at once */

/* What one take brought, deduplicated. */
struct liveq_batch {
	long long	 users[LIVEQ_TAKE_MAX];
	int		 nusers;
	long long	 authors[LIVEQ_TAKE_MAX];
	int		 nauthors;
	long long	 opened[LIVEQ_TAKE_MAX];	/* streams that opened */
	int		 nopened;
	long long	 closed[LIVEQ_TAKE_MAX];	/* streams to close */
	int		 nclosed;
	int		 everyone;	/* a "g" was among them */
};

/* Appends change (kind 'u', 'a', 'o', 'c' or 'g'; id ignored for 'g') to r's
 * pipeline: two commands.  How many replies to collect (2), or -1. */
int	liveq_append(struct rds *, char kind, long long id);
/* The same, sent and collected: 0 or -1 (Redis down). */
int	liveq_push(struct rds *, char kind, long long id);
/* uid has an open stream until until_ms: its flag set, its
 * registration in {g}:live, "o<uid>" queued.  0 or -1. */
int	liveq_join(struct rds *, long long uid, long long until_ms,
	    const char *flag);
/* uid's stream heard a message: nginx keeps a stream for
 * nchan_subscriber_timeout (10 minutes) after its last message, not
 * after it opened, so its registration and flag are made to last until
 * until_ms again (nothing queued).  Without it, a stream that heard
 * anything after its first minute outlived its registration and was
 * told nothing more until nginx closed it.  0 or -1. */
int	liveq_renew(struct rds *, long long uid, long long until_ms,
	    const char *flag);
/* Appends the question "is flag's user listening?" (EXISTS flag) to r's
 * pipeline: how many replies liveq_answer() reads (1), or -1. */
int	liveq_ask(struct rds *, const char *flag);
/* The next reply, a liveq_ask()'s: 1 listening, 0 not, -1 Redis failed. */
int	liveq_answer(struct rds *);
/* uid's badges moved: asked, then told ("u<uid>") when it listens.  0 or
 * -1 (Redis down). */
int	liveq_tell_user(struct rds *, long long uid, const char *flag);
/*
 * The longest wait on the queue (BLPOP), and the command timeout its
 * taker needs (store/app.c gives it to tally-live).  Redis ends a blocked
 * command's wait on its clock's tick (hz 10: every 100 ms), so an empty
 * answer comes up to a tick late: 150 to 251 ms after the ask on an idle
 * server.  Under the handlers' 250 ms timeout, a Redis busy for 80 ms
 * just then (a long command, a slow disk) was taken as gone: the streams
 * closed, and the host's shared backoff (rhealth.h) held every handler
 * off Redis for 250 ms, /badges/live answering 503.  The taker's
 * timeout leaves the same 250 ms for a late answer as any command has.
 */
#define LIVEQ_WAIT_MAX_MS	150
#define LIVEQ_TIMEOUT_MS	(LIVEQ_WAIT_MAX_MS + 100 + 250)

/* Waits up to wait_ms (at most LIVEQ_WAIT_MAX_MS) for a change, then
 * coalesce_ms more for others, and takes them all (at most
 * LIVEQ_TAKE_MAX) into b.  1: something taken; 0: nothing came; -1:
 * Redis failed. */
int	liveq_take(struct rds *, int wait_ms, int coalesce_ms,
	    struct liveq_batch *b);
/* The users whose streams are registered after now_ms, into *uids
 * (malloc'd).  How many, or -1. */
int	liveq_members(struct rds *, long long now_ms, long long **uids);
/* Keeps of uids[0..n) those with a stream registered after now_ms, in
 * place (one ZMSCORE).  How many are left, or -1. */
int	liveq_filter(struct rds *, long long now_ms, long long *uids, int n);
/* Forgets registrations lapsed before now_ms. 0 or -1. */
int	liveq_expire(struct rds *, long long now_ms);
/* Parses one queue item into b (pure: unit-tested). 0, or -1 unknown. */
int	liveq_parse(const char *item, size_t len, struct liveq_batch *b);

#endif
