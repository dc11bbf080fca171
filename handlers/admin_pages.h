/* admin_pages.h -- leaderboards, reconciliation and metrics pages of
 * tally-admin (routes in admin.c), and pieces of its dashboard. */
#ifndef TALLY_ADMIN_PAGES_H
#define TALLY_ADMIN_PAGES_H

#include "web/req.h"

int		page_top(struct req *);
int		page_runs(struct req *);
int		page_run_start(struct req *);
int		page_run(struct req *);
int		page_metrics(struct req *);

#endif
