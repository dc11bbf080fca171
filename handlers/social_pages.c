/* social_pages.c -- the home feed and a topic: each page's model, its
 * load through shared/ (the models) and its render (web/view_social.c);
 * and the answers tally-social's pages share. */

#include <string.h>

#include "base/buf.h"
#include "social/find.h"
#include "social/pcache.h"
#include "social/posting.h"
#include "social/postlist.h"
#include "social/profileview.h"
#include "store/app.h"
#include "store/rds.h"
#include "web/keep.h"
#include "social_pages.h"
#include "web/field.h"
#include "web/layout.h"
#include "web/resp.h"
#include "web/view_social.h"

int
post_answer(struct req *r, int rc)
{
	switch (rc) {
	case POST_OK:
		return 0;
	case POST_NOTFOUND:
		return resp_error(r, 404, "There is no such post.");
	case POST_FORBIDDEN:
		return resp_error(r, 403, "That is not yours.");
	default:
		return resp_error(r, 500, "The change could not be saved.");
	}
}

int
arg_user(struct req *r, struct account *u)
{
	const char *login;
	int rc;

	if ((login = field_arg(r, 0, VALID_LOGIN, "There is no such user."))
	    == NULL)
		return -1;
	if ((rc = pcache_get(r->app, login, u)) == 1)
		return 0;
	return resp_error(r, rc == 0 ? 404 : 500, rc == 0 ?
	    "There is no such user." : "The user could not be read.");
}

int
cards_counted(const struct post_card *cs, int n, const struct count *more,
    int nmore)
{
	int i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < PC_NCOUNTS; j++)
			if (!cs[i].n[j].ok)
				return 0;
	for (i = 0; i < nmore; i++)
		if (!more[i].ok)
			return 0;
	return 1;
}

/* The feed's first round trip: the timeline's page, the reader's badges
 * and, for a reader not confirmed yet (req.h: presumed), the session's
 * copy.  A timeline to rebuild is rebuilt for a confirmed reader only; a
 * copy that SQLite renews rides in the page's last round trip, which the
 * counts no process keeps need (often none). */
struct feed_first {
	struct tl_q	 tq;
	struct layout_q	 lq;
	int		 ticket;	/* its posts' statement, sent ahead */
	int		 nids;		/* with these ids, for this reader */
	long long	 reader;
	long long	 ids[FEED_PAGE];
};

static void
feed_first_send(struct req *r, long long page, struct feed_first *f)
{
	f->ticket = 0;
	f->nids = 0;		/* feed_sql_ahead() sets them */
	f->reader = 0;
	timeline_ids_send(r->app, TL_HOME, r->sess.user_id, page, FEED_PAGE,
	    &f->tq);
	layout_first_send(r, &f->lq);
}

int
page_ahead(struct req *r, size_t qsize, void (*send)(struct req *, void *,
    const void *), const void *arg)
{
	struct rds *rd = r->app->rds;
	struct req_ahead *a;
	int q0;

	if (field_has(r, "page") || rds_is_cluster(rd) ||
	    app_reader(r->app) != rd || !rds_up(rd) || !req_presume(r) ||
	    keep_likely(r))
		return 0;
	a = xcalloc(1, sizeof(*a));
	a->q = xcalloc(1, qsize);
	a->gen = rds_gen(rd);
	q0 = rds_queued(rd);
	rds_record(rd, &a->keys);
	send(r, a->q, arg);
	rds_record(rd, NULL);
	a->want = rds_queued(rd) - q0;
	r->ahead = a;
	return 1;
}

static void
feed_first_ahead(struct req *r, void *q, const void *arg)
{
	(void)arg;
	feed_first_send(r, 1, q);
}

int
feed_ahead(struct req *r)
{
	if (r->method != METHOD_GET || r->path == NULL ||
	    strcmp(r->path, "/feed") != 0)
		return 0;
	return page_ahead(r, sizeof(struct feed_first), feed_first_ahead,
	    NULL);
}

int
feed_sql_ahead(struct req *r)
{
	struct feed_first *f;

	if (r->ahead == NULL || r->method != METHOD_GET || r->path == NULL ||
	    strcmp(r->path, "/feed") != 0)
		return 0;
	f = r->ahead->q;
	if ((f->nids = timeline_ids_peek(&f->tq, &r->ahead->st, f->ids)) <= 0)
		return 0;
	f->reader = r->sess.user_id;
	f->ticket = postlist_send(r->app, f->ids, f->nids, f->reader, PC_HOME);
	return f->ticket > 0;
}

static enum page_load
feed_load(struct req *r, void *vm)
{
	struct feed_model *m = vm;
	struct feed_first own, *f;
	struct req_ahead *ahead;
	long long ids[FEED_PAGE];
	int n, first_ok, cached, ticket;

	m->page = field_page(r);
	if ((f = req_ahead_take(r, &ahead, m->page == 1)) == NULL) {
		if (m->page == 0)
			return PAGE_ANSWERED;
		feed_first_send(r, m->page, f = &own);
	}
	timeline_ids_read(r->app, &f->tq);
	first_ok = layout_first_recv(r, &f->lq);
	req_ahead_read(r, ahead);
	if (!first_ok) {
		timeline_ids_drop(&f->tq);
		req_ahead_free(ahead);
		return PAGE_AGAIN;
	}
	n = timeline_ids_end(r->app, &f->tq, ids);
	cached = f->tq.cached;
	/* the posts' statement sent ahead, if it asked for these */
	ticket = f->ticket > 0 && n == f->nids && f->reader ==
	    r->sess.user_id && memcmp(ids, f->ids, (size_t)n * sizeof(*ids))
	    == 0 ? f->ticket : 0;
	req_ahead_free(ahead);	/* f with it */
	if (n < 0 || postlist_read_took(r->app, ticket, ids, n,
	    r->sess.user_id, PC_HOME, &m->cards) == -1) {
		resp_error(r, 500, "The feed could not be read.");
		return PAGE_ANSWERED;
	}
	m->more = n == FEED_PAGE;
	/* an empty feed offers people to follow */
	if (m->cards.n == 0 && m->page == 1 && find_suggest(r->app,
	    r->sess.user_id, NULL, 0, 1, FEED_SUGGEST, &m->suggest) == -1)
		find_free(&m->suggest);
	if (layout_load_cards(r, m->cards.v, m->cards.n, NULL, 0, NULL) == -1)
		return PAGE_AGAIN;	/* one round trip */
	r->keep.ok = cached && m->cards.n > 0 &&
	    cards_counted(m->cards.v, m->cards.n, NULL, 0);
	return PAGE_RENDER;
}

static void
feed_done(void *vm)
{
	struct feed_model *m = vm;

	find_free(&m->suggest);
	postlist_free(&m->cards);
}

const struct page page_feed = {
	sizeof(struct feed_model), feed_load, view_feed, feed_done
};

static enum page_load
topic_load(struct req *r, void *vm)
{
	struct topic_view *v = vm;
	long long page = field_page(r);
	const char *slug;
	int rc;

	if (page == 0 || (slug = field_arg(r, 0, VALID_TOPIC,
	    "There is no such topic.")) == NULL)
		return PAGE_ANSWERED;
	rc = profileview_topic_load(r->app, slug, r->user ? r->sess.user_id : 0,
	    page, FEED_PAGE, v);
	if (rc != 1) {
		resp_error(r, rc == 0 ? 404 : 500, rc == 0 ?
		    "There is no such topic." : "The topic could not be read.");
		return PAGE_ANSWERED;
	}
	if (layout_load_cards(r, v->cards.v, v->cards.n, &v->key, 1,
	    &v->posts) == -1)
		return PAGE_AGAIN;
	return PAGE_RENDER;
}

static void
topic_done(void *vm)
{
	profileview_topic_free(vm);
}

const struct page page_topic = {
	sizeof(struct topic_view), topic_load, view_topic, topic_done
};
