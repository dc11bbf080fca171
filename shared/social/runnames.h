/* runnames.h -- the names behind a drift report's examples: a report
 * keeps counter keys ("42", "42:3"), the run page shows @login and
 * #topic instead of raw ids. */
#ifndef TALLY_RUNNAMES_H
#define TALLY_RUNNAMES_H

#include "count/recreport.h"
#include "store/app.h"

#define RUN_NAMES_MAX	(REC_FAMILIES * REC_EXAMPLES * 2)

struct run_names {
	long long	id[RUN_NAMES_MAX];
	char		name[RUN_NAMES_MAX][40];
	int		topic[RUN_NAMES_MAX];	/* 1: a topic id, 0: a user */
	int		n;
};

/* Looks up the users and topics the report's examples name.  0, or -1
 * (then the page shows the raw keys). */
int		 runnames_load(struct app *, const struct rec_report *,
		    struct run_names *);
/* The login of user id, or the slug of topic id; NULL when unknown. */
const char	*runnames_get(const struct run_names *, long long id, int topic);

#endif
