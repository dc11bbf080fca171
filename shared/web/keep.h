/* keep.h -- pages a handler process keeps whole and sends again while
 * nothing they show changed (the routes flagged ROUTE_KEEP: the home
 * feed, a profile).
 *
 * route.c wraps such a page's load and render:
 *
 *   keep_answer()  before the load, for a reader taken at the word of
 *                  its cookie (req.h: presumed): when this process keeps
 *                  the page of this reader and URI, SQLite's data
 *                  version is the one it was read at (one PRAGMA: the
 *                  read transaction's locks, no page read), and a sync
 *                  with Redis says none of the keys it read changed
 *                  (store/rtrack.h: CLIENT TRACKING, one PING), the
 *                  reader's session is confirmed from the entry and the
 *                  page is sent as it was: no statement, no rendering.
 *                  Otherwise the load runs, and what it reads from Redis
 *                  is recorded.
 *   keep_store()   after the render: keeps the page when nothing in it
 *                  was doubtful: the load said so (r->keep.ok: every
 *                  count read from Redis, no visit to mark), the session
 *                  was confirmed by its Redis copy, the badges read, the
 *                  Redis connection tracked throughout, a 200 HTML page
 *                  with no header or cookie of its own.
 *
 * Any commit to SQLite, by anyone, means the page is read again; so
 * does any change to a key it read.  An entry lives FC_TTL_MS (1 s) at
 * most: a badge's inputs are re-derived from SQLite on a clock
 * (bcache.h) and a session's copy confirms it for a minute
 * (sesscache.h); the entry never outlives either.  The page's relative
 * times ("5 min ago") are up to a second old.  PostgreSQL has no data
 * version, a Redis Cluster no single tracking: nothing is kept there.
 *
 * The sync is a round trip; the readers a pool took together share one
 * (keep_sync_send(), web/batch.h).  A page served alone is recorded
 * only on its second visit within the TTL (a mark per reader and URI, no
 * I/O), so traffic that never comes back to a page pays no sync for it.
 *
 * What the process no longer keeps: the Redis part of a page whose
 * SQLite part changed (the timeline page, the counts, the session and
 * badges, reused with a fresh SQLite read).  It saved a round trip when
 * a commit came between two visits, at the price of a seven-step
 * protocol inside the feed's and the profile's code; on traffic spread
 * over many readers it hardly ever hit (docs/BENCHMARKS.md).
 *
 * Per request, the state lives in r->keep; the entries are the
 * process's.
 */
#ifndef TALLY_KEEP_H
#define TALLY_KEEP_H

#include "store/app.h"
#include "web/req.h"

#define FC_TTL_MS	1000

/* 1: the kept page is in r->body (status 200); 0: load the page. */
int	keep_answer(struct req *);
/* 1 when this process keeps a page for r that keep_answer() may send
 * (a presumed reader; no I/O): its first round trip is not sent ahead. */
int	keep_likely(struct req *);
/* After the render (rendered 0: the load answered by itself). */
void	keep_store(struct req *, int rendered);
/* One sync for the n requests a pool took together (web/batch.h): each
 * was queued before it was sent.  In two halves, so that the pages'
 * first round trips go while it is on its way: keep_sync_send() sends it
 * (0, or -1: none, each page syncs alone), keep_sync_recv() waits for it
 * (sent: what the send returned; 0, or -1); a page whose first round
 * trip went ahead of it (r->ahead) is not kept when the sync forgot a
 * key that trip read (the change may have come after the read). */
int	keep_sync_send(struct app *);
int	keep_sync_recv(struct req *const *rs, int n, int sent);
/* What a page's counter reads may do with the values the process keeps
 * (count/ckeep.h): store them while the data connection is tracked, use
 * them when a sync came after r arrived. */
unsigned keep_counts(struct req *r);
/* Round trips of the invalidation connection so far, and pages sent as
 * kept (a request's cost, /metrics). */
unsigned long long keep_syncs(void);
unsigned long long keep_wholes(void);

#endif
