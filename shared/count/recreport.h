/* recreport.h -- what a reconciliation run found, family by family, and
 * its JSON form (stored with the run, shown on /admin/reconcile).
 */
#ifndef TALLY_RECREPORT_H
#define TALLY_RECREPORT_H

#include "count/counters.h"

#define REC_EXAMPLES	5

struct rec_family {
	char		name[40];
	long long	checked;
	long long	wrong;		/* drifted counters found */
	long long	fixed;		/* of them repaired (0 in a dry run) */
	long long	max_err;	/* largest |error| */
	long long	queued;		/* not settled now: counted wrong, and
					   queued for the worker (settle.h) */
	int		nex;
	char		ex[REC_EXAMPLES][48];
};

/* The families of a report: like_count first, then the catalog's, then
 * the notification groups' stored size and unread (social/notify.h). */
#define REC_NOTE_GROUPS	(FAM__MAX + 1)
#define REC_FAMILIES	(FAM__MAX + 2)

struct rec_report {
	struct rec_family fam[REC_FAMILIES];
};

/* Report to and from JSON (jansson); the caller frees the string. */
char	*recreport_json(const struct rec_report *);
int	recreport_parse(const char *json, struct rec_report *);
void	recreport_init(struct rec_report *);
/* Sum of wrong over families. */
long long recreport_wrong(const struct rec_report *);
/* The counters a run repaired, over every family. */
long long	recreport_fixed(const struct rec_report *);

#endif
