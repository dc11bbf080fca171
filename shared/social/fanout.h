/* fanout.h -- getting posts into and out of timelines, and the durable
 * queue of deferred work.
 *
 * Publishing adds the post to the author's profile and home timelines
 * and, in the request, to the home timelines of the author's first 1000
 * followers (by follow time); the rest goes to the worker as jobs of 1000
 * followers each.  The request's batch is done by the handler process
 * right after the response is sent (app_after()), so the poster waits
 * for the same work whether the author has 10 followers or 10 million;
 * before answering, the handler notes the batch in {jobs}:inline (a
 * sorted set scored by time), and drops the note with the batch done.  A
 * note older than FANOUT_INLINE_GRACE_MS belongs to a handler that died
 * in between: the worker moves it to the queue (fanout_reclaim()).  Unpublishing or deleting removes the post from the
 * author's own timelines at once and from followers' lazily, by jobs; its
 * note, made before the commit, is the job should the handler die first.
 * A repost or an unrepost goes to the reposter's followers the same way.
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

#include "store/app.h"

#define FANOUT_BATCH	1000
#define FANOUT_INLINE_GRACE_MS	5000

/* A publication's fan-out, noted in its transaction before the commit
 * (fanout_publish_intent(): the note, malloc'd, or NULL when Redis
 * failed), so that a process killed between the commit and the fan-out
 * leaves it to the worker; a rollback drops it (fanout_intent_drop()),
 * and a note whose post never committed does nothing.  After the
 * commit, fanout_publish() notes it again in its place (NULL: notes it
 * now), so that one the worker took before the commit and found no
 * post for is not all there is.
 * Returns 0, or -1 when Redis failed (the timelines are then repaired
 * by their rebuild from SQLite; readers never show an invisible post). */
char	*fanout_publish_intent(struct app *, long long post, long long author,
	    long long published_at);
/* The same for a repost made at `at`, or an unrepost (undo). */
char	*fanout_repost_intent(struct app *, long long post, long long reposter,
	    long long at, int undo);
void	 fanout_intent_drop(struct app *, char *note);
int	fanout_publish(struct app *, long long post, long long author,
	    long long published_at, char *note);
/* A withdrawal (an unpublish, a delete): noted before its commit as a
 * publication is (fanout_remove_intent(); a note whose post is still
 * visible does nothing), then the author's own timelines at once and a
 * job for the followers', the note dropped. */
char	*fanout_remove_intent(struct app *, long long post, long long author);
int	fanout_remove(struct app *, long long post, long long author,
	    char *note);
/* A repost made at `at`: the post goes to the top of the reposter's
 * followers' home timelines (those placing it later keep their place).
 * An unrepost: each of them gets the post back at its place without that
 * repost (its publication, or another followee's repost), or loses it.
 * Both as a publication's fan-out: the first 1000 followers after the
 * response, the rest as jobs; note: made before the commit, as a
 * publication's (fanout_repost_intent()), or NULL.  0, or -1 when Redis
 * failed. */
int	fanout_repost(struct app *, long long post, long long reposter,
	    long long at, char *note);
int	fanout_unrepost(struct app *, long long post, long long reposter,
	    char *note);

/* Worker side.  fanout_recover() puts jobs left in processing back in
 * the queue (call once at start). */
int	fanout_recover(struct app *);
/* Queues the handlers' batches noted more than grace_ms ago; how many,
 * or -1. */
int	fanout_reclaim(struct app *, long long grace_ms);
/* Runs up to max jobs, or as many as end within slice_ms of its start
 * (one at least), and returns how many it ran, or -1 when Redis failed:
 * the worker's other jobs run between its slices. */
#define FANOUT_SLICE_MS	200
int	fanout_work(struct app *, int max, long long slice_ms);

/* Jobs waiting (queue + processing), or -1. */
long long fanout_pending(struct app *);

#endif
