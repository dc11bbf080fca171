/* render.h -- HTML pieces shared by the social pages: a post as an
 * <article data-post-id>, lists of posts from timeline ids, people lists,
 * times and pagers.  All output goes through html.h (escaped). */
#ifndef TALLY_RENDER_H
#define TALLY_RENDER_H

#include "social/post.h"
#include "web/req.h"

#define RENDER_FULL	0x01	/* the post page: no "comments" link */

/* A post as an article; counts are its likes, comments, reposts and
 * views (NULL: read them now). */
void	render_post(struct req *, const struct post *, unsigned flags,
	    const long long *counts);
/* One counter as <span data-counter="NAME">N</span>, with an optional
 * data-post-id / data-login / data-topic attribute. */
void	render_count(struct req *, const char *name, long long v,
	    const char *attr, const char *attrval);
/* Renders the visible posts among ids (newest first); with reader != 0,
 * only the reader's own posts and those of people they follow.
 * Returns how many were rendered, or -1 (500 sent). */
int	render_posts(struct req *, const long long *ids, int n,
	    long long reader);
/* <time datetime="..."> for a millisecond timestamp. */
void	render_time(struct req *, long long ms);
/* Older/newer links for ?page=N of path. */
void	render_pager(struct req *, const char *path, long long page,
	    int has_more);
/* The compose form (new post). */
void	render_compose(struct req *);
/* A JSON array of ids, for binding to json_each(). */
char	*render_ids_json(const long long *ids, int n);

#endif
