/* badges.h -- the four badges of a user, as the pages and /badges.json
 * show them:
 *   notifications  unread notifications (counter user_unread, Redis)
 *   notices        system notices after the last one the user opened:
 *                  notices are never deleted, so ids count them and the
 *                  unread number is latest id - marker, with no per-user
 *                  write on a broadcast
 *   followed       over followed authors, their visible posts published
 *                  after max(follow time, last visit to their profile):
 *                  counted over each author's visible posts in SQLite
 *                  (followed.h), so a deleted post stops counting at
 *                  once (a count of "published minus read" would not)
 *   red_dot        the admin's light time is later than the user's last
 *                  visit to /news (or the user never visited)
 * Markers live in SQLite (notify.h) and only move forward.
 */
#ifndef TALLY_BADGES_H
#define TALLY_BADGES_H

#include <stddef.h>

#include "social/bcache.h"
#include "store/app.h"

/* From the cache (bcache.h) when it holds them, else computed (and the
 * cache refilled).  0, or -1 on a SQLite error. */
int	badges_get(struct app *, long long uid, struct badges *);
/* badges_get() in three steps (bcache.h says why): send, read, end. */
struct badges_q {
	long long	 uid;
	struct bcache_q	 q;
};
void	badges_send(struct app *, long long uid, struct badges_q *);
void	badges_read(struct app *, struct badges_q *);
int	badges_end(struct app *, struct badges_q *, struct badges *);
/* Frees a queue that was read and will not be ended. */
void	badges_drop(struct badges_q *);
/* The badge poll: the badges of the session with id sid, its user in
 * *uid, with the session checked in Redis only.  1: b filled.  0: the
 * session is not in the cache (or Redis is down), or sid is NULL or not
 * a session id: check it in SQLite and call badges_get().  -1: a SQLite
 * error. */
int	badges_poll(struct app *, const char *sid, long long *uid,
	    struct badges *);
/* badges_poll() for n polls at once, their reads in one round trip:
 * rc[i] as badges_poll() answers for sid[i], uid[i] and b[i] as it
 * fills them. */
void	badges_poll_many(struct app *, const char *const *sid, int n,
	    long long *uid, struct badges *b, int *rc);
/* A strong ETag for the values ("b-N-N-N-N"). */
void	badges_etag(const struct badges *, char *out, size_t sz);

/* Admin actions: a notice to everyone (its id in *id), the red dot. */
int	badges_notice(struct app *, const char *title, const char *body,
	    long long *id);
int	badges_light(struct app *);

#endif
