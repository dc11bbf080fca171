/* social_pages.c -- page functions of tally-social; logic is in shared/
 * (the models) and web/view_social.c (the pages); these map HTTP to a
 * load, then a render. */
#include <stdlib.h>
#include <string.h>

#include "social/find.h"
#include "social/pcache.h"
#include "social/posting.h"
#include "social/postlist.h"
#include "social/profileview.h"
#include "social_pages.h"
#include "web/fcache.h"
#include "web/field.h"
#include "web/layout.h"
#include "web/resp.h"
#include "web/view_social.h"

/* Maps an enum post_rc to its answer; 0 for POST_OK. */
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

/* The user named by path argument 0, or answers 404 and returns -1. */
int
arg_user(struct req *r, struct account *u)
{
	char *login = NULL;
	int rc;

	if (r->nargs < 1 || valid_check(VALID_LOGIN, r->args[0],
	    strlen(r->args[0]), &login) == -1)
		return resp_error(r, 404, "There is no such user.");
	rc = pcache_get(r->app, login, u);
	free(login);
	if (rc == 1)
		return 0;
	return resp_error(r, rc == 0 ? 404 : 500, rc == 0 ?
	    "There is no such user." : "The user could not be read.");
}

/* A feed whose Redis part this process may have kept (web/fcache.h): its
 * posts and the reader's marks are read from SQLite while Redis answers
 * the sync, the rest comes from the entry.  1 shown, 0 when the page is
 * to be read whole (recording what it reads when fcache_hit() said 0). */
static int
feed_kept(struct req *r, struct fc_hit *h)
{
	struct found_list none = { NULL, 0, 0 };
	struct post_cards cs;
	int rc, fc;

	rc = post_cards_read(r->app, h->ids, h->n, r->sess.user_id, PC_HOME,
	    &cs);
	fc = fcache_hit(r, h, 1);
	if (rc == -1)
		return 0;
	if (fc == 1 && cs.n > 0 &&
	    fcache_counts(h, cs.v, cs.n, NULL, 0) == 0) {
		view_feed(r, &cs, h->pg.page, h->n == FEED_PAGE, &none);
		fcache_body(r);
		post_cards_free(&cs);
		return 1;
	}
	post_cards_free(&cs);
	return 0;
}

int
page_feed(struct req *r)
{
	long long ids[FEED_PAGE], page = field_page(r);
	struct found_list suggest = { NULL, 0, 0 };
	struct post_cards cs;
	struct fc_page pg = { FC_FEED, page, NULL };
	struct fc_model m = { ids, 0, NULL, 0, NULL, NULL, 0 };
	struct fc_hit h;
	int n, keep, w;

	if (page == 0)
		return -1;
	if (fcache_get(r, &pg, &h) == 1 &&
	    ((w = fcache_whole(r, &h)) == 1 || (w == 0 && feed_kept(r, &h))))
		return 0;
	/* A reader not confirmed yet (req.h: presumed) reads a timeline
	 * Redis holds; one to rebuild is rebuilt for a confirmed one. */
	n = r->presumed ? tl_ids_cached(r->app, TL_HOME, r->sess.user_id,
	    page, FEED_PAGE, ids) : -1;
	keep = n >= 0;
	if (n < 0 && !req_confirm(r, NULL, -1)) {
		fcache_end(r, &pg, NULL);
		return 0;	/* route_dispatch() runs it again */
	}
	if (n < 0)
		n = tl_ids(r->app, TL_HOME, r->sess.user_id, page, FEED_PAGE,
		    ids);
	if (n < 0 || post_cards_read(r->app, ids, n, r->sess.user_id, PC_HOME,
	    &cs) == -1) {
		fcache_end(r, &pg, NULL);
		return resp_error(r, 500, "The feed could not be read.");
	}
	/* an empty feed offers people to follow */
	if (cs.n == 0 && page == 1 && people_suggest(r->app, r->sess.user_id, 1,
	    FEED_SUGGEST, &suggest) == -1)
		found_free(&suggest);
	m.n = n;
	m.cs = cs.v;
	m.ncards = cs.n;
	if (page_load_cards(r, cs.v, cs.n, NULL, 0, NULL) == 0) {	/* one trip */
		fcache_end(r, &pg, keep && cs.n > 0 ? &m : NULL);
		view_feed(r, &cs, page, n == FEED_PAGE, &suggest);
		fcache_body(r);
	}
	fcache_end(r, &pg, NULL);
	found_free(&suggest);
	post_cards_free(&cs);
	return 0;
}

int
page_topic(struct req *r)
{
	struct topic_view v;
	long long page = field_page(r);
	char *slug = NULL;
	int rc;

	if (page == 0)
		return -1;
	if (valid_check(VALID_TOPIC, r->args[0], strlen(r->args[0]), &slug)
	    == -1)
		return resp_error(r, 404, "There is no such topic.");
	rc = topic_view_load(r->app, slug, r->user ? r->sess.user_id : 0,
	    page, FEED_PAGE, &v);
	free(slug);
	if (rc != 1)
		return resp_error(r, rc == 0 ? 404 : 500, rc == 0 ?
		    "There is no such topic." : "The topic could not be read.");
	if (page_load_cards(r, v.cards.v, v.cards.n, &v.key, 1, &v.posts) == 0)
		view_topic(r, &v);
	topic_view_free(&v);
	return 0;
}
