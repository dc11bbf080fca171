/* post_pages.c -- tally-social's post pages and actions: create, show,
 * edit, delete, like, unlike, repost, comment. */
#include <stdio.h>

#include "social/posting.h"
#include "social/postview.h"
#include "social/throttle.h"
#include "social_pages.h"
#include "web/act.h"
#include "web/field.h"
#include "web/flash.h"
#include "web/layout.h"
#include "web/resp.h"
#include "web/view_social.h"

/* body, topic, publish of a post form; -1 after a 400. */
static int
post_fields(struct req *r, const char **body, const char **slug, int *publish)
{
	const char *pub;

	if ((*body = field_need(r, "body", VALID_BODY)) == NULL)
		return -1;
	if ((*slug = field_opt(r, "topic", VALID_TOPIC, "general")) == NULL)
		return -1;
	if ((pub = field_opt(r, "publish", VALID_BOOL, "1")) == NULL)
		return -1;
	*publish = pub[0] == '1';
	return 0;
}

/* A refused post form comes back as the form page: what was typed, the
 * refused field marked, the status of the refusal (400).  -1. */
static int
post_refused(struct req *r, const char *action, const char *title,
    const char *button)
{
	const char *pub = form_typed(r, "publish", 0);
	struct post_form f = { action, title, button, form_typed(r, "body", 1),
	    form_typed(r, "topic", 0), pub == NULL || pub[0] == '1' };
	int status = r->status;

	if (r->bad_field == NULL || req_wants_json(r))
		return -1;
	buf_reset(&r->body);
	layout_load(r);
	view_post_form(r, &f);
	r->status = status;
	return -1;
}

/* A post that would create a topic: one user makes a few an hour
 * (throttle.h).  0, or -1 after a 429. */
static int
new_topic_ok(struct req *r, const char *slug)
{
	char secs[16];
	int retry;

	if (posting_topic_exists(r->app, slug) != 0 ||
	    (retry = throttle_topic(r->app, r->sess.user_id)) == 0)
		return 0;
	snprintf(secs, sizeof(secs), "%d", retry);
	resp_header(r, "Retry-After", secs);
	return resp_error(r, 429, "Too many new topics in an hour; post in an "
	    "existing topic, or try again later.");
}

/* 303 to the form's `back` at the post (web/act.h), or to the post's
 * page: a post, an edit, a comment and its delete, as a like. */
static int
redirect_post(struct req *r, long long id)
{
	char loc[48];

	if (act_back(r) != NULL)
		return act_redirect(r, NULL, id);
	snprintf(loc, sizeof(loc), "/posts/%lld", id);
	return resp_redirect(r, loc);
}

int
act_post_create(struct req *r, const struct route *rt)
{
	const char *body, *slug;
	long long id = 0;
	int publish;

	(void)rt;
	if (post_fields(r, &body, &slug, &publish) == -1)
		return post_refused(r, "/posts", "New post", "Post");
	if (new_topic_ok(r, slug) == -1)
		return -1;
	if (post_answer(r, posting_create(r->app, r->sess.user_id, slug, body,
	    publish, &id)) == -1)
		return -1;
	resp_flash(r, publish ? FLASH_PUBLISHED : FLASH_DRAFT_SAVED);
	return redirect_post(r, id);
}

/* The post of path argument 0 as the viewer may see it (flags: PV_*;
 * after: its comments' page); else answers 404 or 500 and returns -1. */
static int
arg_post(struct req *r, unsigned flags, long long after, struct post_view *v)
{
	char who[REQ_ADDR_MAX];
	int rc;

	/* a view is a navigation to the page (not an <img> or a fetch of
	 * it), counted once a half hour per user, or per address (an IPv6
	 * client's /64) for an anonymous one */
	if (!req_navigation(r))
		flags &= ~PV_VIEWED;
	req_client_key(r, who, sizeof(who));
	rc = postview_load(r->app, req_arg_id(r, 0), r->user ?
	    r->sess.user_id : 0, who, flags, after, v);

	if (rc == 1)
		return 0;
	return resp_error(r, rc == 0 ? 404 : 500, rc == 0 ?
	    "There is no such post." : "The post could not be read.");
}

/* layout_load_cards_after()'s first: the view's reply. */
static void
view_read(struct req *r, void *arg)
{
	struct post_view *v = arg;

	if (v->view_queued)
		(void)posting_view_recv(r->app);
	v->view_queued = 0;
}

static enum page_load
post_load(struct req *r, void *vm)
{
	struct post_view *v = vm;
	long long after;

	/* ?after=ID: a later page of its comments, which is no view */
	if ((after = field_int(r, "after", VALID_ID, 0)) == -1)
		return PAGE_ANSWERED;
	/* the view's script queued first, then the counts (which see it:
	 * this view shows) and the badges: one round trip */
	if (arg_post(r, PV_FULL | PV_CALLER_COUNTS | (r->method == METHOD_GET &&
	    after == 0 ? PV_VIEWED | PV_VIEW_QUEUED : 0), after, v) == -1)
		return PAGE_ANSWERED;
	layout_load_cards_after(r, view_read, v, &v->c, 1, NULL, 0, NULL);
	return PAGE_RENDER;
}

static void
post_done(void *vm)
{
	postview_free(vm);
}

const struct page page_post = {
	sizeof(struct post_view), post_load, view_post, post_done
};

static enum page_load
post_edit_load(struct req *r, void *vm)
{
	struct post_view *v = vm;

	if (arg_post(r, 0, 0, v) == -1)
		return PAGE_ANSWERED;
	if (v->c.p.user_id != r->sess.user_id || v->c.p.is_deleted) {
		resp_error(r, 403, "Only the author edits a post.");
		return PAGE_ANSWERED;
	}
	layout_load(r);
	return PAGE_RENDER;
}

const struct page page_post_edit_form = {
	sizeof(struct post_view), post_edit_load, view_post_edit, post_done
};

int
act_post_edit(struct req *r, const struct route *rt)
{
	const char *body, *slug;
	long long id = req_arg_id(r, 0);
	char action[48];
	int publish, visible = 0;

	(void)rt;
	snprintf(action, sizeof(action), "/posts/%lld/edit", id);
	if (post_fields(r, &body, &slug, &publish) == -1)
		return post_refused(r, action, "Edit post", "Save");
	/* a field left out keeps what the post has: the body alone neither
	 * publishes a draft nor moves the post to general (an empty topic
	 * is general, as on a new post; an empty publish says nothing) */
	if (!field_has(r, "topic"))
		slug = NULL;
	if (field_opt(r, "publish", VALID_BOOL, NULL) == NULL)
		publish = -1;
	/* another's post is refused before its topic is looked at: the
	 * answer said whether a topic existed (one only a draft made,
	 * which is not there for anyone else) and spent the sender's
	 * allowance of new ones */
	if (slug != NULL &&
	    (post_answer(r, posting_edit_check(r->app, id, r->sess.user_id)) ==
	    -1 || new_topic_ok(r, slug) == -1))
		return -1;
	if (post_answer(r, posting_edit(r->app, id, r->sess.user_id, body, slug,
	    publish, &visible)) == -1)
		return -1;
	resp_flash(r, visible ? FLASH_PUBLISHED : FLASH_DRAFT_SAVED);
	return redirect_post(r, id);
}

int
act_post_delete(struct req *r, const struct route *rt)
{
	(void)rt;
	if (post_answer(r, posting_delete(r->app, req_arg_id(r, 0),
	    r->sess.user_id, r->sess.is_admin)) == -1)
		return -1;
	return act_redirect(r, "/feed", act_back(r) != NULL ?
	    req_arg_id(r, 0) : 0);
}

/* A script's like, unlike or repost: the post's counts and the viewer's
 * marks as the next page shows them. */
static int
post_json(struct req *r, long long id)
{
	struct post_view v;
	const struct count *n;

	if (arg_post(r, PV_COUNTS, 0, &v) == -1)
		return -1;
	n = v.c.n;
	if (!n[PC_LIKES].ok || !n[PC_COMMENTS].ok || !n[PC_REPOSTS].ok ||
	    !n[PC_VIEWS].ok) {
		postview_free(&v);
		return resp_error(r, 503, "The counts could not be read.");
	}
	act_json(r, json_pack("{s:I,s:b,s:b,s:I,s:I,s:I,s:I}", "post_id",
	    (json_int_t)id, "liked", v.c.liked, "reposted", v.c.reposted,
	    "likes", (json_int_t)n[PC_LIKES].v, "comments",
	    (json_int_t)n[PC_COMMENTS].v, "reposts", (json_int_t)n[PC_REPOSTS].v,
	    "views", (json_int_t)n[PC_VIEWS].v));
	postview_free(&v);
	return 0;
}

/* A like, an unlike or a repost (route.h: call.post) of the post of
 * path argument 0. */
int
act_post_with(struct req *r, const struct route *rt)
{
	long long id = req_arg_id(r, 0);
	char loc[48];

	if (post_answer(r, rt->call.post(r->app, id, r->sess.user_id)) == -1)
		return -1;
	if (req_wants_json(r)) {
		if (!db_grouped(r->app->db))
			return post_json(r, id);
		/* the counts once the group is committed and applied */
		r->then = post_json;
		r->then_arg = id;
		return 0;
	}
	if (act_back(r) == NULL)
		return redirect_post(r, id);
	snprintf(loc, sizeof(loc), "/posts/%lld", id);
	return act_redirect(r, loc, id);
}

int
act_post_comment(struct req *r, const struct route *rt)
{
	const char *body;
	char loc[80];
	long long id = req_arg_id(r, 0), cid = 0, after;

	(void)rt;
	if ((body = field_need(r, "body", VALID_BODY)) == NULL) {
		if (req_wants_json(r))
			return -1;
		buf_reset(&r->body);
		layout_load(r);
		view_comment_form(r, id, form_typed(r, "body", 1));
		r->status = 400;
		return -1;
	}
	if (post_answer(r, posting_comment(r->app, id, r->sess.user_id, body,
	    &cid)) == -1)
		return -1;
	/* past the first page of comments: the page that shows it */
	if (act_back(r) == NULL && !req_wants_json(r) && cid > 0 &&
	    (after = postview_comment_page(r->app, id, cid)) > 0) {
		snprintf(loc, sizeof(loc), "/posts/%lld?after=%lld#c%lld", id,
		    after, cid);
		return resp_redirect(r, loc);
	}
	return redirect_post(r, id);
}

int
act_post_comment_delete(struct req *r, const struct route *rt)
{
	long long pid = 0;
	int rc;

	(void)rt;
	rc = posting_comment_delete(r->app, req_arg_id(r, 0), r->sess.user_id,
	    r->sess.is_admin, &pid);
	if (rc == POST_NOTFOUND)
		return resp_error(r, 404, "There is no such comment.");
	if (post_answer(r, rc) == -1)
		return -1;
	return redirect_post(r, pid);
}

