/* form.c -- forms that keep what the user typed; see form.h. */
#include <string.h>

#include "base/kv.h"
#include "base/valid.h"
#include "web/form.h"
#include "web/html.h"
#include "web/layout.h"

const char *
form_typed(const struct req *r, const char *field, int multiline)
{
	const struct kv *kv = kv_get(&r->form, field);
	const unsigned char *p;
	size_t i;

	if (kv == NULL || strlen(kv->val) != kv->vlen ||
	    valid_utf8(kv->val, kv->vlen, NULL) == -1)
		return NULL;
	p = (const unsigned char *)kv->val;
	for (i = 0; i < kv->vlen; i++) {
		if (multiline && (p[i] == '\n' || p[i] == '\r' || p[i] == '\t'))
			continue;
		/* C0, DEL and C1 (U+0080..U+009F: C2 80..C2 9F) */
		if (p[i] < 0x20 || p[i] == 0x7f || (p[i] == 0xc2 &&
		    p[i + 1] >= 0x80 && p[i + 1] <= 0x9f))
			return NULL;
	}
	return kv->val;
}

static int
refused(const struct req *r, const char *field)
{
	return r->bad_field != NULL && strcmp(r->bad_field, field) == 0;
}

void
form_mark(struct req *r, const char *field)
{
	if (!refused(r, field))
		return;
	html_raw(&r->body, " aria-invalid=\"true\" aria-describedby=\"err-");
	html_attr(&r->body, field);
	html_raw(&r->body, "\"");
}

void
form_reason(struct req *r, const char *field)
{
	if (!refused(r, field))
		return;
	html_raw(&r->body, "<p class=\"field-error\" role=\"alert\" id=\"err-");
	html_attr(&r->body, field);
	html_raw(&r->body, "\">");
	html_text(&r->body, r->bad_why);
	html_raw(&r->body, "</p>");
}

void
form_flash(struct req *r)
{
	if (r->bad_field == NULL || r->bad_msg[0] == '\0')
		return;
	html_raw(&r->body, "<p class=\"flash error\">");
	html_text(&r->body, r->bad_msg);
	html_raw(&r->body, "</p>");
}

void
form_post(struct req *r, const struct post_form *f)
{
	struct buf *b = &r->body;
	int compose = f->title == NULL;	/* the feed's: compact on a phone */

	/* The feed's box on a phone (tally.css): a small textarea, and the
	 * topic and the publish box (div.more) only once the form has the
	 * focus or a text; CSS alone, so it works without script too. */
	if (compose)
		html_raw(b, "<section class=\"card compose\">");
	else
		html_raw(b, "<section class=\"card\">");
	if (f->title != NULL) {
		html_raw(b, "<h1>");
		html_text(b, f->title);
		html_raw(b, "</h1>");
	}
	form_flash(r);
	html_raw(b, "<form method=\"post\" class=\"stack\" action=\"");
	html_attr(b, f->action);
	html_raw(b, "\">");
	layout_csrf(r);
	html_raw(b, "<label for=\"post-body\">What is happening?</label>"
	    "<textarea id=\"post-body\" name=\"body\" required "
	    "maxlength=\"2000\" data-count");
	form_mark(r, "body");
	/* the parser drops one line break right after the tag: a body's own
	 * first one is kept by this one */
	html_raw(b, ">\n");
	if (f->body != NULL)
		html_text(b, f->body);
	html_raw(b, "</textarea>");
	form_reason(r, "body");
	html_raw(b, "<div class=\"more\"><label for=\"post-topic\">Topic <small>letters, digits "
	    "and -; empty means general</small></label>"
	    /* a valid pattern in Chromium's v mode: the - escaped */
	    "<input id=\"post-topic\" name=\"topic\" maxlength=\"32\" "
	    "pattern=\"[A-Za-z0-9\\-]{0,32}\" placeholder=\"general\"");
	form_mark(r, "topic");
	html_raw(b, " value=\"");
	if (f->topic != NULL)
		html_attr(b, f->topic);
	html_raw(b, "\">");
	form_reason(r, "topic");
	html_raw(b, "<label class=\"check\"><input type=\"checkbox\" "
	    "name=\"publish\" value=\"1\"");
	if (f->publish)
		html_raw(b, " checked");
	html_raw(b, "> Publish now (unchecked: keep as a draft)</label>"
	    /* after the checkbox: the first "publish" field wins */
	    "<input type=\"hidden\" name=\"publish\" value=\"0\"></div>"
	    "<button type=\"submit\">");
	html_text(b, f->button);
	html_raw(b, "</button></form></section>");
}

void
form_comment(struct req *r, long long post_id, const char *body)
{
	struct buf *b = &r->body;

	html_raw(b, "<form method=\"post\" class=\"stack card\" "
	    "action=\"/posts/");
	html_int(b, post_id);
	html_raw(b, "/comments\">");
	form_flash(r);
	layout_csrf(r);
	html_raw(b, "<label for=\"comment-body\">Your comment</label>"
	    "<textarea id=\"comment-body\" name=\"body\" required "
	    "maxlength=\"2000\" data-count");
	form_mark(r, "body");
	html_raw(b, ">\n");	/* as form_post()'s */
	if (body != NULL)
		html_text(b, body);
	html_raw(b, "</textarea>");
	form_reason(r, "body");
	html_raw(b, "<button type=\"submit\">Comment</button></form>");
}
