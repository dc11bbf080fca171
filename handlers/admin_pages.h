/* admin_pages.h -- leaderboards, reconciliation and metrics pages of
 * tally-admin (routes in admin.c): each a model, its load and its
 * render (web/page.h, web/view_admin.h). */
#ifndef TALLY_ADMIN_PAGES_H
#define TALLY_ADMIN_PAGES_H

#include "web/page.h"
#include "web/route.h"

extern const struct page page_top, page_runs, page_run, page_metrics;

int	act_runs_start(struct req *, const struct route *);

#endif
