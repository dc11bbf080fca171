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

/* "just now", "N min ago", "N h ago", "N d ago" into ago, or "" once
 * older than a week (or with no "now" known). */
static void
ago_text(const struct req *r, long long ms, char *ago, size_t size)
{
	long long d = r->now_ms - ms;

	ago[0] = '\0';
	if (r->now_ms <= 0)
		return;
	if (d < 60000)
		snprintf(ago, size, "just now");
	else if (d < 3600000)
		snprintf(ago, size, "%lld min ago", d / 60000);
	else if (d < 86400000)
		snprintf(ago, size, "%lld h ago", d / 3600000);
	else if (d < 7 * 86400000LL)
		snprintf(ago, size, "%lld d ago", d / 86400000);
}

static void
human_time(long long ms, char *human, size_t size)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(human, size, "%d %b %Y %H:%M UTC", &tm);
}

void
render_ago(struct req *r, long long ms)
{
	char ago[32], human[40];

	ago_text(r, ms, ago, sizeof(ago));
	if (ago[0] == '\0')
		human_time(ms, human, sizeof(human));
	html_text(&r->body, ago[0] != '\0' ? ago : human);
}

void
render_time(struct req *r, long long ms)
{
	char iso[32], human[40], ago[32];
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%MZ", &tm);
	human_time(ms, human, sizeof(human));
	ago_text(r, ms, ago, sizeof(ago));
	html_raw(&r->body, "<time datetime=\"");
	html_attr(&r->body, iso);
	if (ago[0] != '\0') {	/* the exact time on hover */
		html_raw(&r->body, "\" title=\"");
		html_attr(&r->body, human);
	}
	html_raw(&r->body, "\">");
	html_text(&r->body, ago[0] != '\0' ? ago : human);
	html_raw(&r->body, "</time>");
}

/* What a count that could not be read carries instead of its number. */
#define COUNT_FAILED	" data-failed=\"1\" title=\"This count could not " \
	"be read just now\">?"

/* One count as <TAG data-counter="NAME">N</TAG>; see render_count. */
static void
count_tag(struct req *r, const char *tag, const char *name,
    const struct count *c, const char *attr, const char *attrval)
{
	struct buf *b = &r->body;

	html_raw(b, "<");
	html_text(b, tag);	/* literals from this file */
	html_raw(b, " data-counter=\"");
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
	if (!c->ok)
		html_raw(b, COUNT_FAILED);
	else {
		html_raw(b, ">");
		html_int(b, c->v);
	}
	html_raw(b, "</");
	html_text(b, tag);
	html_raw(b, ">");
}

void
render_count(struct req *r, const char *name, const struct count *c,
    const char *attr, const char *attrval)
{
	count_tag(r, "span", name, c, attr, attrval);
}

void
render_plural(struct req *r, const struct count *c, const char *word)
{
	html_text(&r->body, word);
	if (!c->ok || c->v != 1)
		html_raw(&r->body, "s");
}

/*
 * A post's counts, in the order a reader scans them.  Each is a <b> inside
 * its <article data-post-id>, which names the post once: the counter
 * needs no data-post-id of its own (the contract allows it, no reader
 * needs it), and a feed item stays under 600 bytes (docs/BENCHMARKS.md).
 * A no-break space keeps each number with its word when the line wraps.
 * The markup is literal, written whole (as count_tag() writes it): a
 * feed has 120 of these, and escaping our own names and words a
 * character at a time was a fiftieth of a feed's time in tally-social.
 */
#define POST_COUNT(b, c, name, label) do {				\
	if ((c)->ok) {							\
		html_raw(b, "<b data-counter=\"" name "\">");		\
		html_int(b, (c)->v);					\
	} else								\
		html_raw(b, "<b data-counter=\"" name "\"" COUNT_FAILED);	\
	html_raw(b, "</b>\xc2\xa0" label);				\
	if (!(c)->ok || (c)->v != 1)					\
		html_raw(b, "s");					\
} while (0)

/*
 * A toggle: a button of the list's one form (render_posts_in) that posts
 * to /posts/ID/<act>.  Its label says the state ("Like" / "Liked"), as the
 * contract asks, so it carries no aria-pressed as well: a toggle whose
 * label changes must not also announce a pressed state (WAI-ARIA
 * practices), and the article's data-liked / data-reposted style it.
 */
#define TOGGLE(b, id, act, label) do {					\
	html_raw(b, "<button formaction=\"/posts/");			\
	html_int(b, id);						\
	html_raw(b, "/" act "\">" label "</button>");			\
} while (0)

/* When it was published: in a list, the relative time as plain text
 * ("5 min ago", or the date once older than a week); on the post's own
 * page, a <time> with the exact time on hover. */
static void
post_when(struct req *r, const struct post *p, unsigned flags)
{
	if (p->status != 1)
		html_raw(&r->body, "draft");
	else if (flags & RENDER_FULL)
		render_time(r, p->published_at);
	else
		render_ago(r, p->published_at);
	if (p->is_deleted)
		html_raw(&r->body, " \xc2\xb7 deleted");
}

/*
 * A post's byline: who, where, when.  The article's three parts are
 * plain <p>s: a <header> or <footer> inside an <article> has no role of
 * its own for assistive technology, only bytes (tally.css styles them by
 * position).  In a home feed, a followee's repost says first whose it is
 * (via: their login, or "").
 */
static void
post_byline(struct req *r, const struct post *p, const char *via,
    unsigned flags)
{
	struct buf *b = &r->body;

	html_raw(b, "<p>");
	if (via[0] != '\0') {
		html_raw(b, "<span class=\"via\">\xe2\x86\xbb <a href=\"/u/");
		html_url(b, via);
		html_raw(b, "\">@");
		html_text(b, via);
		html_raw(b, "</a> reposted</span>");
	}
	html_raw(b, "<a href=\"/u/");
	html_url(b, p->login);
	html_raw(b, "\"><b>");
	html_text(b, p->name);
	html_raw(b, "</b> @");
	html_text(b, p->login);
	html_raw(b, "</a> in <a href=\"/t/");
	html_url(b, p->slug);
	html_raw(b, "\">#");
	html_text(b, p->slug);
	html_raw(b, "</a> ");
	post_when(r, p, flags);
	html_raw(b, "</p>");
}

void
render_post(struct req *r, const struct post_card *c, unsigned flags)
{
	const struct post *p = &c->p;
	struct buf *b = &r->body;
	int link;

	/* data-post-id first: the contract's mark, as readers match it;
	 * id: the target of an action's redirect (#post-ID) */
	html_raw(b, "<article data-post-id=\"");
	html_int(b, p->id);
	html_raw(b, "\" id=\"post-");
	html_int(b, p->id);
	html_raw(b, "\"");
	if (c->liked)
		html_raw(b, " data-liked=\"1\"");
	if (c->reposted)
		html_raw(b, " data-reposted=\"1\"");
	if (c->reposted_by[0] != '\0') {
		html_raw(b, " data-reposted-by=\"");
		html_text(b, c->reposted_by);
		html_raw(b, "\"");
	}
	html_raw(b, ">");
	post_byline(r, p, c->reposted_by, flags);
	html_raw(b, "<p>");
	html_linked(b, p->body);
	html_raw(b, "</p><p>");
	/* in a list, the comment count leads to the post's page */
	link = !(flags & RENDER_FULL);
	if (link) {
		html_raw(b, "<a href=\"/posts/");
		html_int(b, p->id);
		html_raw(b, "\">");
	}
	POST_COUNT(b, &c->n[PC_COMMENTS], "post-comments", "comment");
	if (link)
		html_raw(b, "</a>");
	html_raw(b, " ");
	POST_COUNT(b, &c->n[PC_REPOSTS], "post-reposts", "repost");
	html_raw(b, " ");
	POST_COUNT(b, &c->n[PC_LIKES], "post-likes", "like");
	html_raw(b, " ");
	POST_COUNT(b, &c->n[PC_VIEWS], "post-views", "view");
	html_raw(b, " ");
	if (r->user && POST_VISIBLE(p)) {
		if (c->liked)
			TOGGLE(b, p->id, "unlike", "Liked");
		else
			TOGGLE(b, p->id, "like", "Like");
		if (c->reposted)
			TOGGLE(b, p->id, "unrepost", "Reposted");
		else
			TOGGLE(b, p->id, "repost", "Repost");
	}
	html_raw(b, "</p></article>");
}

void
render_posts_in(struct req *r, const struct post_card *v, int n,
    unsigned flags)
{
	struct buf *b = &r->body;
	int i, acts = 0;

	for (i = 0; r->user && i < n && !acts; i++)
		acts = POST_VISIBLE(&v[i].p);
	/*
	 * One form holds the list: its buttons name their action
	 * (formaction), and its one csrf (and back) field serves every item
	 * -- three forms an item, each repeating the 43-character token, were
	 * most of a feed's bytes.
	 */
	if (acts) {
		html_raw(b, "<form method=\"post\" class=\"acts\">");
		layout_csrf(r);
		act_back_field(r);
	}
	for (i = 0; i < n; i++)
		render_post(r, &v[i], flags);
	if (acts)
		html_raw(b, "</form>");
}

void
render_posts(struct req *r, const struct post_cards *cs)
{
	render_posts_in(r, cs->v, cs->n, 0);
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
	render_follow_to(r, login, following, NULL);
}

void
render_follow_to(struct req *r, const char *login, int following,
    const char *back)
{
	struct buf *b = &r->body;

	html_raw(b, "<form method=\"post\" class=\"inline follow\" action=\"/");
	if (following)
		html_raw(b, "unfollow/");
	else
		html_raw(b, "follow/");
	html_url(b, login);
	html_raw(b, "\">");
	layout_csrf(r);
	act_back_to(r, back != NULL ? back : req_uri(r));
	if (following)
		html_raw(b, "<button type=\"submit\" class=\"secondary\" "
		    "aria-pressed=\"true\" data-following=\"1\">Following"
		    "</button>");
	else
		html_raw(b, "<button type=\"submit\" aria-pressed=\"false\" "
		    "data-following=\"0\">Follow</button>");
	html_raw(b, "</form>");
}
