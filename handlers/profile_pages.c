/* profile_pages.c -- tally-social's profile, people and follow pages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/valid.h"
#include "social/follow.h"
#include "social/people.h"
#include "social/profileview.h"
#include "social_pages.h"
#include "web/act.h"
#include "web/fcache.h"
#include "web/field.h"
#include "web/layout.h"
#include "web/resp.h"
#include "web/view_social.h"

#define PEOPLE_PAGE	50

/* A profile whose Redis part this process may have kept (web/fcache.h):
 * the SQLite part is read while Redis answers the sync.  1 shown, 0 when
 * the page is to be read whole (recording when fcache_hit() said 0).
 * A visit to mark is a write: its session is confirmed in SQLite first,
 * so such a page is read whole. */
static int
profile_kept(struct req *r, long long viewer, struct fc_hit *h)
{
	struct profile_view v;
	int rc, fc;

	memset(&v, 0, sizeof(v));
	v.u = h->u;
	rc = profile_view_rest(r->app, viewer, h->pg.page, FEED_PAGE, h->ids,
	    h->n, &v);
	fc = fcache_hit(r, h, rc != 1 || !v.visit_due || !req_own(r));
	if (rc == 1 && fc == 1 && fcache_counts(h, v.all.v, v.all.n, v.n,
	    PROFILE_NCOUNTS) == 0) {
		view_profile(r, &v);
		if (!v.visit_due)	/* else a visit may be marked */
			fcache_body(r);
		profile_view_free(&v);
		return 1;
	}
	profile_view_free(&v);
	return 0;
}

int
page_profile(struct req *r)
{
	struct profile_view v;
	long long ids[FEED_PAGE];
	long long page = field_page(r), viewer = r->user ? r->sess.user_id : 0;
	struct fc_page pg = { FC_PROFILE, page, NULL };
	struct fc_model m = { ids, 0, NULL, 0, NULL, NULL, 0 };
	struct fc_hit h;
	char *login = NULL;
	int rc, n, w;

	if (page == 0)
		return -1;
	if (r->nargs < 1 || valid_check(VALID_LOGIN, r->args[0],
	    strlen(r->args[0]), &login) == -1)
		return resp_error(r, 404, "There is no such user.");
	pg.login = login;
	if (fcache_get(r, &pg, &h) == 1 && ((w = fcache_whole(r, &h)) == 1 ||
	    (w == 0 && profile_kept(r, viewer, &h)))) {
		free(login);
		return 0;
	}
	rc = profile_view_redis(r->app, login, page, FEED_PAGE, &v, ids, &n);
	if (rc == 1)
		rc = profile_view_rest(r->app, viewer, page, FEED_PAGE, ids, n,
		    &v);
	if (rc != 1) {
		fcache_end(r, &pg, NULL);
		free(login);
		return resp_error(r, rc == 0 ? 404 : 500, rc == 0 ?
		    "There is no such user." : "The profile could not be read.");
	}
	/* The author's posts are read: on the user's own request only, and
	 * for a user confirmed first (req.h: presumed). */
	if (v.visit_due && req_own(r)) {
		if (!req_confirm(r, NULL, -1)) {
			fcache_end(r, &pg, NULL);
			profile_view_free(&v);
			free(login);
			return 0;	/* route_dispatch() runs it again */
		}
		profile_visited(r->app, viewer, v.u.id);
	}
	if (page_load_cards(r, v.all.v, v.all.n, v.keys, PROFILE_NCOUNTS,
	    v.n) == -1) {
		fcache_end(r, &pg, NULL);
		profile_view_free(&v);
		free(login);
		return 0;
	}
	m.n = n;
	m.cs = v.all.v;
	m.ncards = v.all.n;
	m.u = &v.u;
	m.more = v.n;
	m.nmore = PROFILE_NCOUNTS;
	fcache_end(r, &pg, n >= 0 ? &m : NULL);
	view_profile(r, &v);
	if (!v.visit_due)
		fcache_body(r);
	profile_view_free(&v);
	free(login);
	return 0;
}

static int
people_page(struct req *r, enum tl kind)
{
	struct account u;
	struct people ps;
	long long page = field_page(r);
	int more, rc;

	if (page == 0 || arg_user(r, &u) == -1)
		return -1;
	rc = people_follows(r->app, kind, u.id, page, PEOPLE_PAGE, &ps, &more);
	if (rc == -1) {
		people_free(&ps);
		return resp_error(r, 500, "The list could not be read.");
	}
	page_load(r);
	view_people(r, &u, kind, &ps, page, more);
	people_free(&ps);
	return 0;
}

int
page_followers(struct req *r)
{
	return people_page(r, TL_FOLLOWERS);
}

int
page_following(struct req *r)
{
	return people_page(r, TL_FOLLOWING);
}

static int
follow_action(struct req *r, int add)
{
	struct delta d = { .fam = FAM_USER_FOLLOWERS };
	struct count followers;
	struct account u;
	char loc[64];
	int rc;

	if (arg_user(r, &u) == -1)
		return -1;
	if (u.id == r->sess.user_id)
		return resp_error(r, 400, "You cannot follow yourself.");
	rc = add ? follow_add(r->app, r->sess.user_id, u.id) :
	    follow_remove(r->app, r->sess.user_id, u.id);
	if (rc < 0)
		return resp_error(r, 500, "The follow could not be saved.");
	if (req_wants_json(r)) {
		d.k1 = u.id;
		if (cstore_get(r->app, &d, 1, &followers) != 0)
			return resp_error(r, 503, "The count could not be read.");
		return act_json(r, json_pack("{s:s,s:b,s:I}", "login", u.login,
		    "following", add, "followers", (json_int_t)followers.v));
	}
	snprintf(loc, sizeof(loc), "/u/%s", u.login);
	return act_redirect(r, loc, 0);
}

int
page_follow(struct req *r)
{
	return follow_action(r, 1);
}

int
page_unfollow(struct req *r)
{
	return follow_action(r, 0);
}

