/* layout.c -- the shared page frame; see layout.h.
 * No inline script or style anywhere (the CSP forbids both): behaviour
 * lives in /static/tally.js and reads data-* attributes. */
#include "base/clock.h"
#include "social/badges.h"
#include "social/postlist.h"
#include "social/sesscache.h"
#include "web/flash.h"
#include "web/html.h"
#include "web/keep.h"
#include "web/layout.h"

void
layout_csrf(struct req *r)
{
	html_raw(&r->body, "<input type=\"hidden\" name=\"csrf\" value=\"");
	html_attr(&r->body, r->csrf);
	html_raw(&r->body, "\">");
}

/* One badge; v == BADGE_PENDING: not read for this page (the error
 * page's, below); v < 0 otherwise: it could not be read ("?",
 * data-failed). */
#define BADGE_PENDING	(-2)

static void
badge(struct req *r, const char *href, const char *label, const char *name,
    long long v)
{
	struct buf *b = &r->body;

	html_raw(b, "<a href=\"");
	html_attr(b, href);
	html_raw(b, "\">");
	html_text(b, label);
	html_raw(b, " <span class=\"badge\"");
	if (v == 0)
		html_raw(b, " data-zero");
	html_raw(b, " data-counter=\"");
	html_attr(b, name);
	if (v == BADGE_PENDING) {
		html_raw(b, "\" data-pending=\"1\" title=\"This count is read "
		    "by the page\xe2\x80\x99s script\">\xe2\x80\xa6</span></a>");
		return;
	}
	if (v < 0) {
		html_raw(b, "\" data-failed=\"1\" title=\"This count could not "
		    "be read just now\">?</span></a>");
		return;
	}
	html_raw(b, "\">");
	html_int(b, v);
	html_raw(b, "</span></a>");
}

void
layout_badges(struct req *r, const struct badges *bd)
{
	/* NULL: the error page, which reads nothing (resp_error() does no
	 * I/O, issue 45) and may run before any load, or after one that
	 * failed.  Its header still has the four badges, marked pending:
	 * tally.js reads /badges.json at once and fills them, as it keeps
	 * every page's badges live; without script the links stay. */
	static const struct badges pending = { BADGE_PENDING, BADGE_PENDING,
	    BADGE_PENDING, BADGE_PENDING };

	if (bd == NULL)
		bd = &pending;
	html_raw(&r->body, "<span class=\"badges\" data-badges>");
	badge(r, "/notifications", "Notifications", "unread-notifications",
	    bd->notifications);
	badge(r, "/notices", "Notices", "unread-notices", bd->notices);
	badge(r, "/followed", "Followed", "unread-followed", bd->followed);
	badge(r, "/news", "News", "red-dot", bd->red_dot);
	html_raw(&r->body, "</span>");
}

void
layout_load(struct req *r)
{
	/* (a presumed page loads with layout_load_cards(): not here) */
	if (r->presumed && !req_confirm(r, NULL, -1))
		return;
	if (!r->badges_read)
		r->have_badges = r->user &&
		    badges_get(r->app, r->sess.user_id, &r->badges) == 0;
}

void
layout_first_send(struct req *r, struct layout_q *q)
{
	req_session_send(r, &q->sq);
	q->badges = r->user && !r->badges_read;
	if (q->badges)
		badges_send(r->app, r->sess.user_id, &q->bq);
}

int
layout_first_recv(struct req *r, struct layout_q *q)
{
	/* every reply read before the session is decided (its SQLite
	 * check may follow; nothing is sent before the last reply) */
	req_session_read(r, &q->sq);
	if (q->badges)
		badges_read(r->app, &q->bq);
	if (!req_session_decide(r, &q->sq)) {
		if (q->badges)
			badges_drop(&q->bq);
		return 0;
	}
	if (q->badges) {
		r->have_badges = badges_end(r->app, &q->bq, &r->badges) == 0;
		r->badges_read = 1;
	}
	return 1;
}

int
layout_load_cards(struct req *r, struct post_card *cs, int n,
    const struct delta *more, int nmore, struct count *more_out)
{
	return layout_load_cards_after(r, NULL, NULL, cs, n, more, nmore,
	    more_out);
}

int
layout_load_cards_after(struct req *r, void (*first)(struct req *, void *),
    void *arg, struct post_card *cs, int n, const struct delta *more,
    int nmore, struct count *more_out)
{
	struct sesscache_q sq, pq = { 0 };
	struct badges_q bq;
	struct cards_q cq;
	struct session ss;
	long long gen = -1;
	int cached = 0, counts = n + nmore > 0, presumed = r->presumed;
	int badges = r->user && !r->badges_read;

	/* In the queue: the presumed session (or the copy of one SQLite
	 * confirmed, to renew: req_session_decide()), the badges, the counts.
	 * The session and badge replies are read before the counts' (whose
	 * misses send loads); the session is decided before the badges'
	 * end (a miss sends more, and computes for the user it names). */
	if (presumed)
		sesscache_send(r->app->rds, r->sess.user_id, r->sid_hex, &sq);
	else if (r->sess_put && req_cookie(r, "sid") != NULL) {
		sesscache_put_send(r->app->rds, req_cookie(r, "sid"), &r->sess,
		    r->sess_gen, &pq);
		r->sess_put = 0;
	}
	if (badges)
		badges_send(r->app, r->sess.user_id, &bq);
	if (counts)
		postlist_counts_send(r->app, cs, n, more, nmore,
		    keep_counts(r), &cq);
	if (first != NULL)
		first(r, arg);
	if (presumed)
		cached = sesscache_recv(r->app->rds, &sq, clock_wall_ms(),
		    &ss, &gen);
	else
		sesscache_put_recv(r->app->rds, &pq);
	if (badges)
		badges_read(r->app, &bq);
	if (counts)
		postlist_counts_recv(r->app, &cq, cs, more_out);
	if (presumed && !req_confirm(r, cached ? &ss : NULL, gen)) {
		if (badges)
			badges_drop(&bq);
		return -1;
	}
	if (presumed)
		r->sess_copy = cached;
	if (badges)
		r->have_badges = badges_end(r->app, &bq, &r->badges) == 0;
	return 0;
}

void
layout_begin(struct req *r, const char *title)
{
	/* badges that could not be read show as "?", never as 0 */
	static const struct badges failed = { -1, -1, -1, -1 };

	layout_frame(r, title, r->have_badges ? &r->badges : r->user ? &failed :
	    NULL);
}

void
layout_frame(struct req *r, const char *title, const struct badges *bd)
{

	struct buf *b = &r->body;

	html_raw(b, "<!doctype html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\">"
	    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
	    "<title>");
	html_text(b, title);
	html_raw(b, " \xc2\xb7 tally</title>"
	    "<link rel=\"stylesheet\" href=\"/static/tally.css\">"
	    "<link rel=\"icon\" href=\"/static/favicon.svg\" type=\"image/svg+xml\">"
	    "<script src=\"/static/tally.js\" defer></script>"
	    "</head><body><header class=\"top\"><a class=\"brand\" href=\"/\">tally</a>");
	/* the badges beside the navigation, not in it: a phone shows the
	 * links on the brand's row and the badges on a row of their own */
	if (r->user)
		layout_badges(r, bd);
	html_raw(b, "<nav>");
	if (r->user) {
		html_raw(b, "<a href=\"/feed\">Feed</a>"
		    "<a href=\"/people\">People</a>"
		    "<a href=\"/topics\">Topics</a>");
		html_raw(b, "<a href=\"/u/");
		html_url(b, r->sess.login);
		html_raw(b, "\" data-me=\"");
		html_attr(b, r->sess.login);
		html_raw(b, "\">@");
		html_text(b, r->sess.login);
		html_raw(b, "</a>");
		if (r->sess.is_admin)
			html_raw(b, "<a href=\"/admin\">Admin</a>");
		html_raw(b, "<form method=\"post\" action=\"/logout\" class=\"inline\">");
		layout_csrf(r);
		html_raw(b, "<button type=\"submit\" class=\"link\">Log out</button></form>");
	} else if (r->identified) {
		html_raw(b, "<a href=\"/people\">People</a>"
		    "<a href=\"/topics\">Topics</a>"
		    "<a href=\"/login\">Log in</a>"
		    "<a href=\"/signup\">Sign up</a>");
	} else		/* not looked up (an error page): who it is is unknown */
		html_raw(b, "<a href=\"/feed\">Feed</a>");
	html_raw(b, "</nav></header><main>");
	if (r->flash != FLASH_NONE) {
		html_raw(b, "<p class=\"flash\" role=\"status\" data-flash=\"");
		html_attr(b, flash_code((enum flash)r->flash));
		html_raw(b, "\">");
		html_text(b, flash_text((enum flash)r->flash));
		html_raw(b, "</p>");
	}
}

void
layout_end(struct req *r)
{
	html_raw(&r->body, "</main><footer>tally \xc2\xb7 every count right, "
	    "fast, and never lost</footer></body></html>\n");
}
