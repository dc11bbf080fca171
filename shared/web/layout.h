/* layout.h -- the page frame every HTML page shares: head, header with
 * navigation and badges, footer.  page_begin() opens <main>, page_end()
 * closes it; the page writes its content in between. */
#ifndef TALLY_LAYOUT_H
#define TALLY_LAYOUT_H

#include "web/req.h"

void	page_begin(struct req *, const char *title);
void	page_end(struct req *);
/* <input type="hidden" name="csrf" value="..."> for the current visitor. */
void	page_csrf(struct req *);

struct badges;
/* The four badges as links with data-counter spans (header and /badges). */
void	page_badges(struct req *, const struct badges *);

#endif
