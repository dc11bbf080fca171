/* posting.h -- actions on posts, topics, likes, reposts and comments.
 *
 * Every change is one BEGIN IMMEDIATE transaction that reads the row's
 * old state, validates (author, visibility), writes with a statement that
 * says what really changed (ON CONFLICT DO NOTHING / WHERE old state /
 * RETURNING), and commits before anything is sent to Redis; the timeline
 * effects (fanout.h) follow from the (old, new) visibility, and the
 * counter deltas from the universal formula (counters.h) over the
 * (old, new) row states, applied to Redis after the commit (cstore.h).
 */
#ifndef TALLY_POSTING_H
#define TALLY_POSTING_H

#include "store/app.h"

/* Outcomes of an action, mapped to HTTP by the pages. */
enum post_rc {
	POST_OK = 0,		/* done (or already so: idempotent) */
	POST_ERR = -1,		/* database error: 500 */
	POST_NOTFOUND = -2,	/* 404 */
	POST_FORBIDDEN = -3,	/* 403 */
};

/* Creates a post; its id goes in *id.  Publishing fans it out. */
int	posting_create(struct app *, long long uid, const char *slug,
	    const char *body, int publish, long long *id);
/* Edits body, topic and publish state; author only.  slug NULL keeps
 * the topic, publish -1 the state (a client that sends the body alone
 * neither publishes a draft nor moves the post); *visible (NULL: not
 * wanted) says whether the post is published after it. */
int	posting_edit(struct app *, long long id, long long uid, const char *body,
	    const char *slug, int publish, int *visible);
/* Soft delete by the author or an admin. */
/* Whether uid may edit post id, as posting_edit() decides it (its read
 * outside any transaction: posting_edit() decides again): POST_OK,
 * POST_NOTFOUND, POST_FORBIDDEN or POST_ERR.  Asked before anything an
 * edit spends or tells (a new topic's allowance, whether a topic
 * exists) is looked at for another's post. */
int	posting_edit_check(struct app *, long long id, long long uid);
int	posting_delete(struct app *, long long id, long long uid, int is_admin);

/* Likes, unlikes and reposts of a visible post; idempotent per user. */
int	posting_like(struct app *, long long id, long long uid);
int	posting_unlike(struct app *, long long id, long long uid);
int	posting_repost(struct app *, long long id, long long uid);
int	posting_unrepost(struct app *, long long id, long long uid);

/* Adds a comment to a visible post; its id goes in *cid. */
int	posting_comment(struct app *, long long id, long long uid,
	    const char *body, long long *cid);
/* A view of post id by user uid (0: anonymous, known by addr): counted
 * when it is this viewer's first in VIEW_WINDOW_MS (docs/INTERFACE.md §2,
 * "What a view is").  Views have no truth rows: the counter is the record, kept
 * in Redis and flushed like any other; reconciliation has nothing to
 * recount them from and leaves them as they are.  The author's own views
 * are never counted (the caller, who knows the author, skips them).
 * An anonymous address (an IPv6 client's /64: req_client_key()) counts
 * views on VIEW_ADDR_MAX posts at most in VIEW_WINDOW_MS: what bounds
 * the Redis memory of view keys to VIEW_ADDR_MAX + 1 keys of ~100 bytes
 * an address a half hour, however many posts it asks for.
 * 1 counted, 0 not. */
#define VIEW_WINDOW_MS	"1800000"
#define VIEW_ADDR_MAX	100
int	posting_view(struct app *, long long id, long long author, long long uid,
	    const char *addr);
/* The same, a signed-in viewer's script queued, not waited for, so that
 * the page's reads queued after it go in its round trip and see the view
 * (one server): 1 queued (read its reply with posting_view_recv(): 1
 * counted, 0 not), 0 nothing queued (done, or nothing to count). */
int	posting_view_send(struct app *, long long id, long long author,
	    long long uid, const char *addr);
int	posting_view_recv(struct app *);
/* Deletes a comment: its author or an admin.  *post_id gets its post. */
int	posting_comment_delete(struct app *, long long cid, long long uid,
	    int is_admin, long long *post_id);

/* 1 when topic slug exists, 0 not (a post would create it), -1 error. */
int	posting_topic_exists(struct app *, const char *slug);

#endif
