/* render.h -- HTML pieces shared by the social pages: a post as an
 * <article data-post-id>, lists of posts, counts, times and pagers.  They
 * render models already loaded (social/postlist.h) and do no I/O.  All
 * output goes through html.h (escaped). */
#ifndef TALLY_RENDER_H
#define TALLY_RENDER_H

#include "social/postlist.h"
#include "web/req.h"

#define RENDER_FULL	0x01	/* the post page: no "comments" link */

/* A post as an article with its counts, and for a signed-in viewer its
 * like and repost buttons: they belong to the form render_posts_in()
 * puts around a list, so render a post through that. */
void	render_post(struct req *, const struct post_card *, unsigned flags);
/* n posts inside one form that carries the csrf (and back) field for
 * every item's buttons. */
void	render_posts_in(struct req *, const struct post_card *, int n,
	    unsigned flags);
/* One counter as <span data-counter="NAME">N</span>, with an optional
 * data-post-id / data-login / data-topic attribute; a count that could
 * not be read as "?" with data-failed="1". */
void	render_count(struct req *, const char *name, const struct count *,
	    const char *attr, const char *attrval);
/* word, with an "s" unless the count is exactly 1 ("1 like", "2 likes",
 * "? likes"). */
void	render_plural(struct req *, const struct count *, const char *word);
/* The posts of a list, in its order (render_posts_in). */
void	render_posts(struct req *, const struct post_cards *);
/* <a href="/u/LOGIN">@LOGIN</a> */
void	render_at_login(struct req *, const char *login);
/* <time datetime="..."> for a millisecond timestamp: "N min ago" (the
 * exact time on hover) while recent, else the date. */
void	render_time(struct req *, long long ms);
/* The same as plain text, for lists: "N min ago" or the date. */
void	render_ago(struct req *, long long ms);
/* <a rel="REL" href="PATH?[q=Q&]page=N">LABEL</a> (q NULL or "": none). */
void	render_page_link(struct req *, const char *rel, const char *path,
	    const char *q, long long page, const char *label);
/* Older/newer links for ?page=N of path. */
void	render_pager(struct req *, const char *path, long long page,
	    int has_more);
/* The follow toggle of login: "Follow", or "Following" (pressed) that
 * unfollows. */
void	render_follow(struct req *, const char *login, int following);
/* The same, answering to back (a path on this site) rather than to the
 * page's own address; NULL: the page's. */
void	render_follow_to(struct req *, const char *login, int following,
	    const char *back);
/* The compose form (new post). */
void	render_compose(struct req *);

#endif
