/* postview.c -- the post page model; see postview.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "social/posting.h"
#include "social/postview.h"
#include "store/sql.h"

static int
comments(struct app *a, struct post_view *v)
{
	struct dbq *s = dbq_stmt(a->db, STMT_COMMENTS_OF_POST);
	struct comment *c;
	int cap = 0, rc = DBQ_DONE;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, v->c.p.id);
	dbq_bind_i64(s, 2, v->comments_after);
	dbq_bind_int(s, 3, POSTVIEW_COMMENTS + 1);	/* is there a next */
	while ((rc = dbq_step(s)) == DBQ_ROW) {
		if (v->ncomments == POSTVIEW_COMMENTS) {
			v->comments_more = 1;
			break;
		}
		/* grown as rows come: the most a page shows (168 KB) was
		 * zeroed for every post page, most with a few comments,
		 * and freed, jemalloc giving it back each time (madvise) */
		if (v->ncomments == cap) {
			cap = cap == 0 ? 8 : cap * 2;
			if (cap > POSTVIEW_COMMENTS)
				cap = POSTVIEW_COMMENTS;
			v->comments = xrealloc(v->comments,
			    (size_t)cap * sizeof(*v->comments));
		}
		c = &v->comments[v->ncomments++];
		c->id = dbq_i64(s, 0);
		c->user_id = dbq_i64(s, 1);
		snprintf(c->login, sizeof(c->login), "%s", dbq_text(s, 2));
		snprintf(c->name, sizeof(c->name), "%s", dbq_text(s, 3));
		c->body = xstrdup(dbq_text(s, 4));
		c->created_at = dbq_i64(s, 5);
	}
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : 0;
}

long long
postview_comment_page(struct app *a, long long post, long long id)
{
	struct dbq *s = dbq_stmt(a->db, STMT_COMMENTS_BEFORE);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, post);
	dbq_bind_i64(s, 2, id);
	dbq_bind_int(s, 3, POSTVIEW_COMMENTS - 1);
	rc = dbq_step(s);
	dbq_done(s);
	if (rc == DBQ_ERR)
		return -1;
	return rc == DBQ_ROW ? id - 1 : 0;
}

int
postview_load(struct app *a, long long id, long long viewer,
    const char *addr, unsigned flags, long long after, struct post_view *v)
{
	int rc;

	memset(v, 0, sizeof(*v));
	v->comments_after = after;
	if (id <= 0)
		return 0;
	if ((rc = post_get(a->db, id, &v->c.p)) != 1)
		return rc;
	if (!post_can_see(&v->c.p, viewer)) {
		post_free(&v->c.p);
		return 0;
	}
	if (!(flags & (PV_FULL | PV_COUNTS)))
		return 1;
	if ((flags & PV_FULL) && comments(a, v) == -1) {
		postview_free(v);
		return -1;
	}
	/* before the counts: this view shows; never the author's own */
	if ((flags & PV_VIEWED) && POST_VISIBLE(&v->c.p) &&
	    viewer != v->c.p.user_id) {
		if (flags & PV_VIEW_QUEUED)
			v->view_queued = posting_view_send(a, id,
			    v->c.p.user_id, viewer, addr);
		else
			posting_view(a, id, v->c.p.user_id, viewer, addr);
	}
	if (!(flags & PV_CALLER_COUNTS))
		postlist_counts(a, &v->c, 1);
	postlist_marks(a, &v->c, 1, viewer);
	return 1;
}

void
postview_free(struct post_view *v)
{
	int i;

	for (i = 0; i < v->ncomments; i++)
		free(v->comments[i].body);
	free(v->comments);
	post_free(&v->c.p);
	memset(v, 0, sizeof(*v));
}
