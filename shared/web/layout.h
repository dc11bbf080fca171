/* layout.h -- the page frame every HTML page shares: head, header with
 * navigation and badges, footer.  page_begin() opens <main>, page_end()
 * closes it; the page writes its content in between. */
#ifndef TALLY_LAYOUT_H
#define TALLY_LAYOUT_H

#include "web/req.h"

struct badges;

/* page_begin() reads the user's badges (badges.h) and frames the page;
 * page_frame() only renders, with the badges given (NULL: none).  The
 * error page (resp_error) uses page_frame: it does no I/O. */
void	page_begin(struct req *, const char *title);
void	page_frame(struct req *, const char *title, const struct badges *);
void	page_end(struct req *);
/* <input type="hidden" name="csrf" value="..."> for the current visitor. */
void	page_csrf(struct req *);

/* The four badges as links with data-counter spans (header and /badges). */
void	page_badges(struct req *, const struct badges *);

#endif
