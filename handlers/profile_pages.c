/* profile_pages.c -- tally-social's profile, follow-list and drafts
 * pages (each a model, its load and its render: web/view_social.h), and
 * the follow action. */
#include <stdio.h>
#include <string.h>

#include "base/valid.h"
#include "social/drafts.h"
#include "social/follow.h"
#include "social/people.h"
#include "social/profileview.h"
#include "social_pages.h"
#include "store/rds.h"
#include "web/act.h"
#include "web/field.h"
#include "web/flash.h"
#include "web/layout.h"
#include "web/resp.h"
#include "web/view_social.h"

#define PEOPLE_PAGE	50

/* One round trip: the profile, its page of ids (when this process knows
 * the login's id), the reader's badges and, for a reader not confirmed
 * yet (req.h: presumed), the session's copy; a copy that SQLite renews
 * rides in the page's last round trip.  Sent here, or ahead with the
 * reader's group (social_pages.h: page_ahead()). */
struct profile_first {
	struct profile_q pq;
	struct layout_q	 lq;
	int		 tickets[2];	/* its statements, sent ahead */
	int		 nids;		/* with these ids, for this viewer */
	long long	 viewer;
	long long	 ids[FEED_PAGE];
};

static void
profile_first_send(struct req *r, const char *login, long long page,
    struct profile_first *f)
{
	f->tickets[0] = f->tickets[1] = 0;
	f->nids = 0;		/* profile_sql_ahead() sets them */
	f->viewer = 0;
	profileview_send(r->app, login, page, FEED_PAGE, &f->pq);
	layout_first_send(r, &f->lq);
}

static void
profile_first_ahead(struct req *r, void *q, const void *login)
{
	profile_first_send(r, login, 1, q);
}

int
profile_ahead(struct req *r)
{
	const char *login;

	if (r->method != METHOD_GET ||
	    (login = field_path_try(r, "/u/", VALID_LOGIN)) == NULL)
		return 0;
	return page_ahead(r, sizeof(struct profile_first),
	    profile_first_ahead, login);
}

int
profile_sql_ahead(struct req *r)
{
	struct profile_first *f;

	if (r->ahead == NULL || r->method != METHOD_GET ||
	    field_path_try(r, "/u/", VALID_LOGIN) == NULL)
		return 0;
	f = r->ahead->q;
	/* the timeline's replies come first in the stash: sent first */
	if (f->pq.uid == 0 || (f->nids = timeline_ids_peek(&f->pq.tq,
	    &r->ahead->st, f->ids)) <= 0)
		return 0;
	f->viewer = r->user ? r->sess.user_id : 0;
	profileview_rest_send(r->app, f->pq.uid, f->viewer, f->ids, f->nids,
	    f->tickets);
	return f->tickets[0] > 0 || f->tickets[1] > 0;
}

static enum page_load
profile_load(struct req *r, void *vm)
{
	struct profile_view *v = vm;
	struct profile_first own, *f;
	struct req_ahead *ahead;
	long long ids[FEED_PAGE];
	long long page = field_page(r), viewer;
	const char *login = NULL;
	int rc, n = -1, first_ok, t[2] = { 0, 0 };

	if (page != 0)
		login = field_arg(r, 0, VALID_LOGIN, "There is no such user.");
	/* sent ahead for page 1 of the login the path names, as read here */
	if ((f = req_ahead_take(r, &ahead, page == 1 && login != NULL &&
	    r->ahead != NULL && strcmp(((struct profile_first *)
	    r->ahead->q)->pq.pq.login, login) == 0)) == NULL) {
		if (login == NULL)
			return PAGE_ANSWERED;
		profile_first_send(r, login, page, f = &own);
	}
	profileview_read(r->app, &f->pq);
	first_ok = layout_first_recv(r, &f->lq);
	req_ahead_read(r, ahead);
	if (!first_ok) {
		profileview_drop(&f->pq);
		req_ahead_free(ahead);
		return PAGE_AGAIN;
	}
	viewer = r->user ? r->sess.user_id : 0;
	rc = profileview_end(r->app, &f->pq, v, ids, &n);
	/* the statements sent ahead, if they asked for these */
	if (rc == 1 && n > 0 && n == f->nids && v->u.id == f->pq.uid &&
	    viewer == f->viewer && memcmp(ids, f->ids, (size_t)n *
	    sizeof(*ids)) == 0) {
		t[0] = f->tickets[0];
		t[1] = f->tickets[1];
	}
	req_ahead_free(ahead);	/* f with it */
	if (rc == 1)
		rc = profileview_rest_took(r->app, t, viewer, page, FEED_PAGE,
		    ids, n, v);
	if (rc != 1) {
		resp_error(r, rc == 0 ? 404 : 500, rc == 0 ?
		    "There is no such user." : "The profile could not be read.");
		return PAGE_ANSWERED;
	}
	/* The author's posts are read: on the user's own request only, for
	 * a user confirmed first (req.h: presumed), and by SQLite (a copy's
	 * session, whose logout Redis may have missed, writes nothing) */
	if (v->visit_due && req_own(r)) {
		if (!req_confirm(r, NULL, -1))
			return PAGE_AGAIN;
		if (req_session_held(r)) {
			profileview_visited(r->app, viewer, v);
			r->badges_read = 0;	/* may light one less */
		}
	}
	if (layout_load_cards(r, v->all.v, v->all.n, v->keys, PROFILE_NCOUNTS,
	    v->n) == -1)
		return PAGE_AGAIN;
	/* a visit to mark is not kept: the next one marks it */
	r->keep.ok = n >= 0 && !v->visit_due &&
	    cards_counted(v->all.v, v->all.n, v->n, PROFILE_NCOUNTS);
	return PAGE_RENDER;
}

static void
profile_done(void *vm)
{
	profileview_free(vm);
}

const struct page page_profile = {
	sizeof(struct profile_view), profile_load, view_profile, profile_done
};

static enum page_load
people_load(struct req *r, struct people_model *m, enum tl kind)
{
	m->kind = kind;
	if ((m->page = field_page(r)) == 0 || arg_user(r, &m->u) == -1)
		return PAGE_ANSWERED;
	if (people_follows(r->app, m->kind, m->u.id, m->page, PEOPLE_PAGE,
	    &m->ps, &m->more) == -1) {
		resp_error(r, 500, "The list could not be read.");
		return PAGE_ANSWERED;
	}
	layout_load(r);
	return PAGE_RENDER;
}

static void
people_done(void *vm)
{
	people_free(&((struct people_model *)vm)->ps);
}

static enum page_load
followers_load(struct req *r, void *vm)
{
	return people_load(r, vm, TL_FOLLOWERS);
}

static enum page_load
following_load(struct req *r, void *vm)
{
	return people_load(r, vm, TL_FOLLOWING);
}

const struct page page_followers = {
	sizeof(struct people_model), followers_load, view_people, people_done
};

const struct page page_following = {
	sizeof(struct people_model), following_load, view_people, people_done
};

/* /drafts?before=ID: the reader's drafts older than draft ID, as the
 * "Older drafts" links name it (drafts.h); without it, the newest. */
static enum page_load
drafts_load(struct req *r, void *vm)
{
	struct drafts_model *m = vm;
	long long before[2];
	int n;

	if ((n = field_ids(r, "before", before, 2)) == -1)
		return PAGE_ANSWERED;
	if (n > 1 || (n == 0 && field_has(r, "before"))) {
		resp_error(r, 400, "before: a draft's id.");
		return PAGE_ANSWERED;
	}
	m->before = n == 1 ? before[0] : 0;
	if (drafts_read(r->app, r->sess.user_id, m->before, DRAFTS_PAGE,
	    &m->cards, &m->more) == -1) {
		resp_error(r, 500, "The drafts could not be read.");
		return PAGE_ANSWERED;
	}
	if (layout_load_cards(r, m->cards.v, m->cards.n, NULL, 0, NULL) == -1)
		return PAGE_AGAIN;	/* one round trip */
	return PAGE_RENDER;
}

static void
drafts_done(void *vm)
{
	postlist_free(&((struct drafts_model *)vm)->cards);
}

const struct page page_drafts = {
	sizeof(struct drafts_model), drafts_load, view_drafts, drafts_done
};

/* A follow or an unfollow (route.h: call.user, follow_add or
 * follow_remove) of the user of path argument 0. */
int
act_follow_with(struct req *r, const struct route *rt)
{
	struct delta d = { .fam = FAM_USER_FOLLOWERS };
	struct count followers;
	struct account u;
	char loc[64];
	int add = rt->call.user == follow_add;

	if (arg_user(r, &u) == -1)
		return -1;
	if (u.id == r->sess.user_id)
		return resp_error(r, 400, "You cannot follow yourself.");
	if (rt->call.user(r->app, r->sess.user_id, u.id) < 0)
		return resp_error(r, 500, "The follow could not be saved.");
	if (req_wants_json(r)) {
		d.k1 = u.id;
		if (cstore_get(r->app, &d, 1, &followers) != 0)
			return resp_error(r, 503, "The count could not be read.");
		return act_json(r, json_pack("{s:s,s:b,s:I}", "login", u.login,
		    "following", add, "followers", (json_int_t)followers.v));
	}
	snprintf(loc, sizeof(loc), "/u/%s", u.login);
	resp_flash(r, add ? FLASH_FOLLOWED : FLASH_UNFOLLOWED);
	return act_redirect(r, loc, 0);
}
