/* pg_state.c -- what a PostgreSQL connection's statements left for
 * their callers to ask (pg.h): the last error and its kind (busy,
 * retryable), the rows the last write changed, the round trips, the most
 * rows one result held; and a cursor's fetch size.  Apart from pg.c,
 * whose statements set them. */
#include <string.h>

#include "store/pg.h"
#include "store/pg_int.h"

int
pg_busy(struct pgdb *p)
{
	return strcmp(p->state, "55P03") == 0;
}

void
pg_forget_failure(struct pgdb *p)
{
	p->state[0] = '\0';
}

int
pg_retryable(struct pgdb *p)
{
	/* a deadlock, or a serialization failure: the transaction was
	 * rolled back whole, and the same one again may well pass */
	return strcmp(p->state, "40P01") == 0 || strcmp(p->state, "40001") == 0;
}

const char *
pg_errmsg(struct pgdb *p)
{
	return p->err;
}

int
pg_changes(struct pgdb *p)
{
	return p->changes;
}

unsigned long long
pg_ntrips(const struct pgdb *p)
{
	return p->trips;
}

void
pg_set_fetch(struct pgdb *p, int rows)
{
	p->fetch = rows > 0 ? rows : PG_FETCH_ROWS;
}

long
pg_rows_held(struct pgdb *p, int reset)
{
	long n = p->held;

	if (reset)
		p->held = 0;
	return n;
}
