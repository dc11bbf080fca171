/* metrics_page.c -- /metrics: request counters, costs, flush and
 * reconciliation gauges in Prometheus's text format. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_pages.h"
#include "base/buf.h"
#include "base/metrics.h"
#include "count/counters.h"
#include "count/flush.h"
#include "count/runs.h"
#include "social/fanout.h"
#include "store/keys.h"
#include "store/query.h"
#include "web/resp.h"

static long long
cache_get(rds_reply *h, const char *f)
{
	size_t i;

	for (i = 0; h != NULL && h->type == RDS_ARRAY &&
	    i + 1 < h->elements; i += 2)
		if (strcmp(h->element[i]->str, f) == 0)
			return strtoll(h->element[i + 1]->str, NULL, 10);
	return 0;
}

static void
metric_head(struct buf *b, const char *name, const char *type,
    const char *help)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A per-handler counter of the slots, at byte offset off. */
static void
cost_metric(struct buf *b, const struct metrics *m, const char *name,
    const char *help, size_t off)
{
	const unsigned char *p;
	uint64_t v;
	int i;

	metric_head(b, name, "counter", help);
	for (i = 0; m != NULL && i < METRICS_HANDLERS; i++) {
		if (!*metrics_handlers[i])
			continue;
		p = (const unsigned char *)&m->slot[i] + off;
		v = __atomic_load_n((const uint64_t *)(const void *)p,
		    __ATOMIC_RELAXED);
		buf_printf(b, "%s{handler=\"%s\"} %llu\n", name,
		    metrics_handlers[i], (unsigned long long)v);
	}
}

int
page_metrics(struct req *r)
{
	static const char *const cls[6] = { "other", "1xx", "2xx", "3xx",
	    "4xx", "5xx" };
	/* the process's own mapping (serve.c), not a new one per scrape */
	const struct metrics *m = r->app->metrics;
	struct buf out = { 0 };
	struct run *run = xcalloc(1, sizeof(*run));
	rds_reply *h;
	uint64_t cum;
	int i, j;

	metric_head(&out, "tally_http_requests_total", "counter",
	    "Requests answered, by handler and status class.");
	for (i = 0; m != NULL && i < METRICS_HANDLERS; i++)
		for (j = 0; *metrics_handlers[i] && j < 6; j++)
			buf_printf(&out, "tally_http_requests_total{handler=\"%s\","
			    "code=\"%s\"} %llu\n", metrics_handlers[i], cls[j],
			    (unsigned long long)m->slot[i].by_class[j]);
	metric_head(&out, "tally_http_request_duration_seconds", "histogram",
	    "Time from request to response, by handler.");
	for (i = 0; m != NULL && i < METRICS_HANDLERS; i++) {
		if (!*metrics_handlers[i])
			continue;
		for (j = 0, cum = 0; j < METRICS_BUCKETS; j++) {
			cum += m->slot[i].bucket[j];
			if (j < METRICS_BUCKETS - 1)
				buf_printf(&out, "tally_http_request_duration_"
				    "seconds_bucket{handler=\"%s\",le=\"%g\"} %llu\n",
				    metrics_handlers[i], metrics_bounds_ms[j] / 1000,
				    (unsigned long long)cum);
			else
				buf_printf(&out, "tally_http_request_duration_"
				    "seconds_bucket{handler=\"%s\",le=\"+Inf\"} "
				    "%llu\n", metrics_handlers[i],
				    (unsigned long long)cum);
		}
		buf_printf(&out, "tally_http_request_duration_seconds_sum{handler="
		    "\"%s\"} %.6f\n", metrics_handlers[i],
		    (double)m->slot[i].sum_us / 1e6);
		buf_printf(&out, "tally_http_request_duration_seconds_count{"
		    "handler=\"%s\"} %llu\n", metrics_handlers[i],
		    (unsigned long long)cum);
	}
	cost_metric(&out, m, "tally_sqlite_statements_total",
	    "SQLite statements run while answering requests.",
	    offsetof(struct metrics_slot, sqlite_stmts));
	cost_metric(&out, m, "tally_redis_commands_total",
	    "Redis commands sent while answering requests.",
	    offsetof(struct metrics_slot, redis_cmds));
	cost_metric(&out, m, "tally_redis_round_trips_total",
	    "Redis round trips (a pipeline is one) while answering requests.",
	    offsetof(struct metrics_slot, redis_trips));
	metric_head(&out, "tally_pending_deltas", "gauge",
	    "Counters with deltas not yet flushed to SQLite.");
	buf_printf(&out, "tally_pending_deltas %lld\n",
	    flush_pending(r->app));
	metric_head(&out, "tally_flush_lag_seconds", "gauge",
	    "Seconds since the last applied flush batch (-1: none yet).");
	buf_printf(&out, "tally_flush_lag_seconds %lld\n",
	    admin_flush_lag(r->app));
	metric_head(&out, "tally_fanout_jobs", "gauge",
	    "Deferred fan-out jobs waiting or running.");
	buf_printf(&out, "tally_fanout_jobs %lld\n", fanout_pending(r->app));
	metric_head(&out, "tally_reconcile_wrong", "gauge",
	    "Counters the last finished reconciliation found wrong, by family.");
	if (runs_last_done(&r->app->db, run) == 1)
		for (i = 0; i < REC_FAMILIES; i++)
			buf_printf(&out, "tally_reconcile_wrong{family=\"%s\"} %lld\n",
			    run->report.fam[i].name, run->report.fam[i].wrong);
	h = rds_cmdv(&r->app->rds, "HGETALL", KEY_METRICS_DRIFT, NULL);
	metric_head(&out, "tally_drift_checked_total", "counter",
	    "Counters sampled by the continuous drift check.");
	for (i = 0; i < FAM__MAX; i++)
		if (families[i].recount_one != NULL)
			buf_printf(&out, "tally_drift_checked_total{family=\"%s\"} "
			    "%lld\n", families[i].name,
			    admin_drift_get(h, families[i].name, "checked"));
	metric_head(&out, "tally_drift_wrong_total", "counter",
	    "Sampled counters that differed from their recount.");
	for (i = 0; i < FAM__MAX; i++)
		if (families[i].recount_one != NULL)
			buf_printf(&out, "tally_drift_wrong_total{family=\"%s\"} "
			    "%lld\n", families[i].name,
			    admin_drift_get(h, families[i].name, "wrong"));
	if (h != NULL)
		rds_free(h);
	h = rds_cmdv(&r->app->rds, "HGETALL", KEY_METRICS_CACHE, NULL);
	metric_head(&out, "tally_profile_cache_rebuilds_total", "counter",
	    "Profile cache entries rebuilt (one per miss, under a lock).");
	buf_printf(&out, "tally_profile_cache_rebuilds_total %lld\n",
	    cache_get(h, "rebuilds"));
	metric_head(&out, "tally_profile_cache_sql_total", "counter",
	    "Profile lookups that went to SQLite through the cache.");
	buf_printf(&out, "tally_profile_cache_sql_total %lld\n",
	    cache_get(h, "sql_reads"));
	if (h != NULL)
		rds_free(h);
	resp_text(r, 200, "text/plain; version=0.0.4; charset=utf-8", out.p);
	buf_free(&out);
	free(run);
	return 0;
}
