/* profileview.h -- what the profile page and the topic page show, loaded
 * before they render (web/view_social.h). */
#ifndef TALLY_PROFILEVIEW_H
#define TALLY_PROFILEVIEW_H

#include "social/account.h"
#include "social/pcache.h"
#include "social/people.h"
#include "social/postlist.h"
#include "social/timeline.h"

enum { PROFILE_POSTS, PROFILE_FOLLOWERS, PROFILE_FOLLOWING, PROFILE_LIKES,
    PROFILE_NCOUNTS };

/* The counter family of each count of a profile. */
extern const enum family profile_fams[PROFILE_NCOUNTS];

struct profile_view {
	struct account		 u;
	struct count		 n[PROFILE_NCOUNTS];	/* of keys */
	struct delta		 keys[PROFILE_NCOUNTS];
	int			 self;		/* the viewer's own */
	int			 following;	/* the viewer follows u */
	int			 visit_due;	/* u, followed, posted since the
						 * viewer's last visit (or the
						 * follow): profileview_visited()
						 * has a marker to move */
	long long		 seen_upto;	/* the newest of u's posts
						 * when the page read them:
						 * where the marker moves (a
						 * post published while the
						 * page was built is unread) */
	struct post_cards	 all;		/* owns the posts, then the
						 * drafts: one list, so that
						 * their counts come in one
						 * round trip */
	struct post_cards	 drafts;	/* own profile, first page; */
	int			 drafts_more;	/* older drafts: /drafts */
	struct post_cards	 posts;		/* both views into all */
	long long		 page;
	int			 more;		/* a next page exists */
};

/* Page `page` of the profile of login (folded) as viewer (0: nobody)
 * sees it, but for the counts of posts and of the profile (keys into n):
 * the page reads those with its badges in one round trip (web/layout.h,
 * layout_load_cards).  In parts.  First the Redis part, in steps so that
 * the page can queue its own commands in the same round trip (its
 * session's copy): profileview_send() queues the profile's GET
 * (pcache.h), and the timeline's page when this process knows the
 * login's id; profileview_read() reads their replies (it sends
 * nothing); profileview_end() fills v->u and the page of ids (n of
 * them; -1 when they could not be read; from SQLite when the id was not
 * known), and may send commands (a rebuild); 1, 0 no such user, -1 when
 * the profile could not be read.  A queue read and
 * not ended is freed with profileview_drop().  Then
 * profileview_rest_took(): the rest, from SQLite, for the v->u that the
 * first filled (the page keeps nothing of it: web/keep.h); 1, or -1. */
struct profile_q {
	struct pcache_q	 pq;
	struct tl_q	 tq;
	long long	 uid;		/* the login's id as this process
					   knew it, or 0 */
	long long	 page;
	int		 per;
};
void	profileview_send(struct app *, const char *login, long long page,
	    int per, struct profile_q *);
void	profileview_read(struct app *, struct profile_q *);
int	profileview_end(struct app *, struct profile_q *,
	    struct profile_view *, long long *ids, int *n);
void	profileview_drop(struct profile_q *);
/* profileview_rest_took()'s statements sent ahead (store/dbq.h: on
 * PostgreSQL, with a reader group's others), for the profile of uid,
 * its page of ids and viewer: their tickets into t (0: not sent).
 * profileview_rest_took() reads the rest: from the tickets in t, which
 * the caller passes only for the very uid (v->u.id), ids and viewer
 * they were sent for (else zeros), or by running the statements. */
void	profileview_rest_send(struct app *, long long uid, long long viewer,
	    const long long *ids, int n, int t[2]);
int	profileview_rest_took(struct app *, const int t[2], long long viewer,
	    long long page, int per, const long long *ids, int n,
	    struct profile_view *);
void	profileview_free(struct profile_view *);
/* viewer opened author's profile v, whose visit_due was set: their posts
 * up to v->seen_upto are read (the marker moves; it only ever moves
 * forward). */
void	profileview_visited(struct app *, long long viewer,
	    const struct profile_view *v);

struct topic_view {
	long long		 id;
	char			 slug[40];
	struct count		 posts;		/* of key */
	struct delta		 key;
	struct people		 best;		/* num: rating in the topic */
	struct post_cards	 cards;
	long long		 page;
	int			 more;
};

/* Loads page `page` of the topic named slug as viewer (0: nobody) sees
 * it, but for the counts (the posts', and the topic's: key into posts),
 * which the page reads with its badges (layout_load_cards).  1, 0 no such
 * topic, -1 on error. */
int	profileview_topic_load(struct app *, const char *slug, long long viewer,
	    long long page, int per, struct topic_view *);
void	profileview_topic_free(struct topic_view *);

#endif
