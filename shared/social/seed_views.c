/* seed_views.c -- seeded views through posting_view(); see seed_views.h. */
#include <stdio.h>

#include "social/posting.h"
#include "social/seed_views.h"

/* 198.18.0.0/15 holds 2^17 addresses. */
#define ADDRS	131072L

/* The views post i is given. */
static long
views_of(long reactions, long per, unsigned long long *rs)
{
	long n;

	/* an LCG step: the caller's stream, as seed_events.c draws it */
	*rs = *rs * 6364136223846793005ULL + 1442695040888963407ULL;
	n = reactions * per + (long)((*rs >> 33) % (unsigned long long)
	    (reactions * per + 4));
	return n > SEED_VIEWS_MAX ? SEED_VIEWS_MAX : n;
}

long
seed_views(struct app *a, const long long *ids, const long long *authors,
    const long *reactions, long np, long per, unsigned long long *rs)
{
	char addr[32];
	long i, j, n, addr_no, counted = 0;

	if (np < 0 || per < 0 || (np + VIEW_ADDR_MAX - 1) / VIEW_ADDR_MAX *
	    SEED_VIEWS_MAX > ADDRS)
		return -1;
	for (i = 0; i < np; i++) {
		n = views_of(reactions[i], per, rs);
		for (j = 0; j < n; j++) {
			/* Posts come in groups of VIEW_ADDR_MAX, each group
			 * with its own SEED_VIEWS_MAX addresses: an address
			 * views one post of its group at most once. */
			addr_no = i / VIEW_ADDR_MAX * SEED_VIEWS_MAX + j;
			snprintf(addr, sizeof(addr), "198.%ld.%ld.%ld",
			    18 + addr_no / 65536, addr_no / 256 % 256,
			    addr_no % 256);
			counted += posting_view(a, ids[i], authors[i], 0, addr);
		}
	}
	return counted;
}
