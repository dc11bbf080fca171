/* opsview.c -- the operators' pages' model; see opsview.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "count/flush.h"
#include "social/fanout.h"
#include "social/opsview.h"
#include "store/key.h"
#include "store/liveq.h"
#include "store/rds.h"
#include "store/sql.h"

/* Seconds since the last applied flush batch; -1 none yet or an error. */
static long long
flush_lag(struct app *a)
{
	struct dbq *s = dbq_stmt(a->db, STMT_LAST_FLUSH);
	long long at = 0;

	if (s == NULL)
		return -1;
	if (dbq_step(s) == DBQ_ROW)
		at = dbq_i64(s, 0);
	dbq_done(s);
	return at > 0 ? (clock_wall_ms() - at) / 1000 : -1;
}

/* Field f of an HGETALL reply as a number (0 when absent). */
static long long
hash_get(const rds_reply *h, const char *f)
{
	size_t i;

	for (i = 0; h != NULL && rds_type(h) == RDS_ARRAY &&
	    i + 1 < rds_n(h); i += 2)
		if (strcmp(rds_str(rds_at(h, i)), f) == 0)
			return strtoll(rds_str(rds_at(h, i + 1)), NULL, 10);
	return 0;
}

/* Streams registered and not lapsed (store/liveq.h); -1 unknown. */
static long long
live_streams(struct app *a)
{
	long long *uids, n;

	n = liveq_members(a->rds, clock_wall_ms(), &uids);
	free(uids);
	return n;
}

void
opsview_load(struct app *a, unsigned parts, struct ops_view *v)
{
	rds_reply *h;
	char f[64];
	int i;

	memset(v, 0, sizeof(*v));
	v->pending = flush_pending(a);
	v->fanout_jobs = fanout_pending(a);
	v->flush_lag = flush_lag(a);
	v->live_streams = live_streams(a);
	h = rds_cmdv(a->rds, "HGETALL", KEY_METRICS_DRIFT, NULL);
	for (i = 0; i < FAM__MAX; i++) {
		struct drift_row *d = &v->drift[v->ndrift];

		if (families[i].recount_one == NO_RECOUNT)
			continue;
		d->family = families[i].name;
		snprintf(f, sizeof(f), "%s:checked", d->family);
		d->checked = hash_get(h, f);
		snprintf(f, sizeof(f), "%s:wrong", d->family);
		d->wrong = hash_get(h, f);
		v->ndrift++;
	}
	if (h != NULL)
		rds_free(h);
	if (parts & OPS_DASHBOARD)
		v->have_latest = runs_list(a->db, &v->latest, 1) == 1;
	if (!(parts & OPS_METRICS))
		return;
	h = rds_cmdv(a->rds, "HGETALL", KEY_METRICS_CACHE, NULL);
	v->cache_rebuilds = hash_get(h, "rebuilds");
	v->cache_sql = hash_get(h, "sql_reads");
	if (h != NULL)
		rds_free(h);
	v->have_last_done = runs_last_done(a->db, &v->last_done) == 1;
}
