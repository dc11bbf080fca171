/* page.h -- a page: a model, its load and its render.
 *
 * Every GET of a handler's route table names a page.  route.c runs it:
 * a zeroed model of `size` bytes, load(r, m), then, when the load says
 * so, render(r, m), then done(m).
 *
 *   load    fills the model through the domain layer (social/, count/),
 *           the header's badges with it (layout.h: layout_load(),
 *           layout_load_cards()).  It may answer by itself (an error page,
 *           a redirect): PAGE_ANSWERED.  A reader taken at the word of
 *           its cookie (req.h: presumed) whose session did not hold:
 *           PAGE_AGAIN, and route.c runs the page again for who really
 *           asks.
 *   render  writes the answer from the model and r (its user, csrf and
 *           badges): no I/O, so it is tested with fixed models
 *           (tests/unit/test-pages.c).
 *   done    frees what the load kept in the model (NULL: nothing).
 *
 * The model is a plain struct of the page's own; load and render take
 * it as void * and name its type on their first line.
 */
#ifndef TALLY_PAGE_H
#define TALLY_PAGE_H

#include <stddef.h>

#include "web/req.h"

enum page_load {
	PAGE_RENDER = 0,	/* the model is loaded: render it */
	PAGE_ANSWERED,		/* the load answered (r->status, r->body) */
	PAGE_AGAIN,		/* a presumed session did not hold */
};

struct page {
	size_t		  size;		/* of the model */
	enum page_load	(*load)(struct req *, void *m);
	void		(*render)(struct req *, const void *m);
	void		(*done)(void *m);
};

#endif
