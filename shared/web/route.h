/* route.h -- route tables and dispatch.
 *
 * A handler declares one table: methods, a path pattern, what answers
 * and what the route needs.  A GET names its page (web/page.h: a model,
 * its load, its render); a POST names its action, and the domain
 * function the action calls: `call` when the action is one of a family
 * that shares its HTTP part (like, unlike, repost ...), else the action
 * is that function's HTTP part, act_<function>.
 * Pattern segments are literals, ":id" (a decimal id) or ":s" (any
 * non-empty segment); the matched arguments go to r->args in order.
 * route_dispatch() answers 404 (no pattern matches), 405 with Allow (a
 * pattern matches, the method does not), 303 to /login or 401
 * (ROUTE_USER without a session), 403 (ROUTE_ADMIN for a non-admin, or a
 * POST whose csrf field is wrong), and otherwise runs the page or the
 * action, which answers for itself.
 *
 * What a page keeps between requests is decided here, by the route's
 * flags, around its load and render: a reader taken at the word of its
 * cookie (ROUTE_LATESESS), a page sent as it was kept (ROUTE_KEEP,
 * web/keep.h).  Pages know nothing of either.
 */
#ifndef TALLY_ROUTE_H
#define TALLY_ROUTE_H

#include <stddef.h>

#include "web/page.h"
#include "web/req.h"

#define ROUTE_USER	0x01	/* needs a logged-in user */
#define ROUTE_ADMIN	0x02	/* needs an admin (implies ROUTE_USER) */
#define ROUTE_JSON	0x04	/* answers JSON: 401 rather than 303 */
#define ROUTE_NOCSRF	0x08	/* a POST that needs no csrf (none yet) */
#define ROUTE_OWNAUTH	0x10	/* a GET that finds its session itself
				 * (the badge poll, from Redis): no
				 * req_identify(), no ROUTE_USER check */
#define ROUTE_WRITE	0x40	/* an action TALLY_WRITE_RATE counts
				 * (throttle.h): 429 beyond it, before
				 * any lock or write */
#define ROUTE_LATESESS	0x80	/* a GET whose page confirms its session
				 * in a Redis round trip of its own
				 * (req_presume(); req_session_decide()
				 * or layout_load_cards()), not from
				 * SQLite first; never with ROUTE_ADMIN */
#define ROUTE_TXN	0x20	/* a POST whose page opens its write
				 * transaction (db_begin) before any
				 * Redis I/O or autocommit write: it is
				 * opened once the session and the CSRF
				 * token passed, and the page joins it;
				 * a refused request never takes the
				 * writers' lock */
#define ROUTE_GROUP	0x100	/* a ROUTE_TXN POST whose page does all
				 * its work in one transaction, with
				 * its counter deltas in the outbox and
				 * nothing else before its redirect (a
				 * JSON answer it leaves to r->then): it
				 * may share a group commit
				 * (web/batch.h); its first path
				 * argument is the post whose row it
				 * locks (store/rowheld.h) */
#define ROUTE_TOGETHER	0x200	/* a GET that a pool of readers takes
				 * with the same ones queued behind it,
				 * and prepares at once (web/batch.h,
				 * serve.h): the feed and a profile one
				 * sync, the badge polls one round trip */

#define ROUTE_KEEP	0x400	/* a ROUTE_LATESESS GET whose page a
				 * process may keep and send again while
				 * nothing it shows changed (web/keep.h);
				 * its load says whether this one may be
				 * kept (r->keep.ok) */
#define ROUTE_PART	0x800	/* a GET answering a part of a page (no
				 * header): it leaves the one-time message
				 * for the next whole page (web/flash.h) */

/* The domain function an action of a family calls. */
union route_call {
	int	(*post)(struct app *, long long post, long long uid);
	int	(*user)(struct app *, long long uid, long long other);
	int	(*note)(struct app *, long long note, long long uid);
};

struct route {
	unsigned	  methods;	/* METHOD_GET | METHOD_POST */
	const char	 *pattern;
	const struct page *page;	/* a GET's page */
	int		(*act)(struct req *, const struct route *); /* a POST's */
	union route_call  call;
	unsigned	  flags;
};

/* Matches path against pattern; on success stores up to max arguments
 * (fresh strings the caller frees) and returns their number; -1 when it
 * does not match. */
int	route_match(const char *pattern, const char *path, char **args,
	    int max);

void	route_dispatch(struct req *, const struct route *, size_t n);

/* route_dispatch() in two steps, for a group commit (web/batch.h): the
 * checks, which take no lock (the route, or NULL when they answered),
 * then the admitted page, in the group's transaction. */
const struct route *route_admit(struct req *, const struct route *,
	    size_t n);
void	route_run(struct req *, const struct route *);
/* Answers a write that could not take its lock in time (store/db.h:
 * db_busy()): 503 with Retry-After, nothing of it written. */
void	route_busy(struct req *);
/* The flags of the route r asks for (its path and method; HEAD as GET),
 * 0 when none; whether it has flag. */
unsigned route_flags(const struct req *, const struct route *, size_t n);
int	route_flagged(const struct req *, const struct route *, size_t n,
	    unsigned flag);

#endif
