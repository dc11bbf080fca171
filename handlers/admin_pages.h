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

long long	admin_flush_lag(struct app *);
void		admin_drift_table(struct req *);
/* The drift check's total `what` of family name, from an HGETALL of
 * {metrics}:drift (NULL: 0). */
long long	admin_drift_get(rds_reply *h, const char *name,
		    const char *what);
void		admin_last_run(struct req *);

#endif
