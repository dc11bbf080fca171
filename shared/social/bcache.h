/* bcache.h -- a user's four badges in one Redis round trip, no SQLite.
 *
 * Every open page polls /badges.json, so its steady state must be one
 * Redis round trip and no SQLite (a 304 then costs no SQLite work at
 * all).  badges_get() computes the badges from SQLite markers and counts
 * (badges.h); this cache keeps what that computation read, each part next
 * to what changes it:
 *   {c<B>}:u<ID>:ss  the session (session.h)
 *   {c<B>}:u<ID>     field unread: the live counter itself (cstore.h)
 *   {c<B>}:u<ID>:bm  seen (notices marker), visited (last /news visit,
 *               -1: never), fb (followed-author unread), fbe (the epoch
 *               fb was computed at), fg (the gen it was filled under),
 *               at (fill time, ms); and gen (bumped by the reader's own
 *               changes, and by every post its followees publish or
 *               withdraw)
 *   {g}:badge   latest (newest notice id), lit (the red dot's time), at
 *               (when they were read from SQLite, ms), epoch (bumped
 *               when a bump was missed: every reader turns over)
 * B is the bucket of the user's counters (cname.h): the user's three
 * keys share one slot.  On a Redis Cluster the global part is kept in
 * KEY_BADGE_COPIES copies, one in each sixteenth of the slot space
 * (key.h), so every master holds one; a poll reads the copy on the node
 * of the user's keys, and a poll is one node's round trip.  Whatever
 * changes the global part writes every copy (a missed bump's replay
 * bumps the epoch of each: 16 scripts, one round trip per node); a fill
 * writes the copy its poll read.  Copy k's epochs are k modulo the
 * number of copies, so an fb stored against one copy never matches
 * another's epoch.
 * A poll is one pipeline of four plain commands (HGET of the session
 * field, HGET of unread, HMGET of bm, HMGET of the global part; plain
 * commands cost Redis less than a script, and the checks are made here).
 * It answers from the cache when the
 * session field is there and not past its time, unread is loaded,
 * fg == gen, fbe == epoch, bm is younger than its age (BCACHE_USER_MS
 * or down to half of it, as its fill time picks: base/clock.h
 * clock_spread(), so that users filled together recompute apart) and the
 * global part younger than BCACHE_GLOBAL_MS; otherwise the request takes
 * the slow path (session from SQLite, badges computed, cache refilled).
 *
 * Why no change is missed: whatever moves a reader's markers or follows
 * bumps gen after its SQLite write, and a fill is written only if gen is
 * still what the poll that missed saw (before it read SQLite): a fill can
 * never store values older than an invalidation.  A post published or
 * withdrawn is such a change for each follower of its author: after its
 * commit the fan-out bumps their gens with their batch, as their home
 * timelines take it, and tells those whose stream is open (live.h; the
 * event reads the badges after the bump); an author's 100 followers or
 * fewer are bumped by the request instead, before it answers, so that
 * their next poll shows it (social/fanout.c).  Likewise fb carries the
 * epoch read before its counts (SQLite's: followed.h), for the replay
 * below.  The global values only grow (notice ids, light
 * times), so they are merged with max().  A bump Redis did not take
 * (unreachable just then) is journaled in SQLite (BCACHE_MISSED), and
 * the worker, once Redis answers, bumps every copy's epoch: every cached
 * entry turns over (bcache_replay()).  The ages bound what is left when
 * even that fails (a bump lost with a master that failed over):
 * BCACHE_USER_MS for a reader's markers and fb, BCACHE_GLOBAL_MS for
 * notices and the red dot.  The user part's age is what sets the cost of
 * many readers: each user's followed badge is recomputed (one statement,
 * an index range per followed author) once an age; at 30 s, 10,000 users
 * made a fifth of Redis's work when that was a ZCOUNT per author in
 * Redis (docs/BENCHMARKS.md, "A site's traffic").
 *
 * A post once bumped the one global epoch instead: every reader's next
 * poll recounted its followed authors.  In the traffic benchmark's mix
 * with one request in 500 a post (7 posts a second), a third of all
 * requests recounted, and the site served 11-19 % fewer; with the bumps
 * per follower, −8 to +4 % (docs/BENCHMARKS.md).  The price: three
 * commands a follower, beside the fan-out's timeline write.
 */
#ifndef TALLY_BCACHE_H
#define TALLY_BCACHE_H

#include "store/app.h"

/* A user's four badges (badges.h says what each counts). */
struct badges {
	long long	notifications;
	long long	notices;
	long long	followed;
	int		red_dot;
};

#define BCACHE_USER_MS		120000
#define BCACHE_GLOBAL_MS	5000

/* What a poll that missed saw: the fill is conditional on it.  The
 * unread counter it read is the value itself (cstore.h), which the
 * slow path then need not read again. */
struct bcache_stamp {
	int		ok;	/* 0: nothing to fill against */
	long long	gen;
	long long	epoch;
	long long	at;	/* when the poll ran (ms) */
	int		copy;	/* the copy of the global part read */
	int		have_unread;	/* 1: unread was read (loaded) */
	long long	unread;
};

/* Reads uid's badges.  With hex (session.h) the session is checked
 * too.  1: b filled from the cache.  0: a miss, st says what to fill
 * against.  -1: hex given and the session is not in the cache (or Redis
 * is down): ask SQLite. */
int	bcache_get(struct app *, long long uid, const char *hex,
	    struct badges *b, struct bcache_stamp *st);

/* bcache_get() in three steps, so that a page can send its badge read in
 * the pipeline of its own last round trip: bcache_send() queues the four
 * commands, bcache_read() reads their replies (and sends nothing), and
 * bcache_end() decides, as bcache_get() does; it may ask Redis again, so
 * it comes after every reply queued behind these has been read.  A
 * queue that is read but not ended is freed with bcache_drop(). */
struct bcache_q {
	rds_reply	*rep[4];
	int		 queued;
	int		 whole;		/* every reply read */
	int		 hex;		/* the session was asked (else rep[0] unused) */
	int		 copy;		/* of the global part */
	long long	 t;
};
void	bcache_send(struct app *, long long uid, const char *hex,
	    struct bcache_q *);
void	bcache_read(struct app *, struct bcache_q *);
int	bcache_end(struct app *, struct bcache_q *, struct badges *,
	    struct bcache_stamp *);
void	bcache_drop(struct bcache_q *);

/* Stores what the slow path computed (seen: notices marker, visited: -1
 * when never), and the global part; best effort. */
void	bcache_fill(struct app *, long long uid, const struct bcache_stamp *,
	    long long seen, long long visited, long long fb, long long latest,
	    long long lit);

/* The global part only (a notice was sent, the dot lit): max-merged. */
void	bcache_globals(struct app *, long long latest, long long lit);

/* uid's markers or follows changed in SQLite: bump gen.  A bump Redis
 * did not take is journaled (BCACHE_MISSED) for bcache_replay(). */
void	bcache_forget(struct app *, long long uid);

/* A post of an author the n users follow was published or withdrawn
 * (its commit done): bump each one's gen, one pipeline (a cluster's
 * nodes at once); a bump Redis did not take, or n -1 (who they are is
 * not known: the fan-out's job was lost), is journaled as
 * bcache_forget()'s, and bcache_replay() turns every reader over.  Those
 * whose stream is open are told, after the bumps (live.h). */
void	bcache_readers_changed(struct app *, const long long *uids, int n);

/* The worker, once Redis answers: when a bump was missed, bumps the
 * epoch of every copy, which turns every user's cached badges over (the
 * cache is whole only while fbe == epoch).  1 replayed, 0 nothing to
 * replay, -1 Redis failed (tried again later). */
#define BCACHE_MISSED	"badges_missed"
int	bcache_replay(struct app *);

#endif
