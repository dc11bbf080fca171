/* post_pages.c -- tally-social's post pages and actions: create, show,
 * edit, delete, like, unlike, repost, comment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "count/cstore.h"
#include "count/lb.h"
#include "social/account.h"
#include "social/follow.h"
#include "social/notify.h"
#include "social/pcache.h"
#include "social/post.h"
#include "social/posting.h"
#include "social/timeline.h"
#include "social_pages.h"
#include "web/field.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/render.h"
#include "web/resp.h"

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

static int
redirect_post(struct req *r, long long id)
{
	char loc[48];

	snprintf(loc, sizeof(loc), "/posts/%lld", id);
	return resp_redirect(r, loc);
}

int
page_post_create(struct req *r)
{
	const char *body, *slug;
	long long id = 0;
	int publish;

	if (post_fields(r, &body, &slug, &publish) == -1)
		return -1;
	if (post_answer(r, post_create(r->app, r->sess.user_id, slug, body,
	    publish, &id)) == -1)
		return -1;
	return redirect_post(r, id);
}

static void
comments(struct req *r, const struct post *p)
{
	struct dbq *s = db_stmt(&r->app->db, STMT_COMMENTS_OF_POST);
	struct buf *b = &r->body;
	long long cid, author;

	html_raw(b, "<section class=\"comments\"><h2>Comments</h2>");
	if (s != NULL) {
		dbq_bind_i64(s, 1, p->id);
		while (dbq_step(s) == DBQ_ROW) {
			cid = dbq_i64(s, 0);
			author = dbq_i64(s, 1);
			html_raw(b, "<div class=\"card comment\" id=\"c");
			html_int(b, cid);
			html_raw(b, "\" data-comment-id=\"");
			html_int(b, cid);
			html_raw(b, "\"><a href=\"/u/");
			html_url(b, dbq_text(s, 2));
			html_raw(b, "\"><b>");
			html_text(b, dbq_text(s, 3));
			html_raw(b, "</b></a> ");
			render_time(r, dbq_i64(s, 5));
			html_raw(b, "<div class=\"body\">");
			html_text(b, dbq_text(s, 4));
			html_raw(b, "</div>");
			if (r->user && (author == r->sess.user_id ||
			    r->sess.is_admin)) {
				html_raw(b, "<form method=\"post\" class=\"inline\" "
				    "action=\"/comments/");
				html_int(b, cid);
				html_raw(b, "/delete\" data-confirm=\"Delete this "
				    "comment?\">");
				page_csrf(r);
				html_raw(b, "<button type=\"submit\" class=\"link\">"
				    "Delete</button></form>");
			}
			html_raw(b, "</div>");
		}
		db_done(s);
	}
	if (r->user && POST_VISIBLE(p)) {
		html_raw(b, "<form method=\"post\" class=\"stack card\" "
		    "action=\"/posts/");
		html_int(b, p->id);
		html_raw(b, "/comments\">");
		page_csrf(r);
		html_raw(b, "<label>Your comment <textarea name=\"body\" required "
		    "maxlength=\"2000\"></textarea></label><button type=\"submit\">"
		    "Comment</button></form>");
	}
	html_raw(b, "</section>");
}

/* The post of path argument 0 if the viewer may see it; else answers. */
static int
arg_post(struct req *r, struct post *p)
{
	long long id = req_arg_id(r, 0);
	int rc;

	if (id == 0)
		return resp_error(r, 404, "There is no such post.");
	if ((rc = post_get(&r->app->db, id, p)) != 1)
		return resp_error(r, rc == 0 ? 404 : 500, "There is no such post.");
	if (!post_can_see(p, r->user ? r->sess.user_id : 0)) {
		post_free(p);
		return resp_error(r, 404, "There is no such post.");
	}
	return 0;
}

int
page_post(struct req *r)
{
	struct buf *b = &r->body;
	struct post p;

	if (arg_post(r, &p) == -1)
		return -1;
	page_begin(r, "Post");
	if (r->method == METHOD_GET && POST_VISIBLE(&p))
		post_view(r->app, p.id);
	render_post(r, &p, RENDER_FULL, NULL);
	if (r->user && (p.user_id == r->sess.user_id || r->sess.is_admin) &&
	    !p.is_deleted) {
		html_raw(b, "<p class=\"actions\">");
		if (p.user_id == r->sess.user_id) {
			html_raw(b, "<a href=\"/posts/");
			html_int(b, p.id);
			html_raw(b, "/edit\">Edit</a> ");
		}
		html_raw(b, "<form method=\"post\" class=\"inline\" action=\"/posts/");
		html_int(b, p.id);
		html_raw(b, "/delete\" data-confirm=\"Delete this post?\">");
		page_csrf(r);
		html_raw(b, "<button type=\"submit\" class=\"link\">Delete</button>"
		    "</form></p>");
	}
	comments(r, &p);
	page_end(r);
	post_free(&p);
	return 0;
}

int
page_post_edit_form(struct req *r)
{
	struct buf *b = &r->body;
	struct post p;

	if (arg_post(r, &p) == -1)
		return -1;
	if (p.user_id != r->sess.user_id || p.is_deleted) {
		post_free(&p);
		return resp_error(r, 403, "Only the author edits a post.");
	}
	page_begin(r, "Edit post");
	html_raw(b, "<section class=\"card\"><h1>Edit post</h1>"
	    "<form method=\"post\" class=\"stack\" action=\"/posts/");
	html_int(b, p.id);
	html_raw(b, "/edit\">");
	page_csrf(r);
	html_raw(b, "<label>Text <textarea name=\"body\" required "
	    "maxlength=\"2000\">");
	html_text(b, p.body);
	html_raw(b, "</textarea></label><label>Topic <input name=\"topic\" "
	    "maxlength=\"32\" value=\"");
	html_attr(b, p.slug);
	html_raw(b, "\"></label><label><span><input type=\"checkbox\" "
	    "name=\"publish\" value=\"1\"");
	if (p.status == 1)
		html_raw(b, " checked");
	html_raw(b, " class=\"check\"> Published</span></label>"
	    "<input type=\"hidden\" name=\"publish\" value=\"0\">"
	    "<button type=\"submit\">Save</button></form></section>");
	page_end(r);
	post_free(&p);
	return 0;
}

int
page_post_edit(struct req *r)
{
	const char *body, *slug;
	long long id = req_arg_id(r, 0);
	int publish;

	if (post_fields(r, &body, &slug, &publish) == -1)
		return -1;
	if (post_answer(r, post_edit(r->app, id, r->sess.user_id, body, slug,
	    publish)) == -1)
		return -1;
	return redirect_post(r, id);
}

int
page_post_delete(struct req *r)
{
	if (post_answer(r, post_delete(r->app, req_arg_id(r, 0),
	    r->sess.user_id, r->sess.is_admin)) == -1)
		return -1;
	return resp_redirect(r, "/feed");
}

static int
post_action(struct req *r, int (*fn)(struct app *, long long, long long))
{
	long long id = req_arg_id(r, 0);

	if (post_answer(r, fn(r->app, id, r->sess.user_id)) == -1)
		return -1;
	return redirect_post(r, id);
}

int
page_post_like(struct req *r)
{
	return post_action(r, post_like);
}

int
page_post_unlike(struct req *r)
{
	return post_action(r, post_unlike);
}

int
page_post_repost(struct req *r)
{
	return post_action(r, post_repost);
}

int
page_comment(struct req *r)
{
	const char *body;
	long long id = req_arg_id(r, 0), cid = 0;

	if ((body = field_need(r, "body", VALID_BODY)) == NULL)
		return -1;
	if (post_answer(r, post_comment(r->app, id, r->sess.user_id, body,
	    &cid)) == -1)
		return -1;
	return redirect_post(r, id);
}

int
page_comment_delete(struct req *r)
{
	long long pid = 0;
	int rc;

	rc = post_comment_delete(r->app, req_arg_id(r, 0), r->sess.user_id,
	    r->sess.is_admin, &pid);
	if (rc == POST_NOTFOUND)
		return resp_error(r, 404, "There is no such comment.");
	if (post_answer(r, rc) == -1)
		return -1;
	return redirect_post(r, pid);
}

