/* people.h -- people as lists show them (followers, following, best
 * authors, top-N rows): login, name and one number per person. */
#ifndef TALLY_PEOPLE_H
#define TALLY_PEOPLE_H

#include "social/timeline.h"

struct person {
	long long	id;
	char		login[40];
	char		name[264];
	long long	num;	/* since (ms) on follow lists, else a value */
};

struct people {
	struct person	*v;
	int		 n;
};

/* The users among ids, in the order given (missing ones left out), with
 * nums[i] (NULL: 0) as the number of ids[i].  0, or -1 on a SQLite
 * error. */
int	people_by_ids(struct app *, const long long *ids,
	    const long long *nums, int n, struct people *);
/* Page `page` (from 1) of uid's followers or following (kind), per a
 * page, each with the time the follow began; *more: a next page exists.
 * 0, or -1 when neither Redis nor SQLite answered. */
int	people_follows(struct app *, enum tl kind, long long uid,
	    long long page, int per, struct people *, int *more);
void	people_free(struct people *);

#endif
