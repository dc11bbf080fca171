/* app.c -- process setup and the FastCGI serving loop; see app.h. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "fault.h"
#include "auth.h"
#include "flush.h"
#include "log.h"
#include "metrics.h"
#include "prefork.h"
#include "req.h"
#include "resp.h"
#include "route.h"
#include "valid.h"

int
app_open(struct app *a, const char *name)
{
	const char *v;
	long long ms;
	int tmo;

	memset(a, 0, sizeof(*a));
	a->name = name;
	log_init(name);
	if (cfg_load(&a->cfg) == -1 || auth_init() == -1)
		return -1;
	fault_init(&a->cfg);
	if (db_open(&a->db, a->cfg.db_path) == -1)
		return -1;
	/* Requests wait 250 ms for Redis at most; the worker and tallyctl
	 * move whole batches and may meet an AOF rewrite: 5 s. */
	tmo = strcmp(name, "worker") == 0 || strcmp(name, "tallyctl") == 0 ?
	    5000 : 250;
	rds_init(&a->rds, a->cfg.redis_sock, tmo);
	if (a->cfg.replica_sock[0] != '\0')
		rds_init(&a->replica, a->cfg.replica_sock, tmo);
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
	/* Tests: small flush batches, so a flush runs many of them (each
	 * applied while the next is taken). */
	a->flush_fields = FLUSH_FIELDS;
	if ((v = getenv("TALLY_FLUSH_FIELDS")) != NULL &&
	    valid_int(v, 1, FLUSH_FIELDS, &ms) == 0)
		a->flush_fields = (int)ms;
	return 0;
}

struct rds *
app_reader(struct app *a)
{
	if (rds_up(&a->rds) || a->cfg.replica_sock[0] == '\0')
		return &a->rds;
	return rds_up(&a->replica) ? &a->replica : &a->rds;
}

void
app_close(struct app *a)
{
	rds_close(&a->rds);
	rds_close(&a->replica);
	db_close(&a->db);
}

void
app_after(struct app *a, void (*fn)(struct app *, char *), char *arg)
{
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
app_run_after(struct app *a)
{
	int i, n = a->nafter;

	a->nafter = 0;
	for (i = 0; i < n; i++) {
		a->after[i].fn(a, a->after[i].arg);
		free(a->after[i].arg);
	}
}

/* Ends a request without libfcgi's lingering close.  FCGX_Finish_r
 * otherwise shuts down its side and then waits (poll, read) until the web
 * server has read the reply and closed its end: one more sleep and wake-up
 * per request, and on a single-process pool (the social writer) a wait in
 * which no other request can be accepted.  The wait guards against a TCP
 * reset discarding a reply when unread input remains; here the socket is
 * local, and the input is read to its end first (the empty FCGI_STDIN
 * record nginx always sends), so a plain close loses nothing: the reply
 * and FCGI_END_REQUEST are already in nginx's receive queue. */
static void
fcgi_close(FCGX_Request *fr)
{
	char trash[1024];

	while (FCGX_GetStr(trash, (int)sizeof(trash), fr->in) > 0)
		;
	if (FCGX_GetError(fr->in) == 0)
		FCGX_Detach(fr);
	FCGX_Finish_r(fr);
}

struct serve_ctx {
	const char		*name;
	const struct route	*routes;
	size_t			 nroutes;
};

static int
serve_child(int fd, void *arg)
{
	const struct serve_ctx *ctx = arg;
	FCGX_Request fr;
	struct timespec t0, t1;
	struct metrics_cost cost;
	struct app a;
	struct req r;
	int st;

	if (app_open(&a, ctx->name) == -1)
		return -1;
	/* Requests never run a WAL checkpoint (an fdatasync in the middle
	 * of someone's like): the worker checkpoints every second. */
	db_exec(&a.db, "PRAGMA wal_autocheckpoint = 0");
	a.metrics = metrics_open(&a.cfg);
	a.metrics_idx = metrics_handler(ctx->name);
	if (FCGX_Init() != 0 || FCGX_InitRequest(&fr, fd, 0) != 0) {
		log_err("FCGX_Init failed");
		app_close(&a);
		return -1;
	}
	while (FCGX_Accept_r(&fr) >= 0) {
		a.in_request = 1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		cost.stmts = a.db.nstmt;
		cost.cmds = a.rds.ncmds + a.replica.ncmds;
		cost.trips = a.rds.ntrips + a.replica.ntrips;
		if ((st = req_parse(&r, &a, &fr)) != 0) {
			req_identify(&r);
			resp_error(&r, st, st == 413 ? "The request body is "
			    "larger than 64 KiB." : "The request could not be "
			    "read (malformed form or query string).");
		} else
			route_dispatch(&r, ctx->routes, ctx->nroutes);
		resp_send(&r);
		st = r.status;
		req_finish(&r);
		fcgi_close(&fr);
		/* The latency is the client's; the cost includes the work
		 * the request left for after its response. */
		clock_gettime(CLOCK_MONOTONIC, &t1);
		a.in_request = 0;
		app_run_after(&a);
		cost.stmts = a.db.nstmt - cost.stmts;
		cost.cmds = a.rds.ncmds + a.replica.ncmds - cost.cmds;
		cost.trips = a.rds.ntrips + a.replica.ntrips - cost.trips;
		metrics_observe(a.metrics, a.metrics_idx, st,
		    (t1.tv_sec - t0.tv_sec) * 1000000LL +
		    (t1.tv_nsec - t0.tv_nsec) / 1000, &cost);
	}
	app_close(&a);
	return 0;
}

int
app_serve(int argc, char **argv, const char *name,
    const struct route *routes, size_t nroutes)
{
	struct serve_ctx ctx = { name, routes, nroutes };
	char sock[CFG_SOCK_MAX + 1] = "", def[64];
	struct cfg cfg;
	int ch, nproc = 2, fd;
	long long v;

	log_init(name);
	while ((ch = getopt(argc, argv, "s:n:")) != -1) {
		switch (ch) {
		case 's':
			if (strlen(optarg) > CFG_SOCK_MAX) {
				log_err("-s: path longer than %d bytes",
				    CFG_SOCK_MAX);
				return 1;
			}
			memcpy(sock, optarg, strlen(optarg) + 1);
			break;
		case 'n':
			if (valid_int(optarg, 1, 64, &v) == -1) {
				log_err("-n: 1 to 64 processes");
				return 1;
			}
			nproc = (int)v;
			break;
		default:
			fprintf(stderr, "usage: %s [-s socket] [-n procs]\n",
			    argv[0]);
			return 1;
		}
	}
	if (cfg_load(&cfg) == -1)
		return 1;
	if (*sock == '\0') {
		snprintf(def, sizeof(def), "%s.sock", name);
		if (cfg_path(&cfg, def, sock, sizeof(sock)) == -1) {
			log_err("RUN_DIR too long for the socket path");
			return 1;
		}
	}
	if ((fd = prefork_listen(sock, 0660)) == -1)
		return 1;
	log_info("listening on %s with %d processes", sock, nproc);
	return prefork_run(fd, sock, nproc, serve_child, &ctx);
}
