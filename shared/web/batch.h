/* batch.h -- requests that queued together: the likes share one commit,
 * the kept pages one sync, the badge polls one round trip.
 *
 * The social writer is one process (SQLite has one writer at a time),
 * and every like waited for it: 245 us of its wall time a like, of which
 * it spent 135 us on a CPU, the rest waiting for its own commit's WAL
 * writes, the writers' lock, Redis and the next request.  Under load the
 * next likes are already queued on its socket.  So, when the request it
 * took is a POST to a ROUTE_GROUP route (like, unlike, repost), the
 * writer also takes, without waiting, every request already queued
 * (up to BATCH_MAX), and:
 *
 *   1. checks each as route_dispatch() would (session, CSRF, throttle:
 *      no lock is taken), the sessions read in one read transaction
 *      (db_read_begin()); a refused one is answered at once;
 *   2. runs the admitted pages in one write transaction, each inside its
 *      own savepoint (db_group_begin()): each succeeds or fails alone,
 *      and each sees what the ones before it wrote;
 *   3. commits once: the pages that shared the WAL's pages (the outbox's
 *      last page, the notifications', the likes' index) write them once;
 *   4. then applies each action's counter deltas to Redis, in order
 *      (outbox_send() waited for the commit: app_after_commit()), and
 *      only then answers them all: a redirect's next page shows the
 *      count, as the contract asks, and a script's JSON answer is made
 *      now (r->then), with the counts applied.  If the commit fails,
 *      every kept action answers 500 instead, and no delta is sent.
 *
 * On PostgreSQL every process of the writer pool gathers so (its
 * groups take no lock: db_group_begin()), and its groups commit at once
 * beside the other processes'.  A transaction's fixed cost (its start,
 * its commit record, the WAL flush, a round trip) was most of a like's
 * there; a group pays it once.  Two groups that run at once would take
 * their posts' rows in the order their requests came, each holding one
 * the other wants: a group runs its pages in the order of their posts'
 * ids instead (their route's first argument), so every group takes rows
 * in one order.  An action that still loses to another transaction (a
 * deadlock with some other writer) loses its whole group: the group is
 * rolled back and each of its pages runs again alone, with the retries
 * of a page served alone (db_group_lost(), route.c).
 *
 * A request that cannot share (another route, a GET) ends the
 * gathering and is served alone, after the group.  A crash at any point
 * leaves what any commit leaves: the outbox rows of a committed group
 * are in SQLite, applied by the worker's drain if not by the writer.
 *
 * A pool of readers gathers too, what READ_MAX allows, the requests of
 * ROUTE_TOGETHER routes, and its program prepares them at once
 * (serve_together()).  The pages a process may send from what it kept
 * (the feed, a profile) each need a sync with Redis sent after the
 * request arrived (keep.h), a round trip in which the process sleeps
 * and must be woken, and under load it waits for Redis to get a CPU:
 * measured on two CPUs shared with nginx and the load, a third of the
 * answers were there at once, but over a quarter took 0.1 to 1 ms
 * (about 80 us on average).  The requests queued when the process takes
 * one were all there before one sync sent after taking them; that sync
 * serves them all (keep_sync_send()).  The badge polls taken together
 * read their badges in one round trip (badges_poll_many()).  The feeds
 * and profiles taken together send their first round trips at once
 * (the session's copy, the badges, the timeline's page: page_ahead(),
 * social.c), and the replies are read in one wait, each page's kept for
 * its load (store/rds.h: rds_stash): a round trip cost the stack ~40 us,
 * and a group of four spread feeds took four.  They are then served in
 * turn.
 *
 * The gathering accepts without waiting: the listening socket is
 * non-blocking (batch_listen_init()), and a process waits for a
 * connection in poll() (serve.c).  With several processes each waiting
 * one is woken for a connection and all but one are then told to try
 * again: a wake-up that costs only when the pool is idle.
 */
#ifndef TALLY_BATCH_H
#define TALLY_BATCH_H

#include <stddef.h>

#include <fcgiapp.h>

#include "base/buf.h"
#include "web/req.h"

#define BATCH_MAX	16	/* requests a group commit takes at most */
#define READ_MAX	4	/* requests a reader takes together */

struct route;

/* One request being served, with what its process keeps between them. */
struct slot {
	FCGX_Request	 fr;
	struct req	 r;
	struct buf	 keep;		/* the page buffer, reused */
	long long	 t0;		/* monotonic us: taken */
	long long	 t1;		/* and answered */
	int		 st;		/* req_parse(): 0 or an HTTP status */
	int		 status;	/* the answer's */
};

/* After s[0] was taken: the kind of gathering it asks for, of flags (what
 * the pool gathers): ROUTE_GROUP (may share a group commit, BATCH_MAX at
 * most) before ROUTE_TOGETHER (READ_MAX), into *kind (0: none); then
 * takes what else is queued on its listening socket, without waiting,
 * while each taken one asks for a route of that kind, calling
 * open(slot) for each.  The number of slots in use; *shared: how many
 * of them, from s[0], may share (the one after them, if any, is served
 * alone; 1 when s[0] cannot share). */
int	batch_gather(struct slot *s, const struct route *, size_t nroutes,
	    unsigned flags, void (*open)(struct slot *, void *), void *arg,
	    int *shared, unsigned *kind);
/* Makes listening socket fd non-blocking, for the pool's processes to
 * gather without waiting (the flag belongs to the socket they share).
 * Called before the first accept. */
void	batch_listen_init(int fd);
/* Serves s[0..n) (n >= 2, each a ROUTE_GROUP POST) with one commit,
 * as above, calling answer(slot) once a slot's answer is final: a
 * refused request's before the group takes the writers' lock (a refused
 * request never waits for it), the others' after the commit and their
 * deltas. */
void	batch_run(struct slot *s, int n, const struct route *,
	    size_t nroutes, void (*answer)(struct slot *));

#endif
