/* view_metrics.c -- /metrics in Prometheus's text format: request
 * counters and costs per handler (the shared slots, metrics.h), and the
 * operators' gauges (opsview.h); see view_admin.h.  No I/O. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "web/resp.h"
#include "web/view_admin.h"

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

/* One series of a histogram: nb cumulative buckets of counts n (bounds
 * in ms, the last +Inf), its sum (us) and count, labelled label="who". */
static void
histogram(struct buf *b, const char *name, const char *label,
    const char *who, const uint64_t *n, const double *bounds_ms, int nb,
    uint64_t sum_us)
{
	uint64_t cum = 0;
	int j;

	for (j = 0; j < nb; j++) {
		cum += __atomic_load_n(&n[j], __ATOMIC_RELAXED);
		buf_printf(b, "%s_bucket{%s=\"%s\",le=\"", name, label, who);
		if (j < nb - 1)
			buf_printf(b, "%g", bounds_ms[j] / 1000);
		else
			buf_puts(b, "+Inf");
		buf_printf(b, "\"} %llu\n", (unsigned long long)cum);
	}
	buf_printf(b, "%s_sum{%s=\"%s\"} %.6f\n", name, label, who,
	    (double)sum_us / 1e6);
	buf_printf(b, "%s_count{%s=\"%s\"} %llu\n", name, label, who,
	    (unsigned long long)cum);
}

/* The writers' lock's wait (hold 0) or hold times, by holder. */
static void
lock_metric(struct buf *b, const struct metrics *m, int hold)
{
	const char *name = hold ? "tally_sqlite_writer_lock_hold_seconds" :
	    "tally_sqlite_writer_lock_wait_seconds";
	const struct metrics_lock *l;
	int i;

	metric_head(b, name, "histogram", hold ? "How long each holder kept "
	    "SQLite's writers' lock (a like waits out every hold before it)." :
	    "How long each holder waited for SQLite's writers' lock.");
	for (i = 0; m != NULL && i < METRICS_LOCKERS; i++) {
		if (!*metrics_locker(i))
			continue;
		l = &m->lock[i];
		histogram(b, name, "holder", metrics_locker(i), hold ? l->hold :
		    l->wait, metrics_lock_bounds_ms, METRICS_LOCK_BUCKETS,
		    __atomic_load_n(hold ? &l->hold_us : &l->wait_us,
		    __ATOMIC_RELAXED));
	}
}

void
view_metrics(struct buf *out, const struct metrics *m,
    const struct ops_view *v)
{
	static const char *const cls[6] = { "other", "1xx", "2xx", "3xx",
	    "4xx", "5xx" };
	uint64_t n;
	int i, j;

	metric_head(out, "tally_http_requests_total", "counter",
	    "Requests answered, by handler and status class.");
	for (i = 0; m != NULL && i < METRICS_HANDLERS; i++)
		for (j = 0; *metrics_handlers[i] && j < 6; j++)
			buf_printf(out, "tally_http_requests_total{handler=\"%s\","
			    "code=\"%s\"} %llu\n", metrics_handlers[i], cls[j],
			    (unsigned long long)m->slot[i].by_class[j]);
	metric_head(out, "tally_http_request_duration_seconds", "histogram",
	    "Time from request to response, by handler.");
	for (i = 0; m != NULL && i < METRICS_HANDLERS; i++)
		if (*metrics_handlers[i])
			histogram(out, "tally_http_request_duration_seconds",
			    "handler", metrics_handlers[i], m->slot[i].bucket,
			    metrics_bounds_ms, METRICS_BUCKETS, m->slot[i].sum_us);
	cost_metric(out, m, "tally_sqlite_statements_total",
	    "SQLite statements run while answering requests.",
	    offsetof(struct metrics_slot, sqlite_stmts));
	cost_metric(out, m, "tally_sql_round_trips_total",
	    "Round trips to PostgreSQL while answering requests (0 on "
	    "SQLite, which runs in the process).",
	    offsetof(struct metrics_slot, sql_trips));
	cost_metric(out, m, "tally_sql_commits_total",
	    "Write transactions committed while answering requests (a group "
	    "commit's actions share one).",
	    offsetof(struct metrics_slot, sql_commits));
	metric_head(out, "tally_sqlite_statement_runs_total", "counter",
	    "Runs of each statement of the table (by its number in "
	    "store/sql.h) while answering requests; those run at all.");
	for (i = 0; m != NULL && i < METRICS_HANDLERS; i++)
		for (j = 0; *metrics_handlers[i] && j < METRICS_STMTS; j++)
			if ((n = __atomic_load_n(&m->stmt_runs[i][j],
			    __ATOMIC_RELAXED)) > 0)
				buf_printf(out, "tally_sqlite_statement_runs_total"
				    "{handler=\"%s\",stmt=\"%d\"} %llu\n",
				    metrics_handlers[i], j, (unsigned long long)n);
	cost_metric(out, m, "tally_redis_commands_total",
	    "Redis commands sent while answering requests.",
	    offsetof(struct metrics_slot, redis_cmds));
	cost_metric(out, m, "tally_redis_round_trips_total",
	    "Redis round trips (a pipeline is one) while answering requests.",
	    offsetof(struct metrics_slot, redis_trips));
	cost_metric(out, m, "tally_pages_kept_total",
	    "Pages sent whole as a handler process kept them (no SQLite read "
	    "but the data version, no rendering).",
	    offsetof(struct metrics_slot, kept_whole));
	cost_metric(out, m, "tally_counts_kept_total",
	    "Counts read from what a handler process kept, Redis having said "
	    "they did not change (no command).",
	    offsetof(struct metrics_slot, counts_kept));
	cost_metric(out, m, "tally_pages_ahead_total",
	    "Pages whose first Redis round trip went with the other pages a "
	    "reader took together (their replies read in one wait).",
	    offsetof(struct metrics_slot, pages_ahead));
	cost_metric(out, m, "tally_sql_ahead_total",
	    "PostgreSQL statements whose results came with the other pages' "
	    "a reader took together (one pipeline, read in one wait).",
	    offsetof(struct metrics_slot, sql_ahead));
	lock_metric(out, m, 0);
	lock_metric(out, m, 1);
	metric_head(out, "tally_pending_deltas", "gauge",
	    "Counters with deltas not yet flushed to SQLite.");
	buf_printf(out, "tally_pending_deltas %lld\n", v->pending);
	metric_head(out, "tally_flush_lag_seconds", "gauge",
	    "Seconds since the last applied flush batch (-1: none yet).");
	buf_printf(out, "tally_flush_lag_seconds %lld\n", v->flush_lag);
	metric_head(out, "tally_live_streams", "gauge",
	    "Live badge streams open, as registered by tally (-1: Redis down).");
	buf_printf(out, "tally_live_streams %lld\n", v->live_streams);
	metric_head(out, "tally_live_publishes_total", "counter",
	    "Live badge events published to nginx.");
	buf_printf(out, "tally_live_publishes_total %llu\n", m != NULL ?
	    (unsigned long long)m->live[METRICS_LIVE_PUBLISHED] : 0ULL);
	metric_head(out, "tally_live_publish_failures_total", "counter",
	    "Live badge events nginx or Redis did not take (the pages' polls "
	    "correct them).");
	buf_printf(out, "tally_live_publish_failures_total %llu\n", m != NULL ?
	    (unsigned long long)m->live[METRICS_LIVE_FAILED] : 0ULL);
	metric_head(out, "tally_live_streams_opened_total", "counter",
	    "Live badge streams handed to nginx.");
	buf_printf(out, "tally_live_streams_opened_total %llu\n", m != NULL ?
	    (unsigned long long)m->live[METRICS_LIVE_OPENED] : 0ULL);
	metric_head(out, "tally_fanout_jobs", "gauge",
	    "Deferred fan-out jobs waiting or running.");
	buf_printf(out, "tally_fanout_jobs %lld\n", v->fanout_jobs);
	metric_head(out, "tally_reconcile_wrong", "gauge",
	    "Counters the last finished reconciliation found wrong, by family.");
	for (i = 0; v->have_last_done && i < REC_FAMILIES; i++)
		buf_printf(out, "tally_reconcile_wrong{family=\"%s\"} %lld\n",
		    v->last_done.report.fam[i].name,
		    v->last_done.report.fam[i].wrong);
	metric_head(out, "tally_drift_checked_total", "counter",
	    "Counters sampled by the continuous drift check.");
	for (i = 0; i < v->ndrift; i++)
		buf_printf(out, "tally_drift_checked_total{family=\"%s\"} %lld\n",
		    v->drift[i].family, v->drift[i].checked);
	metric_head(out, "tally_drift_wrong_total", "counter",
	    "Sampled counters that differed from their recount.");
	for (i = 0; i < v->ndrift; i++)
		buf_printf(out, "tally_drift_wrong_total{family=\"%s\"} %lld\n",
		    v->drift[i].family, v->drift[i].wrong);
	metric_head(out, "tally_profile_cache_rebuilds_total", "counter",
	    "Profile cache entries rebuilt (one per miss, under a lock).");
	buf_printf(out, "tally_profile_cache_rebuilds_total %lld\n",
	    v->cache_rebuilds);
	metric_head(out, "tally_profile_cache_sql_total", "counter",
	    "Profile lookups that went to SQLite through the cache.");
	buf_printf(out, "tally_profile_cache_sql_total %lld\n", v->cache_sql);
}

void
view_metrics_page(struct req *r, const void *vm)
{
	const struct metrics_model *m = vm;
	struct buf out = { 0 };

	view_metrics(&out, m->m, &m->v);
	resp_text(r, 200, "text/plain; version=0.0.4; charset=utf-8",
	    out.p != NULL ? out.p : "");
	buf_free(&out);
}

void
view_healthz(struct req *r, const void *vm)
{
	const struct health *m = vm;
	const char *db = m->db_name != NULL ? m->db_name : "sqlite";
	char down[64];

	if (m->db_ok && m->redis_ok) {
		resp_text(r, 200, "text/plain; charset=utf-8", "ok");
		return;
	}
	snprintf(down, sizeof(down), "%s%s%s", m->db_ok ? "" : db,
	    !m->db_ok && !m->redis_ok ? " " : "", m->redis_ok ? "" : "redis");
	resp_text(r, 503, "text/plain; charset=utf-8", down);
}
