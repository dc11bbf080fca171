/* sesscache.h -- a session's copy in Redis, for the badge poll and the
 * pages people open most.
 *
 * SQLite holds the sessions (session.h); Redis holds a copy of each live
 * one a user has used lately, so that the badge poll and the feed,
 * profile and topic pages need no SQLite read to know who asks:
 *   {c<B>}:u<ID>:ss   (B: the bucket of the user's counters, cname.h)
 *     field <hex>  hex of the session id's hash; value
 *                  "<until> <written> <admin> <csrf> <login>":
 *                  until, when the entry stops being trusted (ms: the
 *                  session's expiry, at most SESSION_CACHE_MS after it
 *                  was written); written, when it was copied from SQLite
 *     field g      the key's generation
 * An entry is copied only from a session just read from SQLite.
 *
 * How far each reader trusts it:
 *   - the badge poll, until "until";
 *   - a page (a GET of /feed, /u/LOGIN, /t/SLUG: route.h ROUTE_LATESESS),
 *     only while "written" is younger than its age: SESSION_PAGE_MS or
 *     down to half of it, as "written" picks (base/clock.h:
 *     clock_spread(): copies written together are renewed apart); an
 *     older entry sends the page to SQLite, which rewrites it;
 *   - no POST: every write checks SQLite.
 *
 * Why an ended session does not come back: a logout, or a password
 * change (which ends every session of the account), deletes the row in
 * SQLite first, then bumps g and deletes the field(s) in one script.  A
 * copy is put only if g is still what was read before SQLite was asked,
 * so a request that read the session just before the logout cannot put
 * it back just after.  The key lives at least SESSION_CACHE_MS after any
 * change, so g outlives every request that read it.  Should Redis miss
 * the logout's script (down just then, and back later with its data),
 * the ended session can still read its own badge numbers for at most
 * SESSION_CACHE_MS and its own pages for at most SESSION_PAGE_MS, and
 * can write nothing.
 *
 * A forged cookie (a real user id, a made-up token) costs what a
 * visitor's page costs: the page's reads for that id, then the SQLite
 * check that finds no session (and the page again, as a visitor, or the
 * redirect to /login).  Nothing it makes a page do writes for that id
 * before the check: a timeline to rebuild or a visit to mark asks SQLite
 * first.
 */
#ifndef TALLY_SESSCACHE_H
#define TALLY_SESSCACHE_H

#include <stddef.h>

#include "social/session.h"
#include "store/db.h"
#include "store/rds.h"

#define SESSION_CACHE_MS	(10 * 60 * 1000LL)
#define SESSION_PAGE_MS		(60 * 1000LL)
#define SESSCACHE_VALUE_MAX	160

/* The entry's value for s, written at now (ms); its length, or -1. */
int	sesscache_format(const struct session *s, long long now, char *out,
	    size_t sz);
/* Until when (ms) a copy written at `written` serves pages: its age is
 * SESSION_PAGE_MS or down to half of it, as `written` picks
 * (base/clock.h clock_spread()). */
long long	sesscache_page_until(long long written);
/* Reads a value of len bytes at now.  page 0 (the badge poll): 1 while
 * its until is ahead (out gets expires_at = until only).  page 1: 1 when
 * it is whole and younger than its age (clock_spread(SESSION_PAGE_MS,
 * written)), out filled but for
 * user_id.  0 otherwise. */
int	sesscache_parse(const char *v, size_t len, long long now, int page,
	    struct session *out);

/* The generation of uid's sessions' key, read before SQLite is asked:
 * 0 or more, or -1 when Redis failed (then nothing is put). */
long long sesscache_gen(struct rds *, long long uid);
/* Copies s, just read from SQLite under the id sid, if the key's
 * generation is still gen.  1 put, 0 not (gen moved, or gen < 0), -1
 * Redis failed. */
int	sesscache_put(struct rds *, const char *sid, const struct session *s,
	    long long gen);
/* A session of uid ended in SQLite (hex: the one; NULL: every one of
 * the account): bump the generation, drop the copies.  Best effort. */
void	sesscache_forget(struct rds *, long long uid, const char *hex);

/* Ends the session with id sid: its row in SQLite (session_delete()),
 * then its copy here.  0, or -1 when SQLite failed. */
int	sesscache_end(struct db *, struct rds *, const char *sid);

/* A page's read in steps, to ride in a round trip of the page's own
 * (its first: a copy that SQLite must renew then rides in its last):
 * sesscache_send() queues one HMGET of the entry and g,
 * sesscache_recv() reads its reply (it sends nothing): 1 and out filled
 * when the entry may serve the page; 0 when SQLite must decide.  *gen
 * is the generation read (-1 when Redis failed). */
struct sesscache_q {
	int	queued;
};
void	sesscache_send(struct rds *, long long uid, const char *hex,
	    struct sesscache_q *);
int	sesscache_recv(struct rds *, struct sesscache_q *, long long now,
	    struct session *out, long long *gen);
/* sesscache_put() in two steps, to ride in a page's pipeline: queued
 * (nothing when gen < 0), then its reply read, as sesscache_put()
 * answers (0 when nothing was queued). */
void	sesscache_put_send(struct rds *, const char *sid,
	    const struct session *s, long long gen, struct sesscache_q *);
int	sesscache_put_recv(struct rds *, struct sesscache_q *);

#endif
