/* profileview.c -- the profile and topic page models; see
 * profileview.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "count/lb.h"
#include "social/drafts.h"
#include "social/follow.h"
#include "social/notify.h"
#include "social/pcache.h"
#include "social/profileview.h"
#include "social/timeline.h"
#include "store/sql.h"

const enum family profile_fams[PROFILE_NCOUNTS] = {
	[PROFILE_POSTS] = FAM_USER_POSTS,
	[PROFILE_FOLLOWERS] = FAM_USER_FOLLOWERS,
	[PROFILE_FOLLOWING] = FAM_USER_FOLLOWING,
	[PROFILE_LIKES] = FAM_USER_LIKES,
};

/* Whether viewer follows author and has a visit to mark (author posted
 * since the follow and the last visit): one read.  Only a followed
 * author's marker counts (the followed badge starts after the later of
 * the two: STMT_FOLLOWED_MARKS), so the visit of anyone else writes
 * nothing.  0, or -1 on a SQLite error. */
static struct dbq *
visitor_stmt(struct app *a, long long uid, long long viewer)
{
	struct dbq *s = dbq_stmt(a->db, STMT_AUTHOR_SEEN);

	if (s != NULL) {
		dbq_bind_i64(s, 1, uid);
		dbq_bind_i64(s, 2, viewer);
	}
	return s;
}

static int
visitor_state(struct app *a, int ticket, long long viewer,
    struct profile_view *v)
{
	struct dbq *s = NULL;
	int rc;

	if (ticket > 0)
		s = dbq_ahead_take(a->db, STMT_AUTHOR_SEEN, ticket);
	if (s == NULL && (s = visitor_stmt(a, v->u.id, viewer)) == NULL)
		return -1;
	if ((rc = dbq_step(s)) == DBQ_ROW) {
		v->following = dbq_i64(s, 1) >= 0;
		v->seen_upto = dbq_i64(s, 0);
		v->visit_due = v->following && v->seen_upto > dbq_i64(s, 1);
	}
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : 0;
}

void
profileview_rest_send(struct app *a, long long uid, long long viewer,
    const long long *ids, int n, int t[2])
{
	t[0] = t[1] = 0;
	if (!dbq_ahead_ok(a->db))
		return;
	if (viewer != 0 && viewer != uid)
		t[0] = dbq_ahead_send(a->db, visitor_stmt(a, uid, viewer));
	t[1] = postlist_send(a, ids, n, viewer, PC_VISIBLE);
}

int
profileview_rest_took(struct app *a, const int t[2], long long viewer,
    long long page, int per, const long long *ids, int n,
    struct profile_view *v)
{
	long long uid = v->u.id;
	int i, np, nd;

	v->page = page;
	v->self = viewer != 0 && viewer == uid;
	if (n < 0 || (viewer != 0 && !v->self &&
	    visitor_state(a, t[0], viewer, v) == -1) ||
	    postlist_read_took(a, t[1], ids, n, viewer, PC_VISIBLE,
	    &v->posts) == -1 ||
	    (v->self && page == 1 && drafts_read(a, uid, 0, DRAFTS_PAGE,
	    &v->drafts, &v->drafts_more) == -1)) {
		postlist_free(&v->posts);
		postlist_free(&v->drafts);
		return -1;
	}
	v->more = n == per;
	postlist_marks(a, v->drafts.v, v->drafts.n, viewer);
	np = v->posts.n;
	nd = v->drafts.n;
	v->all = v->posts;
	postlist_append(&v->all, &v->drafts);
	v->posts = (struct post_cards){ v->all.v, np };
	v->drafts = (struct post_cards){ v->all.v + np, nd };
	for (i = 0; i < PROFILE_NCOUNTS; i++) {
		v->keys[i].fam = profile_fams[i];
		v->keys[i].k1 = uid;
	}
	return 1;
}

void
profileview_send(struct app *a, const char *login, long long page, int per,
    struct profile_q *q)
{
	/* The timeline first (its reply is read first; its rebuild, if
	 * any, after the profile's GET), when this process knows the id. */
	q->uid = pcache_known(login);
	q->page = page;
	q->per = per;
	if (q->uid != 0)
		timeline_ids_send(a, TL_PROFILE, q->uid, page, per, &q->tq);
	pcache_send(a, login, &q->pq);
}

void
profileview_read(struct app *a, struct profile_q *q)
{
	if (q->uid != 0)
		timeline_ids_read(a, &q->tq);
	pcache_read(a, &q->pq);
}

void
profileview_drop(struct profile_q *q)
{
	if (q->uid != 0)
		timeline_ids_drop(&q->tq);
	pcache_drop(&q->pq);
}

int
profileview_end(struct app *a, struct profile_q *q, struct profile_view *v,
    long long *ids, int *np)
{
	int rc, n = -1;

	memset(v, 0, sizeof(*v));
	rc = pcache_recv(a, &q->pq, &v->u);
	if (q->uid != 0)
		n = timeline_ids_end(a, &q->tq, ids);
	/* Not known before (or changed): the page of ids from SQLite, one
	 * index range, rather than a second round trip for the timeline
	 * (issue 45: a process knows 1,024 logins at most, pcache.c, so on
	 * a site of many users this is most profiles' path).  The timeline
	 * is materialised by the process's next visit, which knows the id;
	 * nothing else reads it (the followed badges count in SQLite). */
	if (rc == 1 && v->u.id != q->uid)
		n = timeline_page_sql(a, TL_PROFILE, v->u.id, (q->page - 1) * q->per,
		    q->per, ids);
	*np = n;
	return rc;
}

void
profileview_free(struct profile_view *v)
{
	postlist_free(&v->all);
	v->drafts = v->posts = (struct post_cards){ NULL, 0 };
}

void
profileview_visited(struct app *a, long long viewer,
    const struct profile_view *v)
{
	notify_marker_put(a, viewer, "author", v->u.id, v->seen_upto);
}

/* The topic's best authors by rating (likes of their visible posts in
 * it), from the topic's leaderboard. */
static int
best_authors(struct app *a, long long tid, struct people *out)
{
	long long uids[5], vals[5];
	int n = lb_top(a, FAM_UT_RATING, tid, 5, uids, vals);

	return people_by_ids(a, uids, vals, n > 0 ? n : 0, out);
}

int
profileview_topic_load(struct app *a, const char *slug, long long viewer,
    long long page, int per, struct topic_view *v)
{
	long long *ids;
	struct dbq *s;
	int n = 0, rc, pub;

	memset(v, 0, sizeof(*v));
	v->page = page;
	snprintf(v->slug, sizeof(v->slug), "%s", slug);
	if ((s = dbq_stmt(a->db, STMT_TOPIC_BY_SLUG)) == NULL)
		return -1;
	dbq_bind_text(s, 1, slug, -1);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		v->id = dbq_i64(s, 0);
	dbq_done(s);
	if (rc != DBQ_ROW)
		return rc == DBQ_DONE ? 0 : -1;
	/* A topic a draft created is not public until a post in it is
	 * (general always is). */
	if (strcmp(slug, "general") != 0) {
		if ((s = dbq_stmt(a->db, STMT_TOPIC_PUBLIC)) == NULL)
			return -1;
		dbq_bind_i64(s, 1, v->id);
		rc = dbq_step(s);
		pub = rc == DBQ_ROW && dbq_int(s, 0) == 1;
		dbq_done(s);
		if (rc != DBQ_ROW)
			return -1;
		if (!pub)
			return 0;
	}
	if ((s = dbq_stmt(a->db, STMT_TOPIC_SQL)) == NULL)
		return -1;
	ids = xcalloc((size_t)per, sizeof(*ids));
	dbq_bind_i64(s, 1, v->id);
	dbq_bind_int(s, 2, per);
	dbq_bind_i64(s, 3, (page - 1) * per);
	while (n < per && (rc = dbq_step(s)) == DBQ_ROW)
		ids[n++] = dbq_i64(s, 0);
	dbq_done(s);
	v->more = n == per;
	if (rc == DBQ_ERR || postlist_read(a, ids, n, viewer, PC_VISIBLE,
	    &v->cards) == -1 || best_authors(a, v->id, &v->best) == -1) {
		free(ids);
		profileview_topic_free(v);
		return -1;
	}
	free(ids);
	v->key.fam = FAM_TOPIC_POSTS;
	v->key.k1 = v->id;
	return 1;
}

void
profileview_topic_free(struct topic_view *v)
{
	people_free(&v->best);
	postlist_free(&v->cards);
}
