/* post.h -- a post: its truth row as read, and who may see it.
 * A post is visible when status = 1 (published) and is_deleted = 0.
 * The actions that change posts are in posting.h.
 */
#ifndef TALLY_POST_H
#define TALLY_POST_H

#include "store/app.h"
#include "store/dbq.h"

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

/* Reads a post; 1 found, 0 absent, -1 error.  post_free() after 1. */
int	post_get(struct db *, long long id, struct post *);
/* Reads what an action on a post needs (a like's, a comment's): its id,
 * author, topic and visibility, one lookup of the posts table (post_get()
 * also joins the author and the topic, and copies the body); the rest of
 * p is zero.  1 found, 0 absent, -1 error; post_free() is not needed. */
int	post_head(struct db *, long long id, struct post *);
/* The same in a write transaction that changes the post on what it read:
 * the row stays as read until the transaction ends (on PostgreSQL, whose
 * writers run at once, a row lock; store/sql.h). */
int	post_get_locked(struct db *, long long id, struct post *);
int	post_head_locked(struct db *, long long id, struct post *);
/* Fills p from a row of a POST_COLS statement (sql.c). */
void	post_from_row(struct dbq *, struct post *);
void	post_free(struct post *);
/* Whether viewer (0: nobody) may see p: visible, or the author's own. */
int	post_can_see(const struct post *, long long viewer);

#endif
