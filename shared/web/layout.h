/* layout.h -- the page frame every HTML page shares: head, header with
 * navigation and badges, footer.  layout_begin() opens <main>, layout_end()
 * closes it; the page writes its content in between. */
#ifndef TALLY_LAYOUT_H
#define TALLY_LAYOUT_H

#include "social/badges.h"
#include "web/req.h"

struct badges;

/* A page loads its model, layout_load() included (the user's badges,
 * badges.h, into r->badges), then renders it: layout_begin() frames the
 * page with what layout_load() read, layout_frame() with the badges given
 * (NULL: not read, as on the error page; a signed-in user's header then
 * shows them pending, and tally.js fills them from /badges.json).
 * Neither does I/O. */
void	layout_load(struct req *);
/* layout_load() and the counts of a page's post cards (and nmore other
 * counters into more_out, postlist.h) in one Redis round trip; a
 * presumed session (req.h) is confirmed in it too, and a session's copy
 * that SQLite renewed before (req_session_decide()) is put in it.  0, or
 * -1 when the presumed session did not hold (req_confirm()): the page
 * frees its model and returns without answering. */
/* The badges in a page's first round trip rather than its last: queued
 * after the page's own commands with the read of a presumed session's
 * copy (req_session_send()), read with them, and ended once the session
 * is decided (the badges of a session that did not hold are dropped
 * unread).  A page that then changes what the badges count (a profile
 * visit marked) sets r->badges_read to 0, and its last round trip reads
 * them again.  layout_first_recv() answers as req_session_decide(). */
struct layout_q {
	struct req_sessq sq;
	struct badges_q	 bq;
	int		 badges;	/* queued */
};
void	layout_first_send(struct req *, struct layout_q *);
int	layout_first_recv(struct req *, struct layout_q *);
struct post_card;
struct delta;
struct count;
int	layout_load_cards(struct req *, struct post_card *, int n,
	    const struct delta *more, int nmore, struct count *more_out);
/* The same behind a command the page queued before (a post page's view:
 * its counts, queued after it, show it): first(r, arg) reads its reply
 * before the round trip's others are read. */
int	layout_load_cards_after(struct req *, void (*first)(struct req *,
	    void *), void *arg, struct post_card *, int n,
	    const struct delta *more, int nmore, struct count *more_out);
void	layout_begin(struct req *, const char *title);
void	layout_frame(struct req *, const char *title, const struct badges *);
void	layout_end(struct req *);
/* <input type="hidden" name="csrf" value="..."> for the current visitor. */
void	layout_csrf(struct req *);

/* The four badges as links with data-counter spans (header and /badges);
 * NULL: pending (data-pending, "\u2026"), not read for this page. */
void	layout_badges(struct req *, const struct badges *);

#endif
