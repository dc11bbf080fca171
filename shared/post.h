/* post.h -- posts, topics, likes, reposts and comments: the truth rows.
 *
 * Every change is one BEGIN IMMEDIATE transaction that reads the row's
 * old state, validates (author, visibility), writes with a statement that
 * says what really changed (ON CONFLICT DO NOTHING / WHERE old state /
 * RETURNING), and commits before anything is sent to Redis; the timeline
 * effects (fanout.h) follow from the (old, new) visibility, and the
 * counter deltas from the universal formula (counters.h) over the
 * (old, new) row states, applied to Redis after the commit (cstore.h).
 * A post is visible when status = 1 (published) and is_deleted = 0.
 */
#ifndef TALLY_POST_H
#define TALLY_POST_H

#include "app.h"

struct post {
	long long	 id;
	long long	 user_id;
	long long	 topic_id;
	long long	 created_at;
	long long	 published_at;	/* 0 when never published */
	long long	 likes;		/* like_count: state the formula reads */
	int		 status;	/* 1 published, 0 draft */
	int		 is_deleted;
	char		 login[40];
	char		 name[264];
	char		 slug[40];
	char		*body;		/* owned; post_free() */
};

#define POST_VISIBLE(p)	((p)->status == 1 && !(p)->is_deleted)

/* Outcomes of an action, mapped to HTTP by the pages. */
enum post_rc {
	POST_OK = 0,		/* done (or already so: idempotent) */
	POST_ERR = -1,		/* database error: 500 */
	POST_NOTFOUND = -2,	/* 404 */
	POST_FORBIDDEN = -3,	/* 403 */
};

/* Reads a post; 1 found, 0 absent, -1 error.  post_free() after 1. */
int	post_get(struct db *, long long id, struct post *);
/* Fills p from a row of a POST_COLS statement (sql.c). */
void	post_from_row(sqlite3_stmt *, struct post *);
void	post_free(struct post *);
/* Whether viewer (0: nobody) may see p: visible, or the author's own. */
int	post_can_see(const struct post *, long long viewer);

/* Creates a post; its id goes in *id.  Publishing fans it out. */
int	post_create(struct app *, long long uid, const char *slug,
	    const char *body, int publish, long long *id);
/* Edits body, topic and publish state; author only. */
int	post_edit(struct app *, long long id, long long uid, const char *body,
	    const char *slug, int publish);
/* Soft delete by the author or an admin. */
int	post_delete(struct app *, long long id, long long uid, int is_admin);

/* Likes, unlikes and reposts of a visible post; idempotent per user. */
int	post_like(struct app *, long long id, long long uid);
int	post_unlike(struct app *, long long id, long long uid);
int	post_repost(struct app *, long long id, long long uid);

/* Adds a comment to a visible post; its id goes in *cid. */
int	post_comment(struct app *, long long id, long long uid,
	    const char *body, long long *cid);
/* Counts one view of a post (no truth row: Redis only, then flushed). */
void	post_view(struct app *, long long id);
/* Deletes a comment: its author or an admin.  *post_id gets its post. */
int	post_comment_delete(struct app *, long long cid, long long uid,
	    int is_admin, long long *post_id);

#endif
