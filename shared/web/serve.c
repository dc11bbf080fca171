/* serve.c -- the FastCGI serving loop of a handler program; see serve.h. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/prefork.h"
#include "base/valid.h"
#include "count/ckeep.h"
#include "store/app.h"
#include "web/batch.h"
#include "web/keep.h"
#include "web/peer.h"
#include "web/req.h"
#include "web/resp.h"
#include "web/route.h"
#include "web/serve.h"

#define BODY_KEEP_MAX	(1 << 20)	/* a bigger page's buffer is freed */

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
	int			 nproc;
	struct app		*app;
};

/* A request taken: when, and read. */
static void
slot_open(struct slot *sl, void *arg)
{
	const struct serve_ctx *ctx = arg;

	sl->t0 = clock_mono_us();
	sl->st = req_parse(&sl->r, ctx->app, &sl->fr);
	/* The page buffer of the request before: no growing from 256
	 * bytes by doubling (and copying) for every page. */
	sl->r.body = sl->keep;
	sl->keep = (struct buf){ NULL, 0, 0 };
}

/* Serves one request on its own. */
static void
slot_serve(struct slot *sl, const struct serve_ctx *ctx)
{
	if (sl->st != 0) {
		resp_error(&sl->r, sl->st, sl->st == 413 ? "The request body "
		    "is larger than 64 KiB." : "The request could not be "
		    "read (malformed form or query string).");
	} else
		route_dispatch(&sl->r, ctx->routes, ctx->nroutes);
}

/* Sends the answer and ends the request. */
static void
slot_close(struct slot *sl)
{
	resp_send(&sl->r);
	sl->status = sl->r.status;
	if (sl->r.body.p != NULL && sl->r.body.cap <= BODY_KEEP_MAX) {
		sl->keep = sl->r.body;
		sl->keep.len = 0;
		sl->keep.p[0] = '\0';
		sl->r.body = (struct buf){ NULL, 0, 0 };
	}
	req_finish(&sl->r);
	fcgi_close(&sl->fr);
	sl->t1 = clock_mono_us();
}

/* SIGTERM (the pool's master stopping, or dead: PR_SET_PDEATHSIG) asks
 * the process to end once its request is answered.  libfcgi's own
 * handler only sets a flag its accept looks at, and over TCP the accept
 * is peer_accept()'s: an idle process never saw it and outlived its
 * pool.  Set once a signal came; read between requests. */
static volatile sig_atomic_t stopping;

static void
on_term(int sig)
{
	(void)sig;
	stopping = 1;
	FCGX_ShutdownPending();		/* libfcgi's accept too */
}

/* Takes the next request: peer_accept() on the non-blocking listening
 * socket (batch.h), waiting in poll() while nothing is queued (a second
 * at a time: a SIGTERM between the check and the wait is seen then).
 * As FCGX_Accept_r(); -1 once the process is to stop. */
static int
take(FCGX_Request *fr, int fd)
{
	int rc = -1;

	while (!stopping && ((rc = peer_accept(fr)) == -EAGAIN ||
	    rc == -EWOULDBLOCK))
		if (poll(&(struct pollfd){ fd, POLLIN, 0 }, 1, 1000) == -1 &&
		    errno != EINTR)
			return -1;
	return rc == 0 ? 0 : stopping ? -1 : rc;	/* one taken: answered */
}

static void	(*together_begin)(struct slot *, int);
static void	(*together_end)(void);

void
serve_together(void (*begin)(struct slot *, int), void (*end)(void))
{
	together_begin = begin;
	together_end = end;
}

/* Serves s[0..n), taken together (batch.h), prepared at once. */
static void
serve_taken(struct slot *s, int n, const struct serve_ctx *ctx)
{
	int i;

	together_begin(s, n);
	for (i = 0; i < n; i++) {
		slot_serve(&s[i], ctx);
		slot_close(&s[i]);
	}
	if (together_end != NULL)
		together_end();
}

/* What this pool takes together (batch.h), of its routes' flags: the
 * group commit's where a pool of one writes (SQLite: one writer) or
 * where groups run at once (PostgreSQL: any pool), and a pool of
 * readers what its program prepares at once; 0 when none of its routes
 * is such. */
static unsigned
gathers(const struct serve_ctx *ctx, const struct app *a)
{
	unsigned want = 0, have = 0;
	size_t i;

	if (ctx->nproc == 1 || db_groups_at_once(a->db))
		want |= ROUTE_GROUP;
	if (ctx->nproc > 1 && together_begin != NULL)
		want |= ROUTE_TOGETHER;
	for (i = 0; i < ctx->nroutes; i++)
		have |= ctx->routes[i].flags & want;
	return have;
}

static void
cost_now(struct app *a, struct metrics_cost *c)
{
	c->stmts = db_nstmt(a->db);
	c->sqltrips = db_ntrips(a->db);
	c->commits = db_ncommits(a->db);
	c->cmds = rds_ncmds(a->rds) + rds_ncmds(a->replica);
	c->trips = rds_ntrips(a->rds) + rds_ntrips(a->replica);
	c->trips += keep_syncs();	/* its PINGs (keep.h) */
	c->kept = keep_wholes();
	c->ckept = ckeep_hits();
	c->ahead = rds_nstashes(a->rds);
	c->sqlahead = db_nahead(a->db);
}

/* Request i's share of what n requests taken together cost from c0 to
 * c1: the whole divided, the remainder one each to the first ones, so
 * that the shares add up to the whole (a floor each lost up to n - 1 of
 * every count: a quarter of a round trip a request, four taken). */
static unsigned long long
share(unsigned long long total, int i, int n)
{
	return total / (unsigned)n + ((unsigned)i < total % (unsigned)n);
}

static void
cost_share(struct metrics_cost *c, const struct metrics_cost *c0,
    const struct metrics_cost *c1, int i, int n)
{
	c->stmts = share(c1->stmts - c0->stmts, i, n);
	c->sqltrips = share(c1->sqltrips - c0->sqltrips, i, n);
	c->commits = share(c1->commits - c0->commits, i, n);
	c->cmds = share(c1->cmds - c0->cmds, i, n);
	c->trips = share(c1->trips - c0->trips, i, n);
	c->kept = share(c1->kept - c0->kept, i, n);
	c->ckept = share(c1->ckept - c0->ckept, i, n);
	c->ahead = share(c1->ahead - c0->ahead, i, n);
	c->sqlahead = share(c1->sqlahead - c0->sqlahead, i, n);
}

static int
serve_child(int fd, void *arg)
{
	struct serve_ctx *ctx = arg;
	struct slot *s;
	struct metrics_cost c0, c1, cost;
	struct app a;
	unsigned flag, flags;
	int i, n, g, nslot;

	if (app_open(&a, ctx->name) == -1)
		return -1;
	ctx->app = &a;
	/* Requests never run a WAL checkpoint (an fdatasync in the middle
	 * of someone's like): the worker does (handlers/worker.c). */
	db_autocheckpoint_off(a.db);
	a.metrics = metrics_open(&a.cfg);
	a.metrics_idx = metrics_handler(ctx->name);
	db_lock_metrics(a.db, a.metrics, a.metrics_idx); /* the writers' lock */
	/* A pool of readers reads what it took in one transaction (its
	 * requests all arrived before the snapshot): two fcntl() calls and
	 * a WAL header check for them all, not for each statement.  A
	 * writer alone (the social writer) has its own transactions. */
	db_reads_together(a.db, ctx->nproc > 1);
	if (a.metrics != NULL && a.metrics_idx >= 0)
		db_count_runs(a.db, a.metrics->stmt_runs[a.metrics_idx]);
	/* what the pool gathers (batch.h): a group commit takes up to
	 * BATCH_MAX, the readers prepared together READ_MAX */
	flags = gathers(ctx, &a);
	nslot = flags & ROUTE_GROUP ? BATCH_MAX : READ_MAX;
	s = xcalloc((size_t)nslot, sizeof(*s));
	if (FCGX_Init() != 0) {
		log_err("FCGX_Init failed");
		free(s);
		app_close(&a);
		return -1;
	}
	/* after FCGX_Init(), which installs libfcgi's handler */
	sigaction(SIGTERM, &(struct sigaction){ .sa_handler = on_term }, NULL);
	for (i = 0; i < nslot; i++)
		peer_init_request(&s[i].fr);
	batch_listen_init(fd);
	while (take(&s[0].fr, fd) >= 0) {
		a.in_request = 1;
		/* a request (or those taken with it) waits one Redis
		 * timeout at most, and what it leaves for after too */
		rds_wait_budget(a.rds, 1);
		cost_now(&a, &c0);
		slot_open(&s[0], ctx);
		g = 1;
		flag = 0;
		n = flags != 0 ? batch_gather(s, ctx->routes, ctx->nroutes,
		    flags, slot_open, ctx, &g, &flag) : 1;
		if (g > 1 && flag == ROUTE_GROUP)
			batch_run(s, g, ctx->routes, ctx->nroutes, slot_close);
		else if (g > 1)
			serve_taken(s, g, ctx);
		else {
			slot_serve(&s[0], ctx);
			slot_close(&s[0]);
		}
		if (g < n) {
			slot_serve(&s[g], ctx);
			slot_close(&s[g]);
		}
		db_reads_end(a.db);	/* before the work left for after */
		a.in_request = 0;
		/* The latency is the client's; the cost includes the work
		 * the requests left for after their responses, shared. */
		app_run_after(&a);
		cost_now(&a, &c1);
		for (i = 0; i < n; i++) {
			cost_share(&cost, &c0, &c1, i, n);
			metrics_observe(a.metrics, a.metrics_idx, s[i].status,
			    s[i].t1 - s[i].t0, &cost);
		}
	}
	for (i = 0; i < nslot; i++)
		buf_free(&s[i].keep);
	free(s);
	app_close(&a);
	return 0;
}

int
serve_run(int argc, char **argv, const char *name,
    const struct route *routes, size_t nroutes)
{
	struct serve_ctx ctx = { name, routes, nroutes, 2, NULL };
	char sock[CFG_SOCK_MAX + 1] = "", def[64];
	const char *l;
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
	/* TALLY_LISTEN: where to listen when -s does not say ("host:port":
	 * FastCGI over TCP, for a handler host behind a remote nginx) */
	if (*sock == '\0' && (l = getenv("TALLY_LISTEN")) != NULL &&
	    *l != '\0' && strlen(l) < sizeof(sock))
		memcpy(sock, l, strlen(l) + 1);
	if (*sock == '\0') {
		snprintf(def, sizeof(def), "%s.sock", name);
		if (cfg_path(&cfg, def, sock, sizeof(sock)) == -1) {
			log_err("RUN_DIR too long for the socket path");
			return 1;
		}
	}
	if ((fd = prefork_listen(sock, 0660)) == -1 ||
	    peer_setup(fd, sock) == -1)
		return 1;
	log_info("listening on %s with %d processes", sock, nproc);
	ctx.nproc = nproc;
	return prefork_run(fd, sock, nproc, serve_child, &ctx);
}
