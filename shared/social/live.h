/* live.h -- live badges: which changes move whose badges, and whom a
 * taken batch of changes reaches.
 *
 * Every change that moves a user's badges says so after it is written
 * (store/liveq.h): an unread count that moved (count/capply.c, for the
 * user whose FAM_USER_UNREAD changed: a like, comment, repost or follow
 * notified or withdrawn, a read, a read-all, a delete), a read marker or
 * a follow (bcache_forget()), a notice or the red dot (everyone), an
 * author's post published or deleted (each follower whose stream is
 * open, told by the fan-out's bump: bcache_readers_changed()).  The
 * publisher (handlers/live.c) takes what came, coalesced over a few
 * milliseconds, keeps the users who have a stream open (liveq_members()),
 * reads each one's badges (badges.h: the cache, so mostly one round trip)
 * and publishes them to the user's channel in nginx.
 *
 * Nothing exact depends on it: a change that is not told (Redis down, the
 * queue capped, a publish refused) is corrected by the page's next poll
 * of /badges.json, which the page keeps, slowly, while a stream is open.
 */
#ifndef TALLY_LIVE_H
#define TALLY_LIVE_H

#include "store/app.h"
#include "store/liveq.h"
#include "store/pubsub.h"

/* uid's badges moved: told to its stream, if one is open (asked first:
 * store/liveq.h).  Never fails the caller. */
void	live_user(struct app *, long long uid);
/* uid opened a stream that lasts until until_ms: from now on its changes
 * are told (store/liveq.h liveq_join()).  0, or -1 (Redis down). */
int	live_join(struct app *, long long uid, long long until_ms);
/* uid's stream heard a message (nginx keeps it 10 minutes after that):
 * registered until until_ms again (store/liveq.h liveq_renew()).  0, or
 * -1 (Redis down). */
int	live_renew(struct app *, long long uid, long long until_ms);
/* The process's publisher to nginx's live channels (store/pubsub.h), its
 * connection opened at the first call; NULL while nginx's socket is not
 * there or the publisher cannot be made. */
struct pubsub *live_publisher(struct app *);
/* uid's sessions ended, one (a logout) or all but one (a new password):
 * every stream of uid is closed now, nginx's channel deleted (a stream's
 * session is checked when it opens, and streams last 10 minutes).  The
 * pages of the sessions still valid open theirs again (tally.js; nchan
 * sends them the badges first); an ended one is refused (401), and its
 * page hears nothing more.  On a machine without nginx's publisher (a
 * handler host), through the queue ("c<uid>"): the tally-live beside
 * nginx closes them.  Never fails the caller (logged). */
void	live_close(struct app *, long long uid);
/* Everyone's (a notice, the red dot). */
void	live_everyone(struct app *);
/* The users of b with an open stream: b's users, everyone for "g", the
 * followers of b's authors ("a", queued by an older tally: a post's
 * followers are now told by its fan-out, each one whose stream is open,
 * social/bcache.h) -- each among live[0..nlive) (each once).
 * Into *out (malloc'd); how many, or -1 (SQLite failed). */
int	live_targets(struct app *, const struct liveq_batch *b,
	    const long long *live, int nlive, long long **out);

#endif
