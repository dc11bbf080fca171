/* app.c -- what a process opens for its life; see app.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/auth.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/valid.h"
#include "store/app.h"
#include "store/db_int.h"
#include "store/liveq.h"
#include "store/rds_int.h"
#include "store/rhealth.h"
#include "store/rowheld.h"

int
app_open(struct app *a, const char *name)
{
	const char *v, *auth;
	char host[64], path[PATH_MAX];
	long long ms;
	int tmo;

	memset(a, 0, sizeof(*a));
	a->name = name;
	a->pid = (long long)getpid();
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	snprintf(a->owner, sizeof(a->owner), "%s:%lld:%lld", host, a->pid,
	    clock_wall_ms());
	log_init(name);
	if (cfg_load(&a->cfg) == -1 || auth_init() == -1)
		return -1;
	fault_init(&a->cfg);
	a->rds = xcalloc(1, sizeof(*a->rds));
	a->replica = xcalloc(1, sizeof(*a->replica));
	if ((a->db = db_new(a->cfg.db_path)) == NULL)
		return -1;
	/* Rows a PostgreSQL cursor fetches a round trip (pg.h); tests make
	 * it small, so that a recount's stream takes many. */
	if ((v = getenv("TALLY_PG_FETCH")) != NULL &&
	    valid_int(v, 1, 1000000, &ms) == 0)
		dbq_fetch_rows(a->db, (int)ms);
	/* Requests wait 250 ms for Redis at most; the worker and tallyctl
	 * move whole batches and may meet an AOF rewrite: 5 s. */
	/* tally-live blocks on its queue: its commands' timeout is the
	 * wait's, plus a request's (liveq.h) */
	tmo = strcmp(name, "worker") == 0 || strcmp(name, "tallyctl") == 0 ?
	    5000 : strcmp(name, "live") == 0 ? LIVEQ_TIMEOUT_MS : 250;
	auth = a->cfg.redis_auth[0] != '\0' ? a->cfg.redis_auth : NULL;
	/* The host's processes share their Redis backoffs (rhealth.h);
	 * tally-run, which polls a cluster's nodes as they start
	 * (run_cluster.c), keeps its own. */
	if (strcmp(name, "tally-run") != 0 &&
	    cfg_path(&a->cfg, "redis-health", path, sizeof(path)) == 0)
		(void)rhealth_open(path);
	/* ... and the rows their writers waited for in vain (rowheld.h) */
	if (cfg_path(&a->cfg, "rows-held", path, sizeof(path)) == 0)
		(void)rowheld_open(path);
	if (a->cfg.redis_cluster[0] != '\0') {
		/* a cluster has its own replicas: no separate one */
		if (rds_init_cluster(a->rds, a->cfg.redis_cluster, tmo,
		    auth, a->cfg.cluster_socks[0] ? a->cfg.cluster_socks :
		    NULL) == -1)
			return -1;
		rds_init(a->replica, "", tmo);
	} else {
		rds_init(a->rds, a->cfg.redis_sock, tmo);
		rds_init(a->replica, a->cfg.replica_sock, tmo);
		rds_set_auth(a->rds, auth);
		rds_set_auth(a->replica, auth);
	}
	/* Fault injection for tests: the worker pauses this long between a
	 * job's writes and its acknowledgement, so a kill -9 lands there. */
	if ((v = getenv("TALLY_FAULT_DELAY_MS")) != NULL &&
	    valid_int(v, 0, 10000, &ms) == 0)
		a->fault_delay_ms = (int)ms;
	/* ... and a flusher stalls once between two rounds of a take, so
	 * its lock expires and recovery declares the batch dead. */
	if ((v = getenv("TALLY_FAULT_TAKE_MS")) != NULL &&
	    valid_int(v, 0, 60000, &ms) == 0)
		a->fault_take_ms = (int)ms;
	return 0;
}

struct rds *
app_reader(struct app *a)
{
	if (rds_up(a->rds) || a->cfg.replica_sock[0] == '\0')
		return a->rds;
	return rds_up(a->replica) ? a->replica : a->rds;
}

void
app_close(struct app *a)
{
	if (a->rds != NULL)
		rds_close(a->rds);
	if (a->replica != NULL)
		rds_close(a->replica);
	db_free(a->db);
	free(a->rds);
	free(a->replica);
	a->rds = a->replica = NULL;
	a->db = NULL;
}

void
app_after(struct app *a, void (*fn)(struct app *, char *), char *arg)
{
	if (a->in_request && a->nafter == APP_AFTER_MAX && a->db->group) {
		log_warn("more than %d requests' work for after their "
		    "answers: one is left to the worker", APP_AFTER_MAX);
		free(arg);
		return;
	}
	if (!a->in_request || a->nafter == APP_AFTER_MAX) {
		fn(a, arg);
		free(arg);
		return;
	}
	a->after[a->nafter].fn = fn;
	a->after[a->nafter].arg = arg;
	a->nafter++;
}

void
app_after_commit(struct app *a, void (*fn)(struct app *, void **, int),
    void *arg)
{
	if (!a->db->group) {
		fn(a, &arg, 1);
		free(arg);
		return;
	}
	if (a->noncommit == APP_COMMIT_MAX) {
		log_warn("group commit: more than %d actions to follow it; "
		    "one is left to the worker", APP_COMMIT_MAX);
		free(arg);
		return;
	}
	a->oncommit[a->noncommit].fn = fn;
	a->oncommit[a->noncommit].arg = arg;
	a->noncommit++;
}

void
app_commit_done(struct app *a, int ok)
{
	void *args[APP_COMMIT_MAX];
	int i, j, k, n = a->noncommit;

	a->noncommit = 0;
	for (i = 0; i < n; i = j) {
		for (j = i, k = 0; j < n && a->oncommit[j].fn ==
		    a->oncommit[i].fn; j++)
			args[k++] = a->oncommit[j].arg;
		if (ok)
			a->oncommit[i].fn(a, args, k);
		while (k > 0)
			free(args[--k]);
	}
}

void
app_run_after(struct app *a)
{
	int i, n = a->nafter;

	a->nafter = 0;
	for (i = 0; i < n; i++) {
		a->after[i].fn(a, a->after[i].arg);
		free(a->after[i].arg);
	}
	app_settle(a);
}

void
app_settle(struct app *a)
{
	rds_settle(a->rds);
	rds_settle(a->replica);
}
