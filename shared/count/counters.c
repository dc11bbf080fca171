/* counters.c -- the counter catalog and the universal formula. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "count/counters.h"

/* The recounts' text is the statement table's (store/sql.c). */
const struct family_info families[FAM__MAX] = {
	{ "user_posts", OBJ_USER, "posts",	/* FAM_USER_POSTS */
	  STMT_RECOUNT_USER_POSTS, STMT_RECOUNT_ONE_USER_POSTS },
	{ "user_followers", OBJ_USER, "followers",	/* FAM_USER_FOLLOWERS */
	  STMT_RECOUNT_USER_FOLLOWERS, STMT_RECOUNT_ONE_USER_FOLLOWERS },
	{ "user_following", OBJ_USER, "following",	/* FAM_USER_FOLLOWING */
	  STMT_RECOUNT_USER_FOLLOWING, STMT_RECOUNT_ONE_USER_FOLLOWING },
	{ "user_likes", OBJ_USER, "likes",	/* FAM_USER_LIKES */
	  STMT_RECOUNT_USER_LIKES, STMT_RECOUNT_ONE_USER_LIKES },
	{ "post_likes", OBJ_POST, "likes",	/* FAM_POST_LIKES */
	  STMT_RECOUNT_POST_LIKES, STMT_RECOUNT_ONE_POST_LIKES },
	{ "post_comments", OBJ_POST, "comments",	/* FAM_POST_COMMENTS */
	  STMT_RECOUNT_POST_COMMENTS, STMT_RECOUNT_ONE_POST_COMMENTS },
	{ "post_reposts", OBJ_POST, "reposts",	/* FAM_POST_REPOSTS */
	  STMT_RECOUNT_POST_REPOSTS, STMT_RECOUNT_ONE_POST_REPOSTS },
	{ "post_views", OBJ_POST, "views",	/* FAM_POST_VIEWS */
	  NO_RECOUNT, NO_RECOUNT },
	{ "topic_posts", OBJ_TOPIC, "posts",	/* FAM_TOPIC_POSTS */
	  STMT_RECOUNT_TOPIC_POSTS, STMT_RECOUNT_ONE_TOPIC_POSTS },
	{ "user_topic_posts", OBJ_USER_TOPIC, "posts",	/* FAM_UT_POSTS */
	  STMT_RECOUNT_UT_POSTS, STMT_RECOUNT_ONE_UT_POSTS },
	{ "user_topic_rating", OBJ_USER_TOPIC, "rating",	/* FAM_UT_RATING */
	  STMT_RECOUNT_UT_RATING, STMT_RECOUNT_ONE_UT_RATING },
	{ "user_unread", OBJ_USER, "unread",	/* FAM_USER_UNREAD */
	  STMT_RECOUNT_USER_UNREAD, STMT_RECOUNT_ONE_USER_UNREAD },
};

/* The rules: which family counts which kind of row, keyed and valued how. */
struct rule {
	enum family	  fam;
	enum row_kind	  kind;
	void		(*key)(const struct row *, long long *, long long *);
	long long	(*value)(const struct row *);
};

static void key_user(const struct row *r, long long *a, long long *b)
{ *a = r->user; *b = 0; }
static void key_other(const struct row *r, long long *a, long long *b)
{ *a = r->other; *b = 0; }
static void key_id(const struct row *r, long long *a, long long *b)
{ *a = r->id; *b = 0; }
static void key_topic(const struct row *r, long long *a, long long *b)
{ *a = r->topic; *b = 0; }
static void key_user_topic(const struct row *r, long long *a, long long *b)
{ *a = r->user; *b = r->topic; }
static void key_other_topic(const struct row *r, long long *a, long long *b)
{ *a = r->other; *b = r->topic; }

static long long val_one(const struct row *r) { (void)r; return 1; }
static long long val_visible(const struct row *r) { return r->visible ? 1 : 0; }
static long long val_visible_likes(const struct row *r)
{ return r->visible ? r->likes : 0; }

static const struct rule rules[] = {
	{ FAM_USER_POSTS, ROW_POST, key_user, val_visible },
	{ FAM_TOPIC_POSTS, ROW_POST, key_topic, val_visible },
	{ FAM_UT_POSTS, ROW_POST, key_user_topic, val_visible },
	{ FAM_USER_LIKES, ROW_POST, key_user, val_visible_likes },
	{ FAM_UT_RATING, ROW_POST, key_user_topic, val_visible_likes },
	{ FAM_USER_FOLLOWERS, ROW_FOLLOW, key_other, val_one },
	{ FAM_USER_FOLLOWING, ROW_FOLLOW, key_user, val_one },
	{ FAM_POST_LIKES, ROW_LIKE, key_id, val_one },
	{ FAM_USER_LIKES, ROW_LIKE, key_other, val_visible },
	{ FAM_UT_RATING, ROW_LIKE, key_other_topic, val_visible },
	{ FAM_POST_REPOSTS, ROW_REPOST, key_id, val_one },
	{ FAM_POST_COMMENTS, ROW_COMMENT, key_id, val_visible },
	{ FAM_USER_UNREAD, ROW_NOTE, key_user, val_visible },
};

/* The author of the post a row is about (0: the row is about no post). */
static long long
row_author(const struct row *r)
{
	switch (r->kind) {
	case ROW_POST:
		return r->user;
	case ROW_LIKE:
	case ROW_REPOST:
	case ROW_COMMENT:
		return r->other;
	default:
		return 0;
	}
}

static int
add(struct delta *out, int n, enum family fam, long long k1, long long k2,
    long long d, const struct row *r)
{
	int i;

	if (d == 0)
		return n;
	for (i = 0; i < n; i++)
		if (out[i].fam == fam && out[i].k1 == k1 && out[i].k2 == k2) {
			out[i].d += d;
			return n;
		}
	assert(n < DELTA_MAX);	/* 2 x 5 rules at most */
	out[n].fam = fam;
	out[n].k1 = k1;
	out[n].k2 = k2;
	out[n].d = d;
	out[n].owner = families[fam].obj == OBJ_POST ? row_author(r) : 0;
	return n + 1;
}

int
counters_deltas(const struct row *old, const struct row *new, struct delta *out)
{
	const struct row *any = old != NULL ? old : new;
	long long k1, k2, want[FAM__MAX] = { 0 }, got[FAM__MAX] = { 0 };
	enum row_kind kind;
	size_t i;
	int n = 0, j, m = 0;

	assert(any != NULL);		/* a change has a before or an after */
	kind = any->kind;
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (rules[i].kind != kind)
			continue;
		if (old != NULL) {
			rules[i].key(old, &k1, &k2);
			n = add(out, n, rules[i].fam, k1, k2, -rules[i].value(old),
			    old);
			want[rules[i].fam] -= rules[i].value(old);
		}
		if (new != NULL) {
			rules[i].key(new, &k1, &k2);
			n = add(out, n, rules[i].fam, k1, k2, rules[i].value(new),
			    new);
			want[rules[i].fam] += rules[i].value(new);
		}
	}
	for (j = 0; j < n; j++)		/* drop what cancelled out */
		if (out[j].d != 0)
			out[m++] = out[j];
	/* The deltas of each family sum to new - old of its rules. */
	for (j = 0; j < m; j++)
		got[out[j].fam] += out[j].d;
	for (j = 0; j < FAM__MAX; j++)
		assert(got[j] == want[j]);
	return m;
}

/* buf_fmt_ll(), not snprintf(): the flusher writes one a counter, and
 * snprintf() was a tenth of its taking thread's time. */
void
counters_key(const struct delta *d, char *out, size_t sz)
{
	char buf[2 * LL_CHARS];
	size_t n = buf_fmt_ll(buf, d->k1);

	if (families[d->fam].obj == OBJ_USER_TOPIC) {
		buf[n++] = ':';
		n += buf_fmt_ll(buf + n, d->k2);
	}
	if (sz == 0)
		return;
	if (n >= sz)
		n = sz - 1;	/* cut short, as snprintf() would */
	memcpy(out, buf, n);
	out[n] = '\0';
}

enum family
counters_family(const char *name)
{
	int i;

	for (i = 0; i < FAM__MAX; i++)
		if (strcmp(families[i].name, name) == 0)
			return (enum family)i;
	return FAM__MAX;
}
