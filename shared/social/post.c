/* post.c -- a post as read from its truth row; see post.h. */
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "social/post.h"
#include "store/dbq.h"

void
post_from_row(struct dbq *s, struct post *p)
{
	memset(p, 0, sizeof(*p));
	p->id = dbq_i64(s, 0);
	p->user_id = dbq_i64(s, 1);
	dbq_col_text(s, 2, p->login, sizeof(p->login));
	dbq_col_text(s, 3, p->name, sizeof(p->name));
	dbq_col_text(s, 4, p->slug, sizeof(p->slug));
	p->body = xstrdup(dbq_text(s, 5));
	p->status = dbq_int(s, 6);
	p->is_deleted = dbq_int(s, 7);
	p->created_at = dbq_i64(s, 8);
	p->published_at = dbq_i64(s, 9);
	p->topic_id = dbq_i64(s, 10);
	p->likes = dbq_i64(s, 11);
}

void
post_free(struct post *p)
{
	free(p->body);
	p->body = NULL;
}

/* The post at id, through statement st and fill: 1, 0 absent, -1. */
static int
read_post(struct db *d, enum stmt st, long long id, struct post *p,
    void (*fill)(struct dbq *, struct post *))
{
	struct dbq *s = dbq_stmt(d, st);
	int rc;

	memset(p, 0, sizeof(*p));
	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, id);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		fill(s, p);
	dbq_done(s);
	return rc == DBQ_ROW ? 1 : rc == DBQ_DONE ? 0 : -1;
}

int
post_get(struct db *d, long long id, struct post *p)
{
	return read_post(d, STMT_POST_GET, id, p, post_from_row);
}

static void
head_from_row(struct dbq *s, struct post *p)
{
	p->id = dbq_i64(s, 0);
	p->user_id = dbq_i64(s, 1);
	p->topic_id = dbq_i64(s, 2);
	p->status = dbq_int(s, 3);
	p->is_deleted = dbq_int(s, 4);
}

int
post_head(struct db *d, long long id, struct post *p)
{
	return read_post(d, STMT_POST_HEAD, id, p, head_from_row);
}

int
post_get_locked(struct db *d, long long id, struct post *p)
{
	return read_post(d, STMT_POST_GET_LOCK, id, p, post_from_row);
}

int
post_head_locked(struct db *d, long long id, struct post *p)
{
	return read_post(d, STMT_POST_HEAD_LOCK, id, p, head_from_row);
}

int
post_can_see(const struct post *p, long long viewer)
{
	/* A draft or deleted post is 404 to all but its author. */
	return POST_VISIBLE(p) || (viewer != 0 && viewer == p->user_id);
}
