/* lb.h -- leaderboards: Redis sorted sets of users by a counter.
 *
 *   {lb}:posts {lb}:followers {lb}:following {lb}:likes   all users
 *   {lb}:rating:<TID>                                    one topic
 * ("rating" over all topics is a user's likes on visible posts, so the
 * global rating board is {lb}:likes.)  Members are user ids zero-padded
 * to 16 digits, so equal scores rank the newer account first, always the
 * same way.  The flusher keeps them in step with the durable values of
 * each batch it applies; a board Redis lost (marker <board>:ok absent) is
 * rebuilt from the counters table on first read, under a lock, into a
 * temporary key swapped in when full; members the flusher changes during
 * the build are set again from SQLite after the swap.
 */
#ifndef TALLY_LB_H
#define TALLY_LB_H

#include "count/counters.h"
#include "store/app.h"

#define LB_MAX	100

/* The family behind a board name ("posts" ...), or FAM__MAX. */
enum family	lb_family(const char *by);

/* 1 when the family's counters have a board. */
int		lb_ranked(enum family);

/* After a flush batch: boards of the user and (user, topic) counters
 * among ds take their durable values: vals[i] (the counters row after
 * ds[i], from the flush's own UPSERT), or read from SQLite when vals is
 * NULL.  With vals it runs no SQL at all: the flusher's main thread calls
 * it while the apply thread holds the connection.  One script call per
 * board.  0 or -1. */
int		lb_update(struct app *, const struct delta *ds,
		    const long long *vals, int n);

/* The top n (<= LB_MAX) of a board (topic > 0: that topic's rating):
 * user ids and values, best first.  From the counters table when Redis
 * cannot give it (down, or its rebuild never ending): durable values.
 * Returns how many, or -1 (SQL failed too). */
int		lb_top(struct app *, enum family fam, long long topic, int n,
		    long long *uids, long long *vals);

/* Drops every board's marker: each is rebuilt from counters on its next
 * read (after a reconciliation repaired counters).  0 or -1. */
int		lb_invalidate(struct app *);

#endif
