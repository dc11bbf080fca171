/* find.c -- finding people and topics; see find.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/words.h"
#include "count/lb.h"
#include "social/find.h"
#include "store/dbq.h"

/* A set of user ids seen while reading the index (a user matches once
 * per word): open addressing, sized for every id the page can need. */
struct idset {
	long long	*v;
	size_t		 mask;
};

static void
idset_init(struct idset *s, size_t want)
{
	size_t sz = 64;

	while (sz < 2 * want)
		sz *= 2;
	s->v = xcalloc(sz, sizeof(*s->v));
	s->mask = sz - 1;
}

/* 1 when id was new (and is now in), 0 when it was there. */
static int
idset_add(struct idset *s, long long id)
{
	size_t i = (size_t)((unsigned long long)id * 0x9e3779b97f4a7c15ULL) &
	    s->mask;

	while (s->v[i] != 0) {
		if (s->v[i] == id)
			return 0;
		i = (i + 1) & s->mask;
	}
	s->v[i] = id;
	return 1;
}

/* Fills list->v from ids (names, follower counts, the viewer's follows). */
static int
found_fill(struct app *a, const long long *ids, int n, long long viewer,
    struct found_list *list)
{
	struct people ps;
	struct delta *ds;
	struct count *cs;
	struct dbq *s;
	int i, j, rc = DBQ_DONE;

	if (people_by_ids(a, ids, NULL, n, &ps) == -1) {
		people_free(&ps);
		return -1;
	}
	list->v = xcalloc((size_t)ps.n + 1, sizeof(*list->v));
	ds = xcalloc((size_t)ps.n + 1, sizeof(*ds));
	cs = xcalloc((size_t)ps.n + 1, sizeof(*cs));
	for (i = 0; i < ps.n; i++) {
		list->v[i].p = ps.v[i];
		list->v[i].self = ps.v[i].id == viewer;
		ds[i].fam = FAM_USER_FOLLOWERS;
		ds[i].k1 = ps.v[i].id;
	}
	list->n = ps.n;
	if (ps.n > 0)
		cstore_get(a, ds, ps.n, cs);	/* failures: ok == 0 */
	for (i = 0; i < ps.n; i++)
		list->v[i].followers = cs[i];
	if (viewer != 0 && ps.n > 0 &&
	    (s = dbq_stmt(a->db, STMT_FOLLOWING_AMONG)) != NULL) {
		dbq_bind_i64(s, 1, viewer);
		dbq_bind_ids(s, 2, ids, n);
		while ((rc = dbq_step(s)) == DBQ_ROW)
			for (j = 0; j < list->n; j++)
				if (list->v[j].p.id == dbq_i64(s, 0))
					list->v[j].following = 1;
		dbq_done(s);
	}
	free(ds);
	free(cs);
	people_free(&ps);
	return rc == DBQ_ERR ? -1 : 0;
}

int
find_people(struct app *a, const char *q, long long viewer, long long page,
    int per, struct found_list *out)
{
	char lo[WORD_MAX], hi[WORD_MAX], last[WORD_MAX];
	long long *ids, last_uid = 0, skip = (page - 1) * per, uid;
	struct idset seen;
	struct dbq *s;
	int n = 0, rows, rc = DBQ_DONE, chunk = per * 4;

	memset(out, 0, sizeof(*out));
	if (words_fold(q, lo) == 0)
		return 0;
	words_upper(lo, hi);
	snprintf(last, sizeof(last), "%s", lo);
	ids = xcalloc((size_t)per + 1, sizeof(*ids));
	idset_init(&seen, (size_t)(skip + per + 1));
	/* Chunks of the key range, each resuming after the last row read,
	 * until the page and one more person are found or the range ends. */
	while (n <= per) {
		if ((s = dbq_stmt(a->db, STMT_PEOPLE_FIND)) == NULL) {
			rc = DBQ_ERR;
			break;
		}
		dbq_bind_text_copy(s, 1, last, -1);	/* last changes below */
		dbq_bind_text(s, 2, hi, -1);
		dbq_bind_int(s, 3, chunk);
		dbq_bind_i64(s, 4, last_uid);
		rows = 0;
		while (n <= per && (rc = dbq_step(s)) == DBQ_ROW) {
			rows++;
			dbq_col_text(s, 0, last, sizeof(last));
			uid = last_uid = dbq_i64(s, 1);
			if (!idset_add(&seen, uid))
				continue;
			if (skip > 0)
				skip--;
			else
				ids[n++] = uid;
		}
		dbq_done(s);
		if (rc == DBQ_ERR || rows < chunk)
			break;
	}
	free(seen.v);
	if (rc != DBQ_ERR) {
		out->more = n > per;
		if (n > per)
			n = per;
		if (n > 0 && found_fill(a, ids, n, viewer, out) == -1)
			rc = DBQ_ERR;
	}
	free(ids);
	return rc == DBQ_ERR ? -1 : 0;
}

static int
kept(const long long *keep, int nkeep, long long id)
{
	int i;

	for (i = 0; i < nkeep; i++)
		if (keep[i] == id)
			return 1;
	return 0;
}

int
find_suggest(struct app *a, long long viewer, const long long *keep,
    int nkeep, long long page, int per, struct found_list *out)
{
	long long top[FIND_SUGGEST_MAX], vals[FIND_SUGGEST_MAX], *ids;
	struct dbq *s;
	int n, k = 0, i, j, rc = DBQ_DONE, followed;
	long long skip = (page - 1) * per;

	memset(out, 0, sizeof(*out));
	if ((n = lb_top(a, FAM_USER_FOLLOWERS, 0, FIND_SUGGEST_MAX, top,
	    vals)) == -1)
		return -1;
	ids = xcalloc((size_t)n + 1, sizeof(*ids));
	/* the viewer and those they follow leave the list, but for keep */
	if (viewer != 0 && n > 0 &&
	    (s = dbq_stmt(a->db, STMT_FOLLOWING_AMONG)) != NULL) {
		dbq_bind_i64(s, 1, viewer);
		dbq_bind_ids(s, 2, top, n);
		while ((rc = dbq_step(s)) == DBQ_ROW)
			for (j = 0; j < n; j++)
				if (top[j] == dbq_i64(s, 0) &&
				    !kept(keep, nkeep, top[j]))
					top[j] = 0;
		dbq_done(s);
	}
	for (i = 0; i < n && rc != DBQ_ERR; i++) {
		followed = top[i] == 0 || top[i] == viewer;
		if (followed)
			continue;
		if (skip > 0)
			skip--;
		else if (k <= per)
			ids[k++] = top[i];
	}
	if (rc != DBQ_ERR) {
		out->more = k > per;
		if (k > per)
			k = per;
		if (k > 0 && found_fill(a, ids, k, viewer, out) == -1)
			rc = DBQ_ERR;
	}
	free(ids);
	return rc == DBQ_ERR ? -1 : 0;
}

void
find_free(struct found_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static int
by_posts(const void *x, const void *y)
{
	const struct topic_item *a = x, *b = y;

	if (a->posts.ok != b->posts.ok)
		return a->posts.ok ? -1 : 1;
	if (a->posts.v != b->posts.v)
		return a->posts.v > b->posts.v ? -1 : 1;
	return strcmp(a->slug, b->slug);
}

int
find_topics(struct app *a, struct topic_list *out)
{
	struct dbq *s = dbq_stmt(a->db, STMT_TOPICS_ALL);
	struct delta *ds;
	struct count *cs;
	int n = 0, k = 0, i, rc = DBQ_DONE;

	out->v = xcalloc(TOPICS_MAX, sizeof(*out->v));
	out->n = 0;
	if (s == NULL)
		return -1;
	dbq_bind_int(s, 1, TOPICS_BUSY);
	dbq_bind_int(s, 2, TOPICS_NEW);
	while (n < TOPICS_MAX && (rc = dbq_step(s)) == DBQ_ROW) {
		out->v[n].id = dbq_i64(s, 0);
		dbq_col_text(s, 1, out->v[n].slug, sizeof(out->v[n].slug));
		n++;
	}
	dbq_done(s);
	if (rc == DBQ_ERR)
		return -1;
	ds = xcalloc((size_t)n + 1, sizeof(*ds));
	cs = xcalloc((size_t)n + 1, sizeof(*cs));
	for (i = 0; i < n; i++) {
		ds[i].fam = FAM_TOPIC_POSTS;
		ds[i].k1 = out->v[i].id;
	}
	if (n > 0)
		cstore_get(a, ds, n, cs);	/* failures: ok == 0 */
	for (i = 0; i < n; i++)
		if (!cs[i].ok || cs[i].v > 0) {
			out->v[k] = out->v[i];
			out->v[k++].posts = cs[i];
		}
	out->n = k;
	qsort(out->v, (size_t)k, sizeof(*out->v), by_posts);
	free(ds);
	free(cs);
	return 0;
}

void
find_topics_free(struct topic_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}
