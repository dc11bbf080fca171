/* render.c -- shared HTML pieces of the social pages; see render.h. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "web/act.h"
#include "web/form.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/render.h"
#include "web/resp.h"

void
render_at_login(struct req *r, const char *login)
{
	html_raw(&r->body, "<a href=\"/u/");
	html_url(&r->body, login);
	html_raw(&r->body, "\">@");
	html_text(&r->body, login);
	html_raw(&r->body, "</a>");
}

void
render_time(struct req *r, long long ms)
{
	char iso[32], human[40], ago[32];
	time_t t = (time_t)(ms / 1000);
	long long d = r->now_ms - ms;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
	strftime(human, sizeof(human), "%d %b %Y %H:%M UTC", &tm);
	/* relative while it is recent, the exact time on hover (title) */
	ago[0] = '\0';
	if (r->now_ms > 0 && d < 60000)
		snprintf(ago, sizeof(ago), "just now");
	else if (r->now_ms > 0 && d < 3600000)
		snprintf(ago, sizeof(ago), "%lld min ago", d / 60000);
	else if (r->now_ms > 0 && d < 86400000)
		snprintf(ago, sizeof(ago), "%lld h ago", d / 3600000);
	else if (r->now_ms > 0 && d < 7 * 86400000LL)
		snprintf(ago, sizeof(ago), "%lld d ago", d / 86400000);
	html_raw(&r->body, "<time datetime=\"");
	html_attr(&r->body, iso);
	html_raw(&r->body, "\" title=\"");
	html_attr(&r->body, human);
	html_raw(&r->body, "\">");
	html_text(&r->body, ago[0] != '\0' ? ago : human);
	html_raw(&r->body, "</time>");
}

void
render_count(struct req *r, const char *name, const struct count *c,
    const char *attr, const char *attrval)
{
	struct buf *b = &r->body;

	html_raw(b, "<span data-counter=\"");
	html_attr(b, name);
	html_raw(b, "\"");
	if (attr != NULL) {
		html_raw(b, " ");
		html_text(b, attr);	/* a literal from our own code */
		html_raw(b, "=\"");
		html_attr(b, attrval);
		html_raw(b, "\"");
	}
	/* A count that could not be read says so; it is never a 0. */
	if (!c->ok) {
		html_raw(b, " data-failed=\"1\" title=\"This count could not "
		    "be read just now\">?</span>");
		return;
	}
	html_raw(b, ">");
	html_int(b, c->v);
	html_raw(b, "</span>");
}

static const char *const post_counter_names[PC_NCOUNTS] = {
	[PC_LIKES] = "post-likes", [PC_COMMENTS] = "post-comments",
	[PC_REPOSTS] = "post-reposts", [PC_VIEWS] = "post-views",
};
static const char *const post_counter_labels[PC_NCOUNTS] = {
	[PC_LIKES] = " like", [PC_COMMENTS] = " comment",
	[PC_REPOSTS] = " repost", [PC_VIEWS] = " view",
};

void
render_plural(struct req *r, const struct count *c, const char *word)
{
	html_text(&r->body, word);
	if (!c->ok || c->v != 1)
		html_raw(&r->body, "s");
}

/* A toggle of a post's form: it posts to /posts/ID/<act>. */
static void
toggle(struct req *r, long long id, const char *act, int on,
    const char *label)
{
	struct buf *b = &r->body;

	html_raw(b, "<button type=\"submit\" class=\"link\" formaction=\"/posts/");
	html_int(b, id);
	html_raw(b, "/");
	html_text(b, act);
	if (on)
		html_raw(b, "\" aria-pressed=\"true\">");
	else
		html_raw(b, "\" aria-pressed=\"false\">");
	html_text(b, label);
	html_raw(b, "</button>");
}

/* The post's actions: one form, one button per action, each naming its
 * own target (formaction); the like button says and toggles the state. */
static void
post_actions(struct req *r, const struct post_card *c)
{
	struct buf *b = &r->body;
	long long id = c->p.id;

	html_raw(b, "<form method=\"post\" class=\"inline acts\" action=\"/posts/");
	html_int(b, id);
	if (c->liked)
		html_raw(b, "/unlike\">");
	else
		html_raw(b, "/like\">");
	page_csrf(r);
	act_back_field(r);
	toggle(r, id, c->liked ? "unlike" : "like", c->liked,
	    c->liked ? "Liked" : "Like");
	toggle(r, id, "repost", c->reposted,
	    c->reposted ? "Reposted" : "Repost");
	html_raw(b, "</form>");
}

void
render_post(struct req *r, const struct post_card *c, unsigned flags)
{
	const struct post *p = &c->p;
	struct buf *b = &r->body;
	char idattr[24];
	int j;

	snprintf(idattr, sizeof(idattr), "%lld", p->id);

	/* data-post-id first: the contract's mark, as readers match it */
	html_raw(b, "<article data-post-id=\"");
	html_int(b, p->id);
	html_raw(b, "\" id=\"post-");
	html_int(b, p->id);
	html_raw(b, "\"");
	if (c->liked)
		html_raw(b, " data-liked=\"1\"");
	if (c->reposted)
		html_raw(b, " data-reposted=\"1\"");
	html_raw(b, "><header><span><a href=\"/u/");
	html_url(b, p->login);
	html_raw(b, "\" data-login=\"");
	html_attr(b, p->login);
	html_raw(b, "\"><b>");
	html_text(b, p->name);
	html_raw(b, "</b> @");
	html_text(b, p->login);
	html_raw(b, "</a> in <a href=\"/t/");
	html_url(b, p->slug);
	html_raw(b, "\" data-topic=\"");
	html_attr(b, p->slug);
	html_raw(b, "\">#");
	html_text(b, p->slug);
	html_raw(b, "</a></span><a href=\"/posts/");
	html_int(b, p->id);
	html_raw(b, "\">");
	if (p->status == 1)
		render_time(r, p->published_at);
	else
		html_raw(b, "draft");
	if (p->is_deleted)
		html_raw(b, " \xc2\xb7 deleted");
	html_raw(b, "</a></header><div class=\"body\">");
	html_text(b, p->body);
	html_raw(b, "</div><p class=\"counts\">");
	for (j = 0; j < PC_NCOUNTS; j++) {
		html_raw(b, "<span>");
		render_count(r, post_counter_names[j], &c->n[j], "data-post-id",
		    idattr);
		render_plural(r, &c->n[j], post_counter_labels[j]);
		html_raw(b, "</span>");
	}
	html_raw(b, "</p><footer>");
	if (!(flags & RENDER_FULL)) {
		html_raw(b, "<a href=\"/posts/");
		html_int(b, p->id);
		html_raw(b, "\">Comments</a>");
	}
	if (r->user && POST_VISIBLE(p))
		post_actions(r, c);
	html_raw(b, "</footer></article>");
}

void
render_posts(struct req *r, const struct post_cards *cs)
{
	int i;

	for (i = 0; i < cs->n; i++)
		render_post(r, &cs->v[i], 0);
}

void
render_page_link(struct req *r, const char *rel, const char *path,
    const char *q, long long page, const char *label)
{
	struct buf *b = &r->body;

	html_raw(b, "<a rel=\"");
	html_text(b, rel);
	html_raw(b, "\" href=\"");
	html_url(b, path);
	html_raw(b, "?");
	if (q != NULL && *q != '\0') {
		html_raw(b, "q=");
		html_url(b, q);
		html_raw(b, "&amp;");
	}
	html_raw(b, "page=");
	html_int(b, page);
	html_raw(b, "\">");
	html_text(b, label);
	html_raw(b, "</a>");
}

void
render_pager(struct req *r, const char *path, long long page, int has_more)
{
	struct buf *b = &r->body;

	html_raw(b, "<nav class=\"pager\"><span>");
	if (page > 1)
		render_page_link(r, "prev", path, NULL, page - 1,
		    "\xe2\x86\x90 Newer");
	html_raw(b, "</span><span>");
	if (has_more)
		render_page_link(r, "next", path, NULL, page + 1,
		    "Older \xe2\x86\x92");
	html_raw(b, "</span></nav>");
}

void
render_compose(struct req *r)
{
	struct post_form f = { "/posts", NULL, "Post", NULL, NULL, 1 };

	form_post(r, &f);
}

void
render_follow(struct req *r, const char *login, int following)
{
	struct buf *b = &r->body;

	html_raw(b, "<form method=\"post\" class=\"inline follow\" action=\"/");
	if (following)
		html_raw(b, "unfollow/");
	else
		html_raw(b, "follow/");
	html_url(b, login);
	html_raw(b, "\">");
	page_csrf(r);
	act_back_field(r);
	if (following)
		html_raw(b, "<button type=\"submit\" class=\"secondary\" "
		    "aria-pressed=\"true\" data-following=\"1\">Following"
		    "</button>");
	else
		html_raw(b, "<button type=\"submit\" aria-pressed=\"false\" "
		    "data-following=\"0\">Follow</button>");
	html_raw(b, "</form>");
}
