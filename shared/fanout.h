/* fanout.h -- getting posts into and out of timelines, and the durable
 * queue of deferred work.
 *
 * Publishing adds the post to the author's profile and home timelines
 * and, in the request, to the home timelines of the author's first 1000
 * followers (by follow time); the rest goes to the worker as jobs of 1000
 * followers each.  Unpublishing or deleting removes the post from the
 * author's own timelines at once and from followers' lazily, by jobs.
 *
 * The queue is a Redis list ({jobs}:queue, persisted by AOF).  The worker
 * moves a job atomically to {jobs}:processing (LMOVE), does it, and in
 * one script removes it and queues its continuation; a worker killed
 * mid-job finds it in processing at restart and does it again.  Every job
 * is idempotent (ZADD of the same score, ZREM), so a redone job neither
 * loses nor duplicates a timeline entry.
 */
#ifndef TALLY_FANOUT_H
#define TALLY_FANOUT_H

#include "app.h"

#define FANOUT_BATCH	1000

/* Returns 0, or -1 when Redis failed (the timelines are then repaired by
 * their rebuild from SQLite; readers never show an invisible post). */
int	fanout_publish(struct app *, long long post, long long author,
	    long long published_at);
int	fanout_remove(struct app *, long long post, long long author);

/* Worker side.  fanout_recover() puts jobs left in processing back in
 * the queue (call once at start); fanout_work() runs up to max jobs and
 * returns how many it ran, or -1 when Redis failed. */
int	fanout_recover(struct app *);
int	fanout_work(struct app *, int max);

/* Jobs waiting (queue + processing), or -1. */
long long fanout_pending(struct app *);

#endif
