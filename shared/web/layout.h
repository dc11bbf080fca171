/* layout.h -- the page frame every HTML page shares: head, header with
 * navigation and badges, footer.  layout_begin() opens <main>, layout_end()
 * closes it; the page writes its content in between. */
#ifndef TALLY_LAYOUT_H
#define TALLY_LAYOUT_H

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
 * presumed session (req.h) is confirmed in it too.  0, or -1 when the
 * presumed session did not hold (req_confirm()): the page frees its
 * model and returns without answering. */
struct post_card;
struct delta;
struct count;
int	layout_load_cards(struct req *, struct post_card *, int n,
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
