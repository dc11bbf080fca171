/* counters.h -- the catalog of every counter family and the universal
 * formula (a counter moves by new - old of a row's contribution), in
 * exactly one place.
 *
 * A counter is (family, key).  Each family counts some truth rows: the
 * catalog gives, per kind of row it counts, a key function and a value
 * function over the row's state.  When a row changes from old to new
 * (old absent on create, new absent on delete), the formula yields
 *     delta[key(old)] -= value(old);  delta[key(new)] += value(new)
 * for every rule of that row kind, merged by counter, zeros dropped.
 * Nothing else in tally computes a counter change: no "+1" by hand.
 *
 * A row's state carries what the values depend on: a post's visibility
 * (published and not deleted) and its like count, so a post that is
 * unpublished, deleted, restored or moved takes its likes' contribution
 * to "likes" and "rating" with it.
 */
#ifndef TALLY_COUNTERS_H
#define TALLY_COUNTERS_H

#include <stddef.h>

#include "store/sql.h"

enum family {
	FAM_USER_POSTS,		/* per user: visible posts */
	FAM_USER_FOLLOWERS,	/* per user: follows of them */
	FAM_USER_FOLLOWING,	/* per user: their follows */
	FAM_USER_LIKES,		/* per user: likes received on visible posts */
	FAM_POST_LIKES,		/* per post: likes */
	FAM_POST_COMMENTS,	/* per post: comments not deleted */
	FAM_POST_REPOSTS,	/* per post: reposts */
	FAM_POST_VIEWS,		/* per post: views (no truth rows) */
	FAM_TOPIC_POSTS,	/* per topic: visible posts */
	FAM_UT_POSTS,		/* per (user, topic): visible posts */
	FAM_UT_RATING,		/* per (user, topic): likes of visible posts */
	FAM_USER_UNREAD,	/* per user: unread notifications */
	FAM__MAX
};

enum obj {
	OBJ_USER,		/* key: user id */
	OBJ_POST,		/* key: post id */
	OBJ_TOPIC,		/* key: topic id */
	OBJ_USER_TOPIC,		/* key: user id, topic id */
};

struct family_info {
	const char	*name;		/* counters.name in SQLite */
	enum obj	 obj;
	const char	*field;		/* field in the object's Redis hash */
	enum stmt	 recount;	/* key1[, key2], value of each counter */
	enum stmt	 recount_one;	/* the value of key ?1[, ?2] */
};

/* recount and recount_one of a family without truth rows (views):
 * nothing to recount it from. */
#define NO_RECOUNT	STMT__MAX

extern const struct family_info families[FAM__MAX];

enum row_kind {
	ROW_POST,	/* id=post, user=author, topic, visible, likes */
	ROW_FOLLOW,	/* user=follower, other=followee */
	ROW_LIKE,	/* id=post, user=liker, other=author, topic, visible */
	ROW_REPOST,	/* id=post, user=reposter, other=author */
	ROW_COMMENT,	/* id=post, user=commenter, other=author,
			   visible = not deleted */
	ROW_NOTE,	/* user=recipient, visible = unread */
};

struct row {
	enum row_kind	kind;
	long long	id;
	long long	user;
	long long	other;
	long long	topic;
	int		visible;
	long long	likes;
};

struct delta {
	enum family	fam;
	long long	k1;
	long long	k2;	/* topic of (user, topic) counters, else 0 */
	long long	d;
	long long	owner;	/* a post's counters: its author, whose Redis
				   bucket they share (cstore.h); else 0.
				   Not part of the counter's name. */
};

#define DELTA_MAX	16

/* The universal formula: deltas for a row going from old to new (either
 * may be NULL, not both; both of the same kind).  Writes at most
 * DELTA_MAX merged non-zero deltas into out and returns their number. */
int	counters_deltas(const struct row *old, const struct row *new,
	    struct delta *out);

/* The key string of a counter in SQLite ("42" or "42:7"). */
void	counters_key(const struct delta *, char *out, size_t sz);

/* Family by its SQLite name; FAM__MAX when unknown. */
enum family counters_family(const char *);

#endif
