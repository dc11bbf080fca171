/* view_notes.c -- tally-notify's pages; see view_notes.h. */
#include <string.h>

#include "web/act.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/render.h"
#include "web/resp.h"
#include "web/view_notes.h"

/* A form on the item's newest notification, with its time (at): an id
 * SQLite gave again since to another is not that one (handlers/notify.c
 * act_note_with()). */
static void
note_form(struct req *r, const struct note_item *it, const char *action,
    const char *label, const char *cls)
{
	struct buf *b = &r->body;

	/* note-act: www/tally.js sends it and changes the item in place */
	html_raw(b, "<form method=\"post\" class=\"inline note-act\" "
	    "action=\"/notifications/");
	html_int(b, it->id);
	html_raw(b, "/");
	html_text(b, action);
	html_raw(b, "\"><input type=\"hidden\" name=\"at\" value=\"");
	html_int(b, it->at);
	html_raw(b, "\">");
	layout_csrf(r);
	act_back_field(r);
	html_raw(b, "<button type=\"submit\" class=\"");
	html_attr(b, cls);
	html_raw(b, "\">");
	html_text(b, label);
	html_raw(b, "</button></form>");
}

/* "ana", "ana and bo", "ana, bo and cy", "ana, bo, cy and 2 others":
 * the newest first, each a link to the person. */
static void
note_people(struct buf *b, const struct note_item *it)
{
	long long others = it->size - it->nwho;
	int i;

	for (i = 0; i < it->nwho; i++) {
		if (i > 0 && i == it->nwho - 1 && others <= 0)
			html_raw(b, " and ");
		else if (i > 0)
			html_raw(b, ", ");
		html_raw(b, "<a href=\"/u/");
		html_url(b, it->who[i].login);
		html_raw(b, "\"><b>");
		html_text(b, it->who[i].name);
		html_raw(b, "</b></a>");
	}
	if (others > 0) {
		html_raw(b, " and ");
		html_int(b, others);
		if (others == 1)
			html_raw(b, " other");
		else
			html_raw(b, " others");
	}
}

/* The post an item is about, named by the start of its text. */
static void
note_post(struct buf *b, const struct note_item *it)
{
	html_raw(b, " <a class=\"note-post\" href=\"/posts/");
	html_int(b, it->post);
	html_raw(b, "\">");
	if (!it->post_shown)
		html_raw(b, "(a post no longer shown)");
	else if (it->excerpt[0] == '\0')
		html_int(b, it->post);
	else {
		html_raw(b, "\xe2\x80\x9c");
		html_text(b, it->excerpt);
		if (it->cut)
			html_raw(b, "\xe2\x80\xa6");
		html_raw(b, "\xe2\x80\x9d");
	}
	html_raw(b, "</a>");
}

static void
note(struct req *r, const struct note_item *it)
{
	static const struct { const char *kind, *text; } verbs[] = {
		{ "like", " liked your post" },
		{ "comment", " commented on your post" },
		{ "repost", " reposted your post" },
		{ "follow", " followed you" },
	};
	struct buf *b = &r->body;
	size_t i;

	html_raw(b, "<li data-notification-id=\"");
	html_int(b, it->id);
	html_raw(b, "\" data-group-size=\"");
	html_int(b, it->size);
	html_raw(b, "\" data-unread=\"");
	html_int(b, it->unread);
	if (it->unread > 0)
		html_raw(b, "\" class=\"note unread\">");
	else
		html_raw(b, "\" class=\"note\">");
	html_raw(b, "<p class=\"note-text\">");
	if (it->unread > 0) {
		html_raw(b, "<span class=\"note-new\">");
		html_int(b, it->unread);
		html_raw(b, " new</span> ");
	}
	note_people(b, it);
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(it->kind, verbs[i].kind) == 0)
			html_text(b, verbs[i].text);
	if (it->post > 0)
		note_post(b, it);
	html_raw(b, "</p><div class=\"note-meta\"><span class=\"muted\">");
	render_time(r, it->at);
	html_raw(b, "</span> ");	/* words apart without the stylesheet */
	if (it->unread > 0) {
		note_form(r, it, "read", "Mark read", "secondary");
		html_raw(b, " ");
	}
	note_form(r, it, "delete", it->size > 1 ? "Delete all" : "Delete",
	    "secondary");
	html_raw(b, "</div></li>");
}

/* The list's pager: "Older" after the last group shown, wherever the
 * list moved since (noteview.h); "Newer" the page before one by number,
 * the first from one after a group. */
static void
notes_pager(struct req *r, const struct notes *ns)
{
	struct buf *b = &r->body;

	html_raw(b, "<nav class=\"pager\"><span>");
	if (ns->before.at > 0)
		html_raw(b, "<a rel=\"prev\" href=\"/notifications\">"
		    "\xe2\x86\x90 Newest</a>");
	else if (ns->page > 1)
		render_page_link(r, "prev", "/notifications", NULL,
		    ns->page - 1, "\xe2\x86\x90 Newer");
	html_raw(b, "</span><span>");
	if (ns->more) {
		html_raw(b, "<a rel=\"next\" href=\"/notifications?before=");
		html_int(b, ns->last.at);
		html_raw(b, ".");
		html_int(b, ns->last.id);
		/* what page 1 showed, for the later page's read-all */
		if (ns->seen_upto > 0) {
			html_raw(b, "&amp;upto=");
			html_int(b, ns->seen_upto);
			html_raw(b, "&amp;at=");
			html_int(b, ns->seen_at);
			if (ns->seen_snap[0] != '\0') {
				html_raw(b, "&amp;snap=");
				html_url(b, ns->seen_snap);
			}
		}
		html_raw(b, "\">Older \xe2\x86\x92</a>");
	}
	html_raw(b, "</span></nav>");
}

void
view_notes(struct req *r, const void *vm)
{
	const struct notes *ns = vm;
	struct buf *b = &r->body;
	int i;

	layout_begin(r, "Notifications");
	html_raw(b, "<h1>Notifications</h1><form method=\"post\" "
	    "action=\"/notifications/read-all\" class=\"inline\">");
	layout_csrf(r);
	act_back_field(r);
	/* page 1's newest is the newest there was (a later page has it
	 * from the Older link): one that arrives after it stays unread, and
	 * its snapshot, what it saw (PostgreSQL) */
	if (ns->seen_upto > 0) {
		html_raw(b, "<input type=\"hidden\" name=\"upto\" value=\"");
		html_int(b, ns->seen_upto);
		html_raw(b, "\"><input type=\"hidden\" name=\"at\" value=\"");
		html_int(b, ns->seen_at);
		html_raw(b, "\">");
		if (ns->seen_snap[0] != '\0') {
			html_raw(b, "<input type=\"hidden\" name=\"snap\" "
			    "value=\"");
			html_attr(b, ns->seen_snap);
			html_raw(b, "\">");
		}
	}
	html_raw(b, "<button type=\"submit\" class=\"secondary\">Mark all read"
	    "</button></form><ul class=\"notes\">");
	for (i = 0; i < ns->n; i++)
		note(r, &ns->v[i]);
	html_raw(b, "</ul>");
	if (ns->n == 0)
		html_raw(b, "<p class=\"muted\">No notifications.</p>");
	notes_pager(r, ns);
	layout_end(r);
}

void
view_notices(struct req *r, const void *vm)
{
	const struct notices *ns = vm;
	struct buf *b = &r->body;
	int i;

	layout_begin(r, "Notices");
	html_raw(b, "<h1>System notices</h1>");
	for (i = 0; i < ns->n; i++) {
		html_raw(b, "<article class=\"notice\" data-notice-id=\"");
		html_int(b, ns->v[i].id);
		html_raw(b, "\"><header><b>");
		html_text(b, ns->v[i].title);
		html_raw(b, "</b>");
		render_time(r, ns->v[i].at);
		html_raw(b, "</header><div class=\"body\">");
		html_text(b, ns->v[i].body);
		html_raw(b, "</div></article>");
	}
	if (ns->n == 0)
		html_raw(b, "<p class=\"muted\">No notices yet.</p>");
	layout_end(r);
}

void
view_news(struct req *r, const void *vm)
{
	long long lit = ((const struct news_model *)vm)->lit;
	struct buf *b = &r->body;

	layout_begin(r, "News");
	html_raw(b, "<h1>What\xe2\x80\x99s new</h1><section class=\"card\">");
	if (lit > 0) {
		html_raw(b, "<p>The editors flagged something new (");
		render_time(r, lit);
		html_raw(b, "): the latest <a href=\"/notices\">notices</a> "
		    "say what it is, and your <a href=\"/feed\">feed</a> has "
		    "what the people you follow posted since.</p>");
	} else
		html_raw(b, "<p class=\"muted\">Nothing new yet.</p>");
	html_raw(b, "</section>");
	layout_end(r);
}

void
view_badges(struct req *r, const void *vm)
{
	layout_badges(r, vm);
}

void
view_badges_json(struct req *r, const void *vm)
{
	const struct badges_json_model *m = vm;

	resp_header(r, "ETag", m->etag);
	resp_text(r, 200, "application/json", m->json);
}
