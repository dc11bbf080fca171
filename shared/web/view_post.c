/* view_post.c -- a post's page and its forms; see view_social.h. */
#include <stdio.h>
#include <string.h>

#include "web/form.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/render.h"
#include "web/view_social.h"

static void
comment(struct req *r, const struct comment *c)
{
	struct buf *b = &r->body;

	html_raw(b, "<div class=\"card comment\" id=\"c");
	html_int(b, c->id);
	html_raw(b, "\" data-comment-id=\"");
	html_int(b, c->id);
	html_raw(b, "\"><a href=\"/u/");
	html_url(b, c->login);
	html_raw(b, "\"><b>");
	html_text(b, c->name);
	html_raw(b, "</b></a> ");
	render_time(r, c->created_at);
	html_raw(b, "<div class=\"body\">");
	html_linked(b, c->body);
	html_raw(b, "</div>");
	if (r->user && (c->user_id == r->sess.user_id || r->sess.is_admin)) {
		html_raw(b, "<form method=\"post\" class=\"inline\" "
		    "action=\"/comments/");
		html_int(b, c->id);
		html_raw(b, "/delete\" data-confirm=\"Delete this comment?\">");
		layout_csrf(r);
		html_raw(b, "<button type=\"submit\" class=\"link\">Delete"
		    "</button></form>");
	}
	html_raw(b, "</div>");
}

/* Links to the first page of comments and to the next (postview.h). */
static void
comments_pager(struct req *r, const struct post_view *v)
{
	struct buf *b = &r->body;

	if (v->comments_after == 0 && !v->comments_more)
		return;
	html_raw(b, "<nav class=\"pager\"><span>");
	if (v->comments_after > 0) {
		html_raw(b, "<a rel=\"first\" href=\"/posts/");
		html_int(b, v->c.p.id);
		html_raw(b, "#comments\">\xe2\x86\x90 First comments</a>");
	}
	html_raw(b, "</span><span>");
	if (v->comments_more) {
		html_raw(b, "<a rel=\"next\" href=\"/posts/");
		html_int(b, v->c.p.id);
		html_raw(b, "?after=");
		html_int(b, v->comments[v->ncomments - 1].id);
		html_raw(b, "#comments\">Later comments \xe2\x86\x92</a>");
	}
	html_raw(b, "</span></nav>");
}

static void
comments(struct req *r, const struct post_view *v)
{
	const struct post *p = &v->c.p;
	struct buf *b = &r->body;
	int i;

	html_raw(b, "<section class=\"comments\" id=\"comments\">"
	    "<h2>Comments</h2>");
	for (i = 0; i < v->ncomments; i++)
		comment(r, &v->comments[i]);
	comments_pager(r, v);
	if (r->user && POST_VISIBLE(p))
		form_comment(r, p->id, NULL);
	else if (v->ncomments == 0 && p->status != 1 && !p->is_deleted)
		/* never a heading over nothing */
		html_raw(b, "<p class=\"muted\">Comments open once it is "
		    "published.</p>");
	else if (v->ncomments == 0)
		html_raw(b, "<p class=\"muted\">No comments yet.</p>");
	html_raw(b, "</section>");
}

/* A post's tab title: "@login: " and the start of its text (whole UTF-8
 * characters, an ellipsis when cut). */
static void
post_title(const struct post *p, char *out, size_t sz)
{
	size_t n = strlen(p->body), max = 60;

	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)p->body[n] & 0xC0) == 0x80)
			n--;	/* not inside a character */
	}
	snprintf(out, sz, "@%s: %.*s%s", p->login, (int)n, p->body,
	    n < strlen(p->body) ? "\xe2\x80\xa6" : "");
}

void
view_post(struct req *r, const void *vm)
{
	const struct post_view *v = vm;
	const struct post *p = &v->c.p;
	struct buf *b = &r->body;
	char title[128];

	post_title(p, title, sizeof(title));
	layout_begin(r, title);
	render_posts_in(r, &v->c, 1, RENDER_FULL);
	if (r->user && (p->user_id == r->sess.user_id || r->sess.is_admin) &&
	    !p->is_deleted) {
		html_raw(b, "<div class=\"actions\">");
		if (p->user_id == r->sess.user_id && p->status != 1) {
			/* a draft is published from its page, as it is */
			html_raw(b, "<form method=\"post\" class=\"inline\" "
			    "action=\"/posts/");
			html_int(b, p->id);
			html_raw(b, "/edit\">");
			layout_csrf(r);
			html_raw(b, "<input type=\"hidden\" name=\"body\" value=\"");
			html_attr(b, p->body);
			html_raw(b, "\"><input type=\"hidden\" name=\"topic\" "
			    "value=\"");
			html_attr(b, p->slug);
			html_raw(b, "\"><input type=\"hidden\" name=\"publish\" "
			    "value=\"1\"><button type=\"submit\">Publish</button>"
			    "</form> ");
		}
		if (p->user_id == r->sess.user_id) {
			html_raw(b, "<a class=\"button secondary\" href=\"/posts/");
			html_int(b, p->id);
			html_raw(b, "/edit\">Edit</a> ");
		}
		html_raw(b, "<form method=\"post\" class=\"inline\" action=\"/posts/");
		html_int(b, p->id);
		html_raw(b, "/delete\" data-confirm=\"Delete this post?\">");
		layout_csrf(r);
		html_raw(b, "<button type=\"submit\" class=\"danger\">Delete"
		    "</button></form></div>");
	}
	comments(r, v);
	layout_end(r);
}

void
view_post_edit(struct req *r, const void *vm)
{
	const struct post *p = &((const struct post_view *)vm)->c.p;
	char action[48];
	struct post_form f = { action, "Edit post", "Save", p->body, p->slug,
	    p->status == 1 };

	snprintf(action, sizeof(action), "/posts/%lld/edit", p->id);
	layout_begin(r, "Edit post");
	form_post(r, &f);
	layout_end(r);
}

void
view_post_form(struct req *r, const struct post_form *f)
{
	layout_begin(r, f->title);
	form_post(r, f);
	layout_end(r);
}

void
view_comment_form(struct req *r, long long post_id, const char *body)
{
	struct buf *b = &r->body;

	layout_begin(r, "Comment");
	html_raw(b, "<h1>Your comment</h1><p><a href=\"/posts/");
	html_int(b, post_id);
	html_raw(b, "\">Back to the post</a></p>");
	form_comment(r, post_id, body);
	layout_end(r);
}
