/* timeline.h -- the Redis sorted sets behind feeds and follow lists.
 *
 * Four kinds per user (key.h): home (own and followees' posts, capped
 * at 1000), profile (own posts, capped at 1000), followers and following
 * (uncapped), all newest first by score (milliseconds).  SQLite is the
 * truth; a set is a cache that is either complete (marker "1") or absent.
 * Writers touch a set only while its marker exists (one Lua script per
 * user and change: set and marker share the {u<ID>} hash tag), so a set
 * that is not materialised costs a writer nothing and is rebuilt from
 * SQLite by the first reader, under a SET NX lock.  Readers that lose the
 * lock race, or find Redis down, read the same page from SQLite.
 * Readers always re-check ids against SQLite (visibility, still
 * following), so a stale id in a set is never shown, only skipped.  A
 * page that reaches past a capped set's end is read from SQLite.
 */
#ifndef TALLY_TIMELINE_H
#define TALLY_TIMELINE_H

#include "store/app.h"
#include "store/key.h"

enum tl {
	TL_HOME,
	TL_PROFILE,
	TL_FOLLOWERS,
	TL_FOLLOWING,
	TL__MAX
};

#define TL_CAP		1000	/* home and profile timelines */
#define TL_REFILL	750	/* home below this after an unfollow: rebuild */

/* A timeline's keys: the set, its marker ("1": complete), the rebuild
 * lock (key.h). */
struct timeline_keys {
	char	set[KEY_MAX];
	char	ok[KEY_MAX];
	char	lock[KEY_MAX];
	char	cut[KEY_MAX];	/* "1": the set lost its oldest to the cap
				   (SQL has posts past its end) */
};
void		timeline_keys(struct timeline_keys *, enum tl, long long uid);

/* Adds n (score, id) entries to uid's set if it is materialised, then
 * trims to the cap.  An entry already there at a later score keeps it
 * (ZADD GT: a post reposted since stays at the repost's place).  Returns
 * the set's size, -1 when the set is not materialised (nothing to do),
 * -2 when Redis failed. */
long long	timeline_add(struct app *, enum tl, long long uid, int n,
		    const long long *scores, const long long *ids);
/* What a caller added is complete down to floor only (a followee's
 * newest TL_CAP posts, of more): uid's set, if materialised, keeps
 * nothing below floor and is marked cut (pages past its end come from
 * SQL).  Returns as timeline_add(). */
long long	timeline_cut_below(struct app *, enum tl, long long uid,
		    long long floor);
/* Removes ids; returns the size left, -1 not materialised, -2 failed. */
long long	timeline_rem(struct app *, enum tl, long long uid, int n,
		    const long long *ids);

/* Places n entries exactly: each at its score, or removed when the
 * score is negative (an unfollow's corrections).  Returns as timeline_add(). */
long long	timeline_put(struct app *, enum tl, long long uid, int n,
		    const long long *scores, const long long *ids);

/* Queues timeline_add of one entry for many users in one pipeline (fan-out).
 * Returns 0, or -1 when Redis failed. */
int		timeline_add_many(struct app *, enum tl, int nusers,
		    const long long *uids, long long score, long long id);
/* Same, each at its own score: at scores[i] in uids[i]'s set (one
 * placed later keeps its place), removed where the score is negative. */
int		timeline_add_each(struct app *, enum tl, int nusers,
		    const long long *uids, const long long *scores, long long id);
/* Same, removing one id from many users' sets. */
int		timeline_rem_many(struct app *, enum tl, int nusers,
		    const long long *uids, long long id);
/* Same, placing one id exactly: at scores[i] in uids[i]'s set, removed
 * where the score is negative (an unrepost's fan-out). */
int		timeline_put_many(struct app *, enum tl, int nusers,
		    const long long *uids, const long long *scores, long long id);

/* Ids of one page (offset, at most limit) newest first, into ids.
 * Rebuilds a missing set first.  Returns the count; -1 when the page
 * must come from SQLite (timeline_page_sql) instead. */
int		timeline_page(struct app *, enum tl, long long uid, long long offset,
		    int limit, long long *ids);
/* The same page straight from SQLite; count or -1. */
int		timeline_page_sql(struct app *, enum tl, long long uid,
		    long long offset, int limit, long long *ids);
/* Page `page` (from 1, per ids a page): from Redis, else from SQLite.
 * The count, or -1 when neither answered. */
int		timeline_ids(struct app *, enum tl, long long uid, long long page,
		    int per, long long *ids);
/* timeline_ids() in three steps, so that a page can queue its timeline read
 * with other commands: timeline_ids_send() queues it, timeline_ids_read() reads its
 * reply (and sends nothing), timeline_ids_end() gives the count as timeline_ids()
 * does (it may rebuild the set, so after every other queued reply is
 * read), and says in cached whether Redis held the page at the first
 * ask.  Every sent queue is ended, or dropped with timeline_ids_drop() (a page
 * whose reader did not hold: nothing rebuilt for them). */
struct tl_q {
	enum tl		 kind;
	long long	 uid, offset;
	int		 per, queued;
	int		 cached;
	rds_reply	*rep;
	struct rds	*rd;		/* where it was sent: its reply is there */
};
void		timeline_ids_send(struct app *, enum tl, long long uid,
		    long long page, int per, struct tl_q *);
void		timeline_ids_read(struct app *, struct tl_q *);
int		timeline_ids_end(struct app *, struct tl_q *, long long *ids);
void		timeline_ids_drop(struct tl_q *);
/* The ids timeline_ids_end() will give from q's replies, read ahead into
 * st (store/rds.h: the first of them q's) when Redis held the page whole:
 * their count, or -1 (known only once the page loads). */
int		timeline_ids_peek(const struct tl_q *,
		    const struct rds_stash *st, long long *ids);
/* Where posts belong in home timelines now (store/sql.h: HOME_SCORE):
 * st is STMT_HOME_SCORES (one user, n posts) or STMT_HOME_SCORES_OF_POST
 * (one post, n users); scores[i] is the i-th of the n's, -1 when it is
 * not there.  0, or -1 on a SQL error. */
int		timeline_home_scores(struct app *, enum stmt st, long long one,
		    const long long *many, int n, long long *scores);
/* Rebuilds uid's set from SQLite now, unless another process holds the
 * lock.  Returns 1 rebuilt, 0 locked elsewhere, -1 on error. */
int		timeline_rebuild(struct app *, enum tl, long long uid);

#endif
