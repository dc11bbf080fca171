/* view_social.c -- tally-social's pages; see view_social.h. */
#include <stdio.h>

#include "web/html.h"
#include "web/layout.h"
#include "web/render.h"
#include "web/view_find.h"
#include "web/view_social.h"

void
view_feed(struct req *r, const void *vm)
{
	const struct feed_model *m = vm;
	const struct post_cards *cs = &m->cards;
	const struct found_list *suggest = &m->suggest;
	long long page = m->page;
	int more = m->more;

	layout_begin(r, "Feed");
	html_raw(&r->body, "<h1>Your feed</h1>");
	if (page == 1)
		render_compose(r);
	render_posts(r, cs);
	if (cs->n == 0 && page == 1)
		html_raw(&r->body, "<section class=\"card empty\"><h2>Nothing "
		    "here yet</h2><p>Your feed shows your posts and the posts "
		    "of people you follow.</p><p><a class=\"button\" "
		    "href=\"/people\">Find people to follow</a> or "
		    "<a href=\"/topics\">browse topics</a>.</p>");
	if (cs->n == 0 && page == 1 && suggest->n > 0) {
		html_raw(&r->body, "<h2>People you might follow</h2>");
		view_found(r, suggest);
	}
	if (cs->n == 0 && page == 1)
		html_raw(&r->body, "</section>");
	else if (cs->n == 0)
		html_raw(&r->body, "<p class=\"muted\">No older posts.</p>");
	render_pager(r, "/feed", page, more);
	layout_end(r);
}

void
view_topic(struct req *r, const void *vm)
{
	const struct topic_view *v = vm;
	struct buf *b = &r->body;
	char path[64];
	int i;

	layout_begin(r, v->slug);
	html_raw(b, "<h1 data-topic=\"");
	html_attr(b, v->slug);
	html_raw(b, "\">#");
	html_text(b, v->slug);
	html_raw(b, "</h1><p class=\"counts\"><span><b>");
	render_count(r, "topic-posts", &v->posts, "data-topic", v->slug);
	html_raw(b, "</b> posts</span></p>");
	if (v->best.n > 0) {
		html_raw(b, "<section class=\"card\"><h2>Best authors</h2>"
		    "<p class=\"muted\">By rating: the likes of their posts "
		    "in this topic.</p><ol class=\"best\">");
		for (i = 0; i < v->best.n; i++) {
			const struct person *p = &v->best.v[i];

			html_raw(b, "<li data-login=\"");
			html_attr(b, p->login);
			html_raw(b, "\" data-value=\"");
			html_int(b, p->num);
			html_raw(b, "\">");
			render_at_login(r, p->login);
			html_raw(b, " \xc2\xb7 rating ");
			html_int(b, p->num);
			html_raw(b, "</li>");
		}
		html_raw(b, "</ol></section>");
	}
	render_posts(r, &v->cards);
	if (v->cards.n == 0)
		html_raw(b, "<p class=\"muted\">No posts in this topic yet.</p>");
	snprintf(path, sizeof(path), "/t/%s", v->slug);
	render_pager(r, path, v->page, v->more);
	layout_end(r);
}

static void
profile_counts(struct req *r, const struct profile_view *v)
{
	static const char *const names[PROFILE_NCOUNTS] = {
		[PROFILE_POSTS] = "posts", [PROFILE_FOLLOWERS] = "followers",
		[PROFILE_FOLLOWING] = "following", [PROFILE_LIKES] = "likes",
	};
	struct buf *b = &r->body;
	int i, link;

	html_raw(b, "<p class=\"counts\">");
	for (i = 0; i < PROFILE_NCOUNTS; i++) {
		link = i == PROFILE_FOLLOWERS || i == PROFILE_FOLLOWING;
		html_raw(b, "<span>");
		if (link) {
			html_raw(b, "<a href=\"/u/");
			html_url(b, v->u.login);
			html_raw(b, "/");
			html_text(b, names[i]);
			html_raw(b, "\">");
		}
		html_raw(b, "<b>");
		render_count(r, names[i], &v->n[i], "data-login", v->u.login);
		html_raw(b, "</b> ");
		html_text(b, names[i]);
		if (link)
			html_raw(b, "</a>");
		html_raw(b, "</span>");
	}
	html_raw(b, "</p>");
}

/* The link to the drafts older than the last of cs (drafts.h); rel
 * "next" on /drafts, none on a profile (whose next page is of posts). */
static void
drafts_older(struct req *r, const struct post_cards *cs, int rel)
{
	struct buf *b = &r->body;

	if (rel)
		html_raw(b, "<a rel=\"next\" href=\"/drafts?before=");
	else
		html_raw(b, "<a href=\"/drafts?before=");
	html_int(b, cs->v[cs->n - 1].p.id);
	html_raw(b, "\">Older drafts \xe2\x86\x92</a>");
}

void
view_profile(struct req *r, const void *vm)
{
	const struct profile_view *v = vm;
	struct buf *b = &r->body;
	char path[64];

	layout_begin(r, v->u.name);
	html_raw(b, "<section class=\"card profile\" data-login=\"");
	html_attr(b, v->u.login);
	if (v->following)
		html_raw(b, "\" data-following=\"1\"><h1>");
	else
		html_raw(b, "\"><h1>");
	html_text(b, v->u.name);
	html_raw(b, " <small class=\"muted\">@");
	html_text(b, v->u.login);
	html_raw(b, "</small></h1>");
	profile_counts(r, v);
	if (r->user && !v->self)
		render_follow(r, v->u.login, v->following);
	else if (v->self)
		html_raw(b, "<p><a href=\"/people\">Find people to follow"
		    "</a> \xc2\xb7 <a href=\"/topics\">Browse topics</a> "
		    "\xc2\xb7 <a href=\"/settings\">Settings</a></p>");
	html_raw(b, "</section>");
	if (v->drafts.n > 0) {
		html_raw(b, "<h2>Your drafts</h2>");
		render_posts(r, &v->drafts);
		if (v->drafts_more) {
			html_raw(b, "<p>");
			drafts_older(r, &v->drafts, 0);
			html_raw(b, "</p>");
		}
	}
	html_raw(b, "<h2>Posts</h2>");
	render_posts(r, &v->posts);
	if (v->posts.n == 0)
		html_raw(b, "<p class=\"muted\">No posts yet.</p>");
	snprintf(path, sizeof(path), "/u/%s", v->u.login);
	render_pager(r, path, v->page, v->more);
	layout_end(r);
}

void
view_drafts(struct req *r, const void *vm)
{
	const struct drafts_model *m = vm;
	struct buf *b = &r->body;

	layout_begin(r, "Your drafts");
	html_raw(b, "<h1>Your drafts</h1>");
	render_posts(r, &m->cards);
	if (m->cards.n == 0 && m->before > 0)
		html_raw(b, "<p class=\"muted\">No older drafts.</p>");
	else if (m->cards.n == 0)
		html_raw(b, "<p class=\"muted\">No drafts.</p>");
	html_raw(b, "<nav class=\"pager\"><span>");
	if (m->before > 0)
		html_raw(b, "<a rel=\"prev\" href=\"/drafts\">"
		    "\xe2\x86\x90 Newest</a>");
	html_raw(b, "</span><span>");
	if (m->more && m->cards.n > 0)
		drafts_older(r, &m->cards, 1);
	html_raw(b, "</span></nav>");
	layout_end(r);
}

void
view_people(struct req *r, const void *vm)
{
	const struct people_model *m = vm;
	const struct account *u = &m->u;
	const struct people *ps = &m->ps;
	enum tl kind = m->kind;
	long long page = m->page;
	int more = m->more;
	const char *what = kind == TL_FOLLOWERS ? "followers" : "following";
	struct buf *b = &r->body;
	char path[80];
	int i;

	layout_begin(r, kind == TL_FOLLOWERS ? "Followers" : "Following");
	html_raw(b, "<h1>");
	html_text(b, u->name);
	html_raw(b, " \xc2\xb7 ");
	html_text(b, what);
	html_raw(b, "</h1><ul class=\"people\">");
	for (i = 0; i < ps->n; i++) {
		const struct person *p = &ps->v[i];

		html_raw(b, "<li data-login=\"");
		html_attr(b, p->login);
		html_raw(b, "\"><a href=\"/u/");
		html_url(b, p->login);
		html_raw(b, "\"><b>");
		html_text(b, p->name);
		html_raw(b, "</b> @");
		html_text(b, p->login);
		html_raw(b, "</a> <span class=\"muted\">since ");
		render_time(r, p->num);
		html_raw(b, "</span></li>");
	}
	html_raw(b, "</ul>");
	if (ps->n == 0)
		html_raw(b, "<p class=\"muted\">Nobody yet.</p>");
	snprintf(path, sizeof(path), "/u/%s/%s", u->login, what);
	render_pager(r, path, page, more);
	layout_end(r);
}
