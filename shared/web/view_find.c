/* view_find.c -- /people, /topics, /followed; see view_find.h. */
#include <stdio.h>

#include "web/act.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/render.h"
#include "web/view_find.h"

static void
person_link(struct req *r, const struct person *p)
{
	struct buf *b = &r->body;

	html_raw(b, "<a href=\"/u/");
	html_url(b, p->login);
	html_raw(b, "\"><b>");
	html_text(b, p->name);
	html_raw(b, "</b> <span class=\"muted\">@");
	html_text(b, p->login);
	html_raw(b, "</span></a>");
}

static void
search_form(struct req *r, const char *q)
{
	struct buf *b = &r->body;

	html_raw(b, "<form method=\"get\" action=\"/people\" role=\"search\" "
	    "class=\"search\"><label for=\"q\">Name or login</label>"
	    "<input id=\"q\" type=\"search\" name=\"q\" maxlength=\"64\" "
	    "autocomplete=\"off\" value=\"");
	html_attr(b, q != NULL ? q : "");
	html_raw(b, "\"><button type=\"submit\">Search</button></form>");
}

/* The back of a follow form on /people's suggestions (page): the list
 * again, keeping those it shows followed, plus (following 0) id: a
 * follow made without script comes back to the person still listed,
 * marked Following; an unfollow leaves its person to the list. */
static void
keep_back(const struct found_list *l, long long page, long long id,
    int following, char *out, size_t sz)
{
	char ids[ACT_BACK_MAX] = "";
	size_t n = 0;
	int i;

	for (i = 0; i < l->n && n < sizeof(ids); i++)
		if (l->v[i].following && l->v[i].p.id != id)
			n += (size_t)snprintf(ids + n, sizeof(ids) - n, "%s%lld",
			    n > 0 ? "." : "", l->v[i].p.id);
	if (!following && n < sizeof(ids))
		snprintf(ids + n, sizeof(ids) - n, "%s%lld", n > 0 ? "." : "",
		    id);
	int w;

	if (page > 1)
		w = snprintf(out, sz, "/people?page=%lld%s%s", page,
		    ids[0] != '\0' ? "&keep=" : "", ids);
	else
		w = snprintf(out, sz, "/people%s%s",
		    ids[0] != '\0' ? "?keep=" : "", ids);
	if (w < 0 || (size_t)w >= sz)	/* too many kept: the plain list */
		snprintf(out, sz, "/people");
}

void
view_found(struct req *r, const struct found_list *l)
{
	view_found_on(r, l, 0);
}

void
view_found_on(struct req *r, const struct found_list *l, long long page)
{
	struct buf *b = &r->body;
	char back[ACT_BACK_MAX];
	int i;

	html_raw(b, "<ul class=\"people\">");
	for (i = 0; i < l->n; i++) {
		const struct found *f = &l->v[i];

		html_raw(b, "<li data-login=\"");
		html_attr(b, f->p.login);
		if (f->following)
			html_raw(b, "\" data-following=\"1\">");
		else
			html_raw(b, "\">");
		person_link(r, &f->p);
		html_raw(b, " <span class=\"muted\">");
		render_count(r, "followers", &f->followers, "data-login",
		    f->p.login);
		render_plural(r, &f->followers, " follower");
		html_raw(b, "</span>");
		if (r->user && !f->self && page > 0) {
			keep_back(l, page, f->p.id, f->following, back,
			    sizeof(back));
			render_follow_to(r, f->p.login, f->following, back);
		} else if (r->user && !f->self)
			render_follow(r, f->p.login, f->following);
		html_raw(b, "</li>");
	}
	html_raw(b, "</ul>");
}

void
view_find_people(struct req *r, const void *vm)
{
	const struct find_model *m = vm;
	const struct found_list *l = &m->found;
	const char *q = m->q;
	long long page = m->page;
	struct buf *b = &r->body;
	int searched = q != NULL && *q != '\0';

	layout_begin(r, "People");
	html_raw(b, "<h1>People</h1>");
	search_form(r, q);
	if (searched)
		html_raw(b, "<h2>Found</h2>");
	else
		html_raw(b, "<h2>Suggestions <small class=\"muted\">the most "
		    "followed people you do not follow yet</small></h2>");
	view_found_on(r, l, searched ? 0 : page);
	if (l->n == 0 && searched)
		html_raw(b, "<p class=\"muted\">Nobody by that name yet.</p>");
	else if (l->n == 0)
		html_raw(b, "<p class=\"muted\">No suggestions: you follow "
		    "everyone we would suggest.</p>");
	/* the pager keeps q */
	html_raw(b, "<nav class=\"pager\"><span>");
	if (page > 1)
		render_page_link(r, "prev", "/people", q, page - 1,
		    "\xe2\x86\x90 Previous");
	html_raw(b, "</span><span>");
	if (l->more)
		render_page_link(r, "next", "/people", q, page + 1,
		    "Next \xe2\x86\x92");
	html_raw(b, "</span></nav>");
	layout_end(r);
}

void
view_topics(struct req *r, const void *vm)
{
	const struct topic_list *l = vm;
	struct buf *b = &r->body;
	int i;

	layout_begin(r, "Topics");
	html_raw(b, "<h1>Topics</h1><ul class=\"topics\">");
	for (i = 0; i < l->n; i++) {
		html_raw(b, "<li data-topic=\"");
		html_attr(b, l->v[i].slug);
		html_raw(b, "\"><a href=\"/t/");
		html_url(b, l->v[i].slug);
		html_raw(b, "\">#");
		html_text(b, l->v[i].slug);
		html_raw(b, "</a> <span class=\"muted\">");
		render_count(r, "topic-posts", &l->v[i].posts, "data-topic",
		    l->v[i].slug);
		render_plural(r, &l->v[i].posts, " post");
		html_raw(b, "</span></li>");
	}
	html_raw(b, "</ul>");
	if (l->n == 0)
		html_raw(b, "<p class=\"muted\">No topic has a post yet.</p>");
	layout_end(r);
}

void
view_followed(struct req *r, const void *vm)
{
	const struct people *ps = vm;
	struct buf *b = &r->body;
	struct count c = { 0, 1 };
	int i;

	layout_begin(r, "Followed");
	html_raw(b, "<h1>New from people you follow</h1>");
	if (ps->n > 0)
		html_raw(b, "<p class=\"muted\">A count clears when you open "
		    "that person\xe2\x80\x99s profile.</p>");
	html_raw(b, "<ul class=\"people\">");
	for (i = 0; i < ps->n; i++) {
		c.v = ps->v[i].num;
		html_raw(b, "<li data-login=\"");
		html_attr(b, ps->v[i].login);
		html_raw(b, "\">");
		person_link(r, &ps->v[i]);
		html_raw(b, " <span class=\"muted\">");
		render_count(r, "author-unread", &c, "data-login",
		    ps->v[i].login);
		render_plural(r, &c, " new post");
		html_raw(b, "</span></li>");
	}
	html_raw(b, "</ul>");
	if (ps->n == 0)
		html_raw(b, "<p class=\"muted\">You have seen every post of the "
		    "people you follow. <a href=\"/people\">Find more people"
		    "</a>.</p>");
	layout_end(r);
}
