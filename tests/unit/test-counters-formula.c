/* test-counters-formula.c -- counters_deltas() against the catalog's recount: a model of the truth rows (mirrored into SQLite) through scripted and 5,000 random actions, every family compared after every step. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "count/counters.h"
#include "count/recount.h"
#include "store/db.h"
#include "store/db_int.h"
#include "store/refold.h"
#include "store/schema.h"

/*
 * The model holds the truth rows the way the schema does; every action
 * changes them as the application would (shared/social/post.c, follow.c,
 * notify.c), writes the same change into an in-memory SQLite database
 * with tally's schema, and feeds each row's (old, new) state to
 * counters_deltas(), adding the deltas to m->cnt.  After every action
 * m->cnt must equal both the catalog's own recount SQL (recount_family)
 * run on the mirror and a recount of the model rows written here.
 */

#define NU	8		/* users 1..NU */
#define NT	4		/* topics 1..NT (1 is the schema's "general") */
#define NP	40		/* posts 1..NP */
#define NC	1500		/* comments 1..NC */
#define NN	8000		/* notifications 1..NN */
#define K1	(NP + 1)	/* k1 of any counter: a user, post or topic id */
#define K2	(NT + 1)	/* k2: a topic id, or 0 */

enum note_kind { N_LIKE, N_COMMENT, N_REPOST, N_FOLLOW };

struct mpost {
	long long	user, topic, like_count;
	int		status, is_deleted;
};

struct mcomment {
	long long	post, user;
	int		is_deleted;
};

struct mnote {
	long long	user, actor, post, comment;
	int		exists, kind, is_read;
};

typedef long long grid[FAM__MAX][K1][K2];

struct model {
	struct db	db;
	long long	np, nc, nn;
	struct mpost	p[NP + 1];
	unsigned char	like[NP + 1][NU + 1];
	unsigned char	repost[NP + 1][NU + 1];
	unsigned char	follow[NU + 1][NU + 1];
	struct mcomment	c[NC + 1];
	struct mnote	n[NN + 1];
	grid		cnt;		/* the sum of every delta fed */
	grid		sql;		/* recount_family() on the mirror */
	grid		rec;		/* the model's own recount */
	int		last_n;		/* deltas of the last row change */
	long		steps, feeds;
	long		moved, hidden, shown;	/* post changes with likes */
	char		what[96];	/* the action being checked */
};

/* Users and topics of the scripted tests. */
enum { A = 1, B = 2, L1 = 3, L2 = 4, L3 = 5, F = 6 };
enum { T1 = 1, T2 = 2, T3 = 3 };

/* ---- the SQLite mirror ---- */

static void
sqlx(struct model *m, const char *sql, const long long *v, size_t n)
{
	sqlite3_stmt *s = NULL;
	size_t i;
	int rc;

	if (sqlite3_prepare_v2(m->db.h, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("prepare %s: %s", sql, sqlite3_errmsg(m->db.h));
	for (i = 0; i < n; i++)
		sqlite3_bind_int64(s, (int)i + 1, v[i]);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		fail_msg("%s: %s", sql, sqlite3_errmsg(m->db.h));
	assert_int_equal(sqlite3_changes(m->db.h), 1);
}

#define SQL(m, sql, ...) sqlx((m), (sql), (const long long[]){ __VA_ARGS__ }, \
	sizeof((const long long[]){ __VA_ARGS__ }) / sizeof(long long))

static void
sync_post(struct model *m, long long id)
{
	const struct mpost *p = &m->p[id];

	SQL(m, "UPDATE posts SET topic_id = ?2, status = ?3, is_deleted = ?4, "
	    "like_count = ?5 WHERE id = ?1", id, p->topic, p->status,
	    p->is_deleted, p->like_count);
}

/* ---- checks ---- */

static int
post_visible(const struct mpost *p)
{
	return p->status == 1 && !p->is_deleted;
}

/* Whether a counter key names an object that exists in the model. */
static void
check_key(const struct model *m, enum family f, long long k1, long long k2)
{
	long long max1 = 0, max2 = 0;

	switch (families[f].obj) {
	case OBJ_USER:		max1 = NU; break;
	case OBJ_POST:		max1 = m->np; break;
	case OBJ_TOPIC:		max1 = NT; break;
	case OBJ_USER_TOPIC:	max1 = NU; max2 = NT; break;
	}
	if (k1 < 1 || k1 > max1 || k2 < (max2 ? 1 : 0) || k2 > max2)
		fail_msg("%s: %s key %lld:%lld names no object", m->what,
		    families[f].name, k1, k2);
}

static void
check_nonneg(const struct model *m)
{
	int f, i, j;

	for (f = 0; f < FAM__MAX; f++)
		for (i = 0; i < K1; i++)
			for (j = 0; j < K2; j++)
				if (m->cnt[f][i][j] < 0)
					fail_msg("%s: %s %d:%d went negative "
					    "(%lld)", m->what, families[f].name,
					    i, j, m->cnt[f][i][j]);
}

static int
same_row(const struct row *a, const struct row *b)
{
	return a->kind == b->kind && a->id == b->id && a->user == b->user &&
	    a->other == b->other && a->topic == b->topic &&
	    a->visible == b->visible && a->likes == b->likes;
}

/* The universal formula over one row change, added to m->cnt. */
static void
feed(struct model *m, const struct row *old, const struct row *new)
{
	struct delta out[DELTA_MAX];
	int n, i, j;

	memset(out, 0, sizeof(out));
	n = counters_deltas(old, new, out);
	if (n < 0 || n > DELTA_MAX)
		fail_msg("%s: counters_deltas returned %d", m->what, n);
	if (old != NULL && new != NULL && same_row(old, new) && n != 0)
		fail_msg("%s: %d deltas for an unchanged row", m->what, n);
	for (i = 0; i < n; i++) {
		const struct delta *d = &out[i];

		if ((int)d->fam < 0 || d->fam >= FAM__MAX)
			fail_msg("%s: delta %d has family %d", m->what, i,
			    (int)d->fam);
		if (d->d == 0)
			fail_msg("%s: zero delta for %s %lld:%lld", m->what,
			    families[d->fam].name, d->k1, d->k2);
		for (j = 0; j < i; j++)
			if (out[j].fam == d->fam && out[j].k1 == d->k1 &&
			    out[j].k2 == d->k2)
				fail_msg("%s: %s %lld:%lld twice in one change",
				    m->what, families[d->fam].name, d->k1,
				    d->k2);
		check_key(m, d->fam, d->k1, d->k2);
		m->cnt[d->fam][d->k1][d->k2] += d->d;
	}
	m->last_n = n;
	m->feeds++;
	check_nonneg(m);
}

static int
take_sql(const struct delta *d, void *arg)
{
	struct model *m = arg;

	check_key(m, d->fam, d->k1, d->k2);
	if (d->d <= 0)
		fail_msg("recount of %s gave %lld for %lld:%lld",
		    families[d->fam].name, d->d, d->k1, d->k2);
	if (m->sql[d->fam][d->k1][d->k2] != 0)
		fail_msg("recount of %s gave %lld:%lld twice",
		    families[d->fam].name, d->k1, d->k2);
	m->sql[d->fam][d->k1][d->k2] = d->d;
	return 0;
}

/* Whether recount_model() below knows the family. */
static int
modelled(enum family f)
{
	switch (f) {
	case FAM_USER_POSTS: case FAM_USER_FOLLOWERS: case FAM_USER_FOLLOWING:
	case FAM_USER_LIKES: case FAM_POST_LIKES: case FAM_POST_COMMENTS:
	case FAM_POST_REPOSTS: case FAM_POST_VIEWS: case FAM_TOPIC_POSTS:
	case FAM_UT_POSTS: case FAM_UT_RATING: case FAM_USER_UNREAD:
		return 1;
	default:
		return 0;
	}
}

/* The catalog's recounts (STMT_RECOUNT_*), over the model's rows. */
static void
recount_model(struct model *m)
{
	long long i, j;
	const struct mpost *p;

	memset(m->rec, 0, sizeof(m->rec));
	for (i = 1; i <= m->np; i++) {
		p = &m->p[i];
		if (post_visible(p)) {			/* status 1, not deleted */
			m->rec[FAM_USER_POSTS][p->user][0]++;
			m->rec[FAM_TOPIC_POSTS][p->topic][0]++;
			m->rec[FAM_UT_POSTS][p->user][p->topic]++;
		}
		for (j = 1; j <= NU; j++) {
			if (m->like[i][j]) {		/* every likes row */
				m->rec[FAM_POST_LIKES][i][0]++;
				if (post_visible(p)) {	/* of visible posts */
					m->rec[FAM_USER_LIKES][p->user][0]++;
					m->rec[FAM_UT_RATING][p->user][p->topic]++;
				}
			}
			if (m->repost[i][j])
				m->rec[FAM_POST_REPOSTS][i][0]++;
		}
	}
	for (i = 1; i <= NU; i++)
		for (j = 1; j <= NU; j++)
			if (m->follow[i][j]) {		/* i follows j */
				m->rec[FAM_USER_FOLLOWING][i][0]++;
				m->rec[FAM_USER_FOLLOWERS][j][0]++;
			}
	for (i = 1; i <= m->nc; i++)
		if (!m->c[i].is_deleted)
			m->rec[FAM_POST_COMMENTS][m->c[i].post][0]++;
	for (i = 1; i <= m->nn; i++)
		if (m->n[i].exists && !m->n[i].is_read)
			m->rec[FAM_USER_UNREAD][m->n[i].user][0]++;
	/* FAM_POST_VIEWS: no truth rows, no recount. */
}

/* After every action: the formula's sums are the recount, everywhere. */
static void
check(struct model *m)
{
	long long i, j, likes;
	int f;

	memset(m->sql, 0, sizeof(m->sql));
	for (f = 0; f < FAM__MAX; f++)
		if (recount_family(&m->db, (enum family)f, take_sql, m) < 0)
			fail_msg("recount_family(%s) failed", families[f].name);
	recount_model(m);
	for (i = 1; i <= m->np; i++) {		/* like_count is the rows */
		for (likes = 0, j = 1; j <= NU; j++)
			likes += m->like[i][j];
		assert_int_equal(m->p[i].like_count, likes);
	}
	for (f = 0; f < FAM__MAX; f++)
		for (i = 0; i < K1; i++)
			for (j = 0; j < K2; j++)
				if (m->cnt[f][i][j] != m->sql[f][i][j] ||
				    m->cnt[f][i][j] != m->rec[f][i][j])
					fail_msg("after step %ld (%s): %s %lld:%lld "
					    "formula %lld, recount SQL %lld, model "
					    "recount %lld", m->steps, m->what,
					    families[f].name, i, j, m->cnt[f][i][j],
					    m->sql[f][i][j], m->rec[f][i][j]);
	m->steps++;
}

static void
expect(const struct model *m, enum family f, long long k1, long long k2,
    long long v)
{
	if (m->cnt[f][k1][k2] != v)
		fail_msg("after %s: %s %lld:%lld is %lld, expected %lld",
		    m->what, families[f].name, k1, k2, m->cnt[f][k1][k2], v);
}

/* ---- row states, as the application builds them ---- */

static struct row
post_row(const struct model *m, long long id)
{
	const struct mpost *p = &m->p[id];
	struct row r;

	memset(&r, 0, sizeof(r));
	r.kind = ROW_POST;
	r.id = id;
	r.user = p->user;
	r.topic = p->topic;
	r.visible = post_visible(p);
	r.likes = p->like_count;
	return r;
}

/* A like or repost carries the post's current author, topic, visibility. */
static struct row
pair_row(const struct model *m, enum row_kind kind, long long id, long long u)
{
	const struct mpost *p = &m->p[id];
	struct row r;

	memset(&r, 0, sizeof(r));
	r.kind = kind;
	r.id = id;
	r.user = u;
	r.other = p->user;
	r.topic = p->topic;
	r.visible = post_visible(p);
	return r;
}

static struct row
follow_row(long long follower, long long followee)
{
	struct row r;

	memset(&r, 0, sizeof(r));
	r.kind = ROW_FOLLOW;
	r.user = follower;
	r.other = followee;
	r.visible = 1;
	return r;
}

static struct row
comment_row(const struct model *m, long long cid)
{
	struct row r;

	memset(&r, 0, sizeof(r));
	r.kind = ROW_COMMENT;
	r.id = m->c[cid].post;
	r.user = m->c[cid].user;
	r.visible = !m->c[cid].is_deleted;
	return r;
}

static struct row
note_row(const struct model *m, long long nid)
{
	struct row r;

	memset(&r, 0, sizeof(r));
	r.kind = ROW_NOTE;
	r.user = m->n[nid].user;
	r.visible = !m->n[nid].is_read;
	return r;
}

/* Counts the post changes that carry likes with them. */
static void
post_change(struct model *m, const struct row *or, const struct row *nr)
{
	feed(m, or, nr);
	if (or->likes == 0)
		return;
	if (or->visible && nr->visible && or->topic != nr->topic)
		m->moved++;
	else if (or->visible && !nr->visible)
		m->hidden++;
	else if (!or->visible && nr->visible)
		m->shown++;
}

/* ---- notifications (notify.c): never for one's own action ---- */

static void
note_add(struct model *m, long long user, long long actor, int kind,
    long long post, long long comment)
{
	struct row nr;
	long long id;

	if (user == actor)
		return;
	assert_true(m->nn < NN);
	id = ++m->nn;
	m->n[id].exists = 1;
	m->n[id].user = user;
	m->n[id].actor = actor;
	m->n[id].kind = kind;
	m->n[id].post = post;
	m->n[id].comment = comment;
	m->n[id].is_read = 0;
	SQL(m, "INSERT INTO notifications(id, user_id, actor_id, kind, post_id, "
	    "comment_id, created_at) VALUES(?1, ?2, ?3, CASE ?4 WHEN 0 THEN "
	    "'like' WHEN 1 THEN 'comment' WHEN 2 THEN 'repost' ELSE 'follow' "
	    "END, nullif(?5, 0), nullif(?6, 0), 0)", id, user, actor, kind,
	    post, comment);
	nr = note_row(m, id);
	feed(m, NULL, &nr);
}

static void
note_gone(struct model *m, long long id)
{
	struct row or = note_row(m, id);

	m->n[id].exists = 0;
	SQL(m, "DELETE FROM notifications WHERE id = ?1", id);
	feed(m, &or, NULL);
}

/* The source of a notification went: it goes too, read or not. */
static void
note_withdraw(struct model *m, long long user, long long actor, int kind,
    long long post, long long comment)
{
	long long i;

	if (user == actor)
		return;
	for (i = 1; i <= m->nn; i++)
		if (m->n[i].exists && m->n[i].user == user &&
		    m->n[i].actor == actor && m->n[i].kind == kind &&
		    m->n[i].post == post && m->n[i].comment == comment)
			note_gone(m, i);
}

/* ---- the actions; each returns 0 when the application refuses it ---- */

#define WHAT(m, ...)	snprintf((m)->what, sizeof((m)->what), __VA_ARGS__)

static long long
act_create(struct model *m, long long u, long long t, int publish)
{
	struct row nr;
	long long id;

	if (m->np == NP)
		return 0;
	id = ++m->np;
	WHAT(m, "create p%lld by u%lld in t%lld %s", id, u, t,
	    publish ? "published" : "draft");
	m->p[id].user = u;
	m->p[id].topic = t;
	m->p[id].status = publish;
	m->p[id].is_deleted = 0;
	m->p[id].like_count = 0;
	SQL(m, "INSERT INTO posts(id, user_id, topic_id, body, status, "
	    "created_at, updated_at) VALUES(?1, ?2, ?3, 'b', ?4, 0, 0)", id, u,
	    t, publish);
	nr = post_row(m, id);
	feed(m, NULL, &nr);
	check(m);
	return id;
}

/* posting_edit: topic and publish state at once; not on a deleted post. */
static int
act_edit(struct model *m, long long id, long long t, int publish)
{
	struct row or, nr;

	if (id < 1 || id > m->np || m->p[id].is_deleted)
		return 0;
	WHAT(m, "edit p%lld (t%lld %s, %lld likes) to t%lld %s", id,
	    m->p[id].topic, m->p[id].status ? "published" : "draft",
	    m->p[id].like_count, t, publish ? "published" : "draft");
	or = post_row(m, id);
	m->p[id].topic = t;
	m->p[id].status = publish;
	sync_post(m, id);
	nr = post_row(m, id);
	post_change(m, &or, &nr);
	check(m);
	return 1;
}

/* Soft delete (is_deleted 0 -> 1) or restore (1 -> 0). */
static int
act_set_deleted(struct model *m, long long id, int deleted)
{
	struct row or, nr;

	if (id < 1 || id > m->np || m->p[id].is_deleted == deleted)
		return 0;
	WHAT(m, "%s p%lld (%s, %lld likes)", deleted ? "delete" : "restore",
	    id, m->p[id].status ? "published" : "draft", m->p[id].like_count);
	or = post_row(m, id);
	m->p[id].is_deleted = deleted;
	sync_post(m, id);
	nr = post_row(m, id);
	post_change(m, &or, &nr);
	check(m);
	return 1;
}

/*
 * pair_action: only on a visible post (force: as if that check were
 * missing); the like row and like_count in one transaction; the like row
 * is fed, the post row is not (its like_count is state the next post
 * change reads).
 */
static int
act_like(struct model *m, long long id, long long u, int force)
{
	struct row r;

	if (id < 1 || id > m->np || (!force && !post_visible(&m->p[id])) ||
	    m->like[id][u])
		return 0;
	WHAT(m, "like p%lld by u%lld%s", id, u,
	    post_visible(&m->p[id]) ? "" : " (hidden post)");
	m->like[id][u] = 1;
	m->p[id].like_count++;
	SQL(m, "INSERT INTO likes(post_id, user_id, created_at) "
	    "VALUES(?1, ?2, 0)", id, u);
	sync_post(m, id);
	r = pair_row(m, ROW_LIKE, id, u);
	feed(m, NULL, &r);
	note_add(m, m->p[id].user, u, N_LIKE, id, 0);
	check(m);
	return 1;
}

static int
act_unlike(struct model *m, long long id, long long u, int force)
{
	struct row r;

	if (id < 1 || id > m->np || (!force && !post_visible(&m->p[id])) ||
	    !m->like[id][u])
		return 0;
	WHAT(m, "unlike p%lld by u%lld%s", id, u,
	    post_visible(&m->p[id]) ? "" : " (hidden post)");
	r = pair_row(m, ROW_LIKE, id, u);
	m->like[id][u] = 0;
	m->p[id].like_count--;
	SQL(m, "DELETE FROM likes WHERE post_id = ?1 AND user_id = ?2", id, u);
	sync_post(m, id);
	feed(m, &r, NULL);
	note_withdraw(m, m->p[id].user, u, N_LIKE, id, 0);
	check(m);
	return 1;
}

static int
act_repost(struct model *m, long long id, long long u)
{
	struct row r;

	if (id < 1 || id > m->np || !post_visible(&m->p[id]) ||
	    m->repost[id][u])
		return 0;
	WHAT(m, "repost p%lld by u%lld", id, u);
	m->repost[id][u] = 1;
	SQL(m, "INSERT INTO reposts(post_id, user_id, created_at) "
	    "VALUES(?1, ?2, 0)", id, u);
	r = pair_row(m, ROW_REPOST, id, u);
	feed(m, NULL, &r);
	note_add(m, m->p[id].user, u, N_REPOST, id, 0);
	check(m);
	return 1;
}

static long long
act_comment(struct model *m, long long id, long long u)
{
	struct row nr;
	long long cid;

	if (id < 1 || id > m->np || !post_visible(&m->p[id]) || m->nc == NC)
		return 0;
	cid = ++m->nc;
	WHAT(m, "comment c%lld on p%lld by u%lld", cid, id, u);
	m->c[cid].post = id;
	m->c[cid].user = u;
	m->c[cid].is_deleted = 0;
	SQL(m, "INSERT INTO comments(id, post_id, user_id, body, created_at) "
	    "VALUES(?1, ?2, ?3, 'c', 0)", cid, id, u);
	nr = comment_row(m, cid);
	feed(m, NULL, &nr);
	note_add(m, m->p[id].user, u, N_COMMENT, id, cid);
	check(m);
	return cid;
}

/* posting_comment_delete: also on a hidden post; once. */
static int
act_uncomment(struct model *m, long long cid)
{
	struct row or, nr;

	if (cid < 1 || cid > m->nc || m->c[cid].is_deleted)
		return 0;
	WHAT(m, "delete comment c%lld on p%lld (%s)", cid, m->c[cid].post,
	    post_visible(&m->p[m->c[cid].post]) ? "visible" : "hidden");
	or = comment_row(m, cid);
	m->c[cid].is_deleted = 1;
	SQL(m, "UPDATE comments SET is_deleted = 1 WHERE id = ?1", cid);
	nr = comment_row(m, cid);
	feed(m, &or, &nr);
	note_withdraw(m, m->p[m->c[cid].post].user, m->c[cid].user, N_COMMENT,
	    m->c[cid].post, cid);
	check(m);
	return 1;
}

static int
act_follow(struct model *m, long long a, long long b, int add)
{
	struct row r = follow_row(a, b);

	if (a == b || m->follow[a][b] == add)
		return 0;
	WHAT(m, "%s: u%lld -> u%lld", add ? "follow" : "unfollow", a, b);
	m->follow[a][b] = (unsigned char)add;
	if (add) {
		SQL(m, "INSERT INTO follows(follower_id, followee_id, "
		    "created_at) VALUES(?1, ?2, 0)", a, b);
		feed(m, NULL, &r);
		note_add(m, b, a, N_FOLLOW, 0, 0);
	} else {
		SQL(m, "DELETE FROM follows WHERE follower_id = ?1 AND "
		    "followee_id = ?2", a, b);
		feed(m, &r, NULL);
		note_withdraw(m, b, a, N_FOLLOW, 0, 0);
	}
	check(m);
	return 1;
}

static int
act_note_read(struct model *m, long long nid)
{
	struct row or, nr;

	if (nid < 1 || nid > m->nn || !m->n[nid].exists || m->n[nid].is_read)
		return 0;
	WHAT(m, "read note n%lld of u%lld", nid, m->n[nid].user);
	or = note_row(m, nid);
	m->n[nid].is_read = 1;
	SQL(m, "UPDATE notifications SET is_read = 1 WHERE id = ?1", nid);
	nr = note_row(m, nid);
	feed(m, &or, &nr);
	check(m);
	return 1;
}

static int
act_note_read_all(struct model *m, long long u)
{
	long long i;
	struct row or, nr;
	int n = 0;

	WHAT(m, "read all notes of u%lld", u);
	for (i = 1; i <= m->nn; i++)
		if (m->n[i].exists && !m->n[i].is_read && m->n[i].user == u) {
			or = note_row(m, i);
			m->n[i].is_read = 1;
			SQL(m, "UPDATE notifications SET is_read = 1 WHERE "
			    "id = ?1", i);
			nr = note_row(m, i);
			feed(m, &or, &nr);
			n++;
		}
	check(m);
	return n;
}

static int
act_note_delete(struct model *m, long long nid)
{
	if (nid < 1 || nid > m->nn || !m->n[nid].exists)
		return 0;
	WHAT(m, "delete %s note n%lld of u%lld",
	    m->n[nid].is_read ? "read" : "unread", nid, m->n[nid].user);
	note_gone(m, nid);
	check(m);
	return 1;
}

/* ---- fixtures ---- */

static int
setup(void **state)
{
	struct model *m = calloc(1, sizeof(*m));
	long long i;
	int v;

	if (m == NULL)
		return -1;
	*state = m;
	/* tally's schema, applied as db_migrate() does (without its log) */
	if (sqlite3_open(":memory:", &m->db.h) != SQLITE_OK ||
	    refold_sqlite_function(m->db.h) == -1 ||	/* step 22's */
	    sqlite3_exec(m->db.h, "PRAGMA foreign_keys = ON", NULL, NULL,
	    NULL) != SQLITE_OK)
		return -1;
	for (v = 0; v < schema_version; v++)
		if (sqlite3_exec(m->db.h, schema_migrations[v], NULL, NULL,
		    NULL) != SQLITE_OK)
			return -1;
	snprintf(m->what, sizeof(m->what), "setup");
	for (i = 1; i <= NU; i++)
		SQL(m, "INSERT INTO users(id, login, name, pwhash, created_at) "
		    "VALUES(?1, 'u' || ?1, 'n', 'x', 0)", i);
	for (i = 2; i <= NT; i++)
		SQL(m, "INSERT INTO topics(id, slug, created_at) "
		    "VALUES(?1, 't' || ?1, 0)", i);
	for (v = 0; v < FAM__MAX; v++)
		if (!modelled((enum family)v)) {
			print_error("family %s has no model recount here: "
			    "extend recount_model()\n", families[v].name);
			return -1;
		}
	check(m);
	return 0;
}

static int
teardown(void **state)
{
	struct model *m = *state;

	if (m != NULL) {
		db_close(&m->db);
		free(m);
	}
	return 0;
}

/* ---- the tests ---- */

/* The formula's own shape on a few row changes, by hand. */
static void
test_delta_shapes(void **state)
{
	struct row a, b;
	struct delta out[DELTA_MAX];
	int n;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.kind = ROW_POST;
	a.id = 9;
	a.user = 5;
	a.topic = 2;
	a.visible = 1;
	a.likes = 0;
	/* a published post, no likes: user, topic, user-topic posts only */
	assert_int_equal(counters_deltas(NULL, &a, out), 3);
	/* the same state again: nothing */
	assert_int_equal(counters_deltas(&a, &a, out), 0);
	/* a draft appears, or a draft with likes moves: nothing */
	b = a;
	b.visible = 0;
	b.likes = 4;
	assert_int_equal(counters_deltas(NULL, &b, out), 0);
	a = b;
	a.topic = 3;
	assert_int_equal(counters_deltas(&b, &a, out), 0);
	/* a published post with 2 likes moves from topic 2 to 3: user
	 * posts and user likes cancel; topic, user-topic posts and rating
	 * move: 6 deltas */
	a.visible = b.visible = 1;
	a.likes = b.likes = 2;
	b.topic = 2;
	a.topic = 3;
	n = counters_deltas(&b, &a, out);
	assert_int_equal(n, 6);
	while (n-- > 0) {
		assert_true(out[n].fam == FAM_TOPIC_POSTS ||
		    out[n].fam == FAM_UT_POSTS || out[n].fam == FAM_UT_RATING);
		assert_true(out[n].d == (out[n].fam == FAM_UT_RATING ? 2 : 1) *
		    ((out[n].fam == FAM_TOPIC_POSTS ? out[n].k1 : out[n].k2)
		    == 3 ? 1 : -1));
	}
	/* unpublishing it takes 1 post and 2 likes from everything */
	b = a;
	b.visible = 0;
	n = counters_deltas(&a, &b, out);
	assert_int_equal(n, 5);
	while (n-- > 0)
		assert_true(out[n].d == (out[n].fam == FAM_USER_LIKES ||
		    out[n].fam == FAM_UT_RATING ? -2 : -1));
}

/* One post through draft, publish, moves, unpublish, delete, restore,
 * with likes before and after each; expected values by hand too. */
static void
test_post_lifecycle(void **state)
{
	struct model *m = *state;
	long long p;

	p = act_create(m, A, T2, 0);			/* draft */
	assert_int_equal(p, 1);
	assert_int_equal(m->last_n, 0);
	expect(m, FAM_USER_POSTS, A, 0, 0);
	expect(m, FAM_TOPIC_POSTS, T2, 0, 0);
	assert_int_equal(act_like(m, p, L1, 0), 0);	/* refused: draft */
	assert_int_equal(act_comment(m, p, L1), 0);
	assert_int_equal(act_repost(m, p, L1), 0);

	assert_true(act_edit(m, p, T2, 1));		/* publish */
	expect(m, FAM_USER_POSTS, A, 0, 1);
	expect(m, FAM_TOPIC_POSTS, T2, 0, 1);
	expect(m, FAM_UT_POSTS, A, T2, 1);

	assert_true(act_like(m, p, L1, 0));
	assert_true(act_like(m, p, L2, 0));
	assert_int_equal(act_like(m, p, L2, 0), 0);	/* already */
	expect(m, FAM_POST_LIKES, p, 0, 2);
	expect(m, FAM_USER_LIKES, A, 0, 2);
	expect(m, FAM_UT_RATING, A, T2, 2);
	expect(m, FAM_USER_UNREAD, A, 0, 2);

	assert_true(act_edit(m, p, T3, 1));		/* move, published */
	expect(m, FAM_TOPIC_POSTS, T2, 0, 0);
	expect(m, FAM_TOPIC_POSTS, T3, 0, 1);
	expect(m, FAM_UT_POSTS, A, T2, 0);
	expect(m, FAM_UT_POSTS, A, T3, 1);
	expect(m, FAM_UT_RATING, A, T2, 0);
	expect(m, FAM_UT_RATING, A, T3, 2);
	expect(m, FAM_USER_LIKES, A, 0, 2);
	expect(m, FAM_USER_POSTS, A, 0, 1);

	assert_true(act_like(m, p, L3, 0));		/* after the move */
	expect(m, FAM_USER_LIKES, A, 0, 3);
	expect(m, FAM_UT_RATING, A, T3, 3);

	assert_true(act_edit(m, p, T3, 0));		/* unpublish */
	expect(m, FAM_USER_POSTS, A, 0, 0);
	expect(m, FAM_TOPIC_POSTS, T3, 0, 0);
	expect(m, FAM_USER_LIKES, A, 0, 0);
	expect(m, FAM_UT_RATING, A, T3, 0);
	expect(m, FAM_POST_LIKES, p, 0, 3);		/* all likes rows */
	assert_int_equal(act_like(m, p, A, 0), 0);	/* refused */
	assert_int_equal(act_unlike(m, p, L1, 0), 0);	/* refused */

	assert_true(act_edit(m, p, T1, 0));		/* move as a draft */
	assert_int_equal(m->last_n, 0);

	assert_true(act_edit(m, p, T1, 1));		/* publish again */
	expect(m, FAM_USER_LIKES, A, 0, 3);
	expect(m, FAM_UT_RATING, A, T1, 3);
	expect(m, FAM_UT_POSTS, A, T1, 1);
	expect(m, FAM_TOPIC_POSTS, T1, 0, 1);

	assert_true(act_unlike(m, p, L2, 0));
	expect(m, FAM_USER_LIKES, A, 0, 2);
	expect(m, FAM_UT_RATING, A, T1, 2);
	expect(m, FAM_POST_LIKES, p, 0, 2);
	expect(m, FAM_USER_UNREAD, A, 0, 2);		/* L2's withdrawn */

	assert_true(act_set_deleted(m, p, 1));		/* soft delete */
	assert_int_equal(act_set_deleted(m, p, 1), 0);
	expect(m, FAM_USER_POSTS, A, 0, 0);
	expect(m, FAM_USER_LIKES, A, 0, 0);
	expect(m, FAM_UT_RATING, A, T1, 0);
	expect(m, FAM_UT_POSTS, A, T1, 0);
	expect(m, FAM_TOPIC_POSTS, T1, 0, 0);
	expect(m, FAM_POST_LIKES, p, 0, 2);
	assert_int_equal(act_like(m, p, L2, 0), 0);	/* refused */
	assert_int_equal(act_edit(m, p, T2, 1), 0);	/* refused */

	assert_true(act_set_deleted(m, p, 0));		/* restore */
	expect(m, FAM_USER_POSTS, A, 0, 1);
	expect(m, FAM_USER_LIKES, A, 0, 2);
	expect(m, FAM_UT_RATING, A, T1, 2);
	expect(m, FAM_TOPIC_POSTS, T1, 0, 1);

	assert_true(act_like(m, p, L2, 0));		/* after the restore */
	expect(m, FAM_USER_LIKES, A, 0, 3);
	assert_true(act_note_read_all(m, A) == 3);
	expect(m, FAM_USER_UNREAD, A, 0, 0);
	assert_true(act_unlike(m, p, L1, 0));		/* its note was read */
	expect(m, FAM_USER_UNREAD, A, 0, 0);
	expect(m, FAM_USER_LIKES, A, 0, 2);
	assert_true(act_like(m, p, A, 0));		/* own like: no note */
	expect(m, FAM_USER_LIKES, A, 0, 3);
	expect(m, FAM_USER_UNREAD, A, 0, 0);

	assert_true(act_edit(m, p, T2, 0));		/* move + unpublish */
	expect(m, FAM_UT_RATING, A, T1, 0);
	expect(m, FAM_UT_RATING, A, T2, 0);
	expect(m, FAM_USER_LIKES, A, 0, 0);
	assert_true(act_set_deleted(m, p, 1));		/* delete a draft */
	assert_int_equal(m->last_n, 0);
	assert_true(act_set_deleted(m, p, 0));		/* restore a draft */
	assert_int_equal(m->last_n, 0);
	assert_true(act_edit(m, p, T3, 1));		/* move + publish */
	expect(m, FAM_UT_RATING, A, T3, 3);
	expect(m, FAM_UT_POSTS, A, T3, 1);
	expect(m, FAM_USER_LIKES, A, 0, 3);
	expect(m, FAM_POST_LIKES, p, 0, 3);

	/* a second author in the same topic keeps apart */
	p = act_create(m, B, T3, 1);
	assert_true(act_like(m, p, A, 0));
	expect(m, FAM_TOPIC_POSTS, T3, 0, 2);
	expect(m, FAM_UT_RATING, A, T3, 3);
	expect(m, FAM_UT_RATING, B, T3, 1);
	expect(m, FAM_USER_UNREAD, B, 0, 1);
	assert_true(act_set_deleted(m, 1, 1));
	expect(m, FAM_TOPIC_POSTS, T3, 0, 1);
	expect(m, FAM_USER_LIKES, B, 0, 1);
	expect(m, FAM_USER_LIKES, A, 0, 0);
}

/* Comments, reposts, follows and notifications. */
static void
test_comments_reposts_follows(void **state)
{
	struct model *m = *state;
	long long p, c1, c2, c3;

	p = act_create(m, B, T1, 1);
	c1 = act_comment(m, p, L1);
	c2 = act_comment(m, p, L2);
	c3 = act_comment(m, p, B);			/* own: no note */
	expect(m, FAM_POST_COMMENTS, p, 0, 3);
	expect(m, FAM_USER_UNREAD, B, 0, 2);
	assert_true(act_uncomment(m, c1));
	assert_int_equal(act_uncomment(m, c1), 0);	/* once */
	expect(m, FAM_POST_COMMENTS, p, 0, 2);
	expect(m, FAM_USER_UNREAD, B, 0, 1);

	assert_true(act_repost(m, p, L1));
	assert_true(act_repost(m, p, L3));
	assert_int_equal(act_repost(m, p, L1), 0);	/* already */
	expect(m, FAM_POST_REPOSTS, p, 0, 2);
	expect(m, FAM_USER_UNREAD, B, 0, 3);

	/* a hidden post keeps its comments and reposts; comments can
	 * still be deleted */
	assert_true(act_set_deleted(m, p, 1));
	expect(m, FAM_POST_COMMENTS, p, 0, 2);
	expect(m, FAM_POST_REPOSTS, p, 0, 2);
	assert_int_equal(act_comment(m, p, L3), 0);
	assert_true(act_uncomment(m, c2));
	expect(m, FAM_POST_COMMENTS, p, 0, 1);
	assert_true(act_set_deleted(m, p, 0));
	assert_true(act_edit(m, p, T2, 0));
	assert_true(act_uncomment(m, c3));
	expect(m, FAM_POST_COMMENTS, p, 0, 0);

	assert_true(act_follow(m, L1, A, 1));
	assert_true(act_follow(m, L2, A, 1));
	assert_true(act_follow(m, A, L1, 1));
	assert_int_equal(act_follow(m, A, L1, 1), 0);	/* already */
	assert_int_equal(act_follow(m, A, A, 1), 0);	/* self */
	expect(m, FAM_USER_FOLLOWERS, A, 0, 2);
	expect(m, FAM_USER_FOLLOWING, A, 0, 1);
	expect(m, FAM_USER_FOLLOWERS, L1, 0, 1);
	expect(m, FAM_USER_FOLLOWING, L1, 0, 1);
	expect(m, FAM_USER_UNREAD, A, 0, 2);
	assert_true(act_follow(m, L2, A, 0));
	assert_int_equal(act_follow(m, L2, A, 0), 0);	/* already not */
	expect(m, FAM_USER_FOLLOWERS, A, 0, 1);
	expect(m, FAM_USER_FOLLOWING, L2, 0, 0);
	expect(m, FAM_USER_UNREAD, A, 0, 1);
	assert_true(act_follow(m, L2, A, 1));
	assert_true(act_follow(m, F, A, 1));
	expect(m, FAM_USER_FOLLOWERS, A, 0, 3);
	expect(m, FAM_USER_UNREAD, A, 0, 3);

	/* notifications: read one, delete a read and an unread one */
	assert_true(act_note_read(m, m->nn));
	assert_int_equal(act_note_read(m, m->nn), 0);	/* once */
	expect(m, FAM_USER_UNREAD, A, 0, 2);
	assert_true(act_note_delete(m, m->nn));		/* read: no change */
	expect(m, FAM_USER_UNREAD, A, 0, 2);
	assert_true(act_note_delete(m, m->nn - 1));	/* unread */
	expect(m, FAM_USER_UNREAD, A, 0, 1);
	assert_true(act_follow(m, L2, A, 0));		/* its note is gone */
	expect(m, FAM_USER_UNREAD, A, 0, 1);
	expect(m, FAM_USER_FOLLOWERS, A, 0, 2);
}

/* Should a like or unlike ever reach a hidden post (the application
 * refuses it), its row carries visible = 0 and the counts still agree
 * with the recount once the post shows again. */
static void
test_like_rows_of_hidden_posts(void **state)
{
	struct model *m = *state;
	long long p = act_create(m, A, T1, 0);

	assert_true(act_like(m, p, L1, 1));		/* on a draft */
	expect(m, FAM_USER_LIKES, A, 0, 0);
	expect(m, FAM_POST_LIKES, p, 0, 1);
	assert_true(act_edit(m, p, T2, 1));
	expect(m, FAM_USER_LIKES, A, 0, 1);
	expect(m, FAM_UT_RATING, A, T2, 1);
	assert_true(act_set_deleted(m, p, 1));
	assert_true(act_like(m, p, L2, 1));		/* on a deleted post */
	assert_true(act_unlike(m, p, L1, 1));
	assert_true(act_set_deleted(m, p, 0));
	expect(m, FAM_USER_LIKES, A, 0, 1);
	expect(m, FAM_UT_RATING, A, T2, 1);
	assert_true(act_edit(m, p, T3, 0));
	assert_true(act_unlike(m, p, L2, 1));		/* on a draft */
	assert_true(act_edit(m, p, T3, 1));
	expect(m, FAM_USER_LIKES, A, 0, 0);
	expect(m, FAM_POST_LIKES, p, 0, 0);
}

/* xorshift64*: the same sequence everywhere. */
static unsigned long long
rnd(unsigned long long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static long long
pick(unsigned long long *s, long long lo, long long hi)
{
	return lo + (long long)((rnd(s) >> 11) % (unsigned long long)(hi - lo + 1));
}

enum op {
	OP_CREATE, OP_PUBLISH, OP_UNPUBLISH, OP_MOVE_PUBLISHED, OP_MOVE_DRAFT,
	OP_DELETE, OP_RESTORE, OP_LIKE, OP_UNLIKE, OP_REPOST, OP_COMMENT,
	OP_UNCOMMENT, OP_FOLLOW, OP_UNFOLLOW, OP_READ, OP_READ_ALL,
	OP_NOTE_DELETE, OP__MAX
};

static const char *const op_names[OP__MAX] = {
	"create", "publish", "unpublish", "move published", "move draft",
	"delete", "restore", "like", "unlike", "repost", "comment",
	"uncomment", "follow", "unfollow", "read", "read all", "note delete",
};

/* Relative weights: likes dominate, as on the site. */
static const int op_weight[OP__MAX] = {
	4, 5, 4, 5, 3, 3, 3, 30, 14, 5, 8, 5, 6, 4, 4, 1, 2,
};

/* One random action; 1 when the application would have done it. */
static int
random_action(struct model *m, unsigned long long *s, enum op *which)
{
	long long p = m->np ? pick(s, 1, m->np) : 0, u = pick(s, 1, NU);
	long long t = pick(s, 1, NT), w = 0;
	int i, r;

	for (i = 0; i < OP__MAX; i++)
		w += op_weight[i];
	r = (int)pick(s, 0, w - 1);
	for (i = 0; r >= op_weight[i]; i++)
		r -= op_weight[i];
	*which = (enum op)i;
	if (*which != OP_CREATE && p == 0)
		return 0;
	switch (*which) {
	case OP_CREATE:
		return act_create(m, u, t, (int)pick(s, 0, 1)) != 0;
	case OP_PUBLISH:
		return m->p[p].status == 0 && act_edit(m, p, m->p[p].topic, 1);
	case OP_UNPUBLISH:
		return m->p[p].status == 1 && act_edit(m, p, m->p[p].topic, 0);
	case OP_MOVE_PUBLISHED:
		return m->p[p].status == 1 && t != m->p[p].topic &&
		    act_edit(m, p, t, 1);
	case OP_MOVE_DRAFT:
		return m->p[p].status == 0 && t != m->p[p].topic &&
		    act_edit(m, p, t, 0);
	case OP_DELETE:
		return act_set_deleted(m, p, 1);
	case OP_RESTORE:
		return act_set_deleted(m, p, 0);
	case OP_LIKE:
		return act_like(m, p, u, 0);
	case OP_UNLIKE:
		return act_unlike(m, p, u, 0);
	case OP_REPOST:
		return act_repost(m, p, u);
	case OP_COMMENT:
		return act_comment(m, p, u) != 0;
	case OP_UNCOMMENT:
		return m->nc > 0 && act_uncomment(m, pick(s, 1, m->nc));
	case OP_FOLLOW:
		return act_follow(m, u, pick(s, 1, NU), 1);
	case OP_UNFOLLOW:
		return act_follow(m, u, pick(s, 1, NU), 0);
	case OP_READ:
		return m->nn > 0 && act_note_read(m, pick(s, 1, m->nn));
	case OP_READ_ALL:
		return act_note_read_all(m, u) > 0;
	case OP_NOTE_DELETE:
		return m->nn > 0 && act_note_delete(m, pick(s, 1, m->nn));
	case OP__MAX:
		break;
	}
	return 0;
}

/* ~5,000 valid random actions, fixed seed, checked after each. */
static void
test_random_sequence(void **state)
{
	struct model *m = *state;
	unsigned long long seed = 0x7a11c0de2024ULL;
	long done[OP__MAX] = { 0 }, applied = 0, tries = 0;
	long long i, sum;
	enum op op;

	while (applied < 5000) {
		assert_true(++tries < 200000);
		if (random_action(m, &seed, &op)) {
			done[op]++;
			applied++;
		}
	}
	/* every kind of action happened often enough to matter */
	for (i = 0; i < OP__MAX; i++)
		if (done[i] < (i == OP_READ_ALL ? 5 : 20))
			fail_msg("only %ld x %s in the random run", done[i],
			    op_names[i]);
	/* and the end state is not trivial */
	for (sum = 0, i = 1; i <= NU; i++)
		sum += m->cnt[FAM_USER_LIKES][i][0];
	assert_true(sum > 20);
	assert_true(m->np == NP);
	/* posts carried their likes along often */
	assert_true(m->moved >= 20 && m->hidden >= 20 && m->shown >= 20);
	print_message("# random: %ld actions (%ld tried), %ld row changes, "
	    "%ld checks; with likes: %ld moved, %ld hidden, %ld shown\n",
	    applied, tries, m->feeds, m->steps, m->moved, m->hidden, m->shown);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delta_shapes),
		cmocka_unit_test_setup_teardown(test_post_lifecycle, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_comments_reposts_follows,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_like_rows_of_hidden_posts,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_sequence, setup,
		    teardown),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
