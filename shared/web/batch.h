/* batch.h -- group commit: the likes that queued together, one commit.
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
 *      no lock is taken); a refused one is answered at once;
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
 * A request that cannot share (another route, a GET) ends the
 * gathering and is served alone, after the group.  A crash at any point
 * leaves what any commit leaves: the outbox rows of a committed group
 * are in SQLite, applied by the worker's drain if not by the writer.
 * Only a pool of one process gathers (serve.c): with several, another
 * process may take a queued request first, and the accept would block.
 */
#ifndef TALLY_BATCH_H
#define TALLY_BATCH_H

#include <stddef.h>

#include <fcgiapp.h>

#include "base/buf.h"
#include "web/req.h"

#define BATCH_MAX	16	/* requests a group commit takes at most */

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

/* After s[0] was taken: takes what else is queued on listen socket fd,
 * without waiting, while each taken one may share a group commit (at
 * most BATCH_MAX in all), calling open(slot) for each.  The number of
 * slots in use; *shared: how many of them, from s[0], may share (the
 * one after them, if any, is served alone; 1 when s[0] cannot share). */
int	batch_gather(struct slot *s, int fd, const struct route *,
	    size_t nroutes, void (*open)(struct slot *, void *), void *arg,
	    int *shared);
/* Makes listening socket fd blocking, as a gathering leaves it: the
 * flag belongs to the socket, which the next process of the pool
 * inherits, and a writer killed while it gathered would leave its
 * successor's accept failing at once.  Called before the first accept. */
void	batch_listen_reset(int fd);
/* Serves s[0..n) (n >= 2, each a ROUTE_GROUP POST) with one commit,
 * as above, calling answer(slot) once a slot's answer is final: a
 * refused request's before the group takes the writers' lock (a refused
 * request never waits for it), the others' after the commit and their
 * deltas. */
void	batch_run(struct slot *s, int n, const struct route *,
	    size_t nroutes, void (*answer)(struct slot *));

#endif
