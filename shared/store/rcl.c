/* rcl.c -- Redis Cluster routing; see rcl.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/log.h"
#include "store/rcl.h"
#include "store/rcl_int.h"
#include "store/rcmd.h"
#include "store/rhealth.h"

#define REDIRECTS	5	/* MOVED/ASK hops one command may take */

struct rcl_entry {
	int		 slot;		/* the command's, -1: none */
	int		 node;		/* where it was queued */
	char		*cmd;		/* as sent, for a retry elsewhere */
	size_t		 len;
	const char	*script;	/* EVALSHA: its source */
	redisReply	*reply;
	int		 state;		/* 0 queued, 1 read, -1 failed */
};

/* The whole cluster's slot in the host's backoff table (rcl.h), named
 * by its seeds: every process of a host reads the same (a list cut at
 * the buffer's end still names one cluster the same way everywhere). */
static struct rhealth *
whole_health(const char *seeds)
{
	char name[512];

	snprintf(name, sizeof(name), "cluster %s", seeds);
	return rhealth_slot(name);
}

struct rcl *
rcl_open(const char *seeds, int timeout_ms, const char *auth,
    const char *sockdir)
{
	struct rcl *cl = xcalloc(1, sizeof(*cl));
	char *list = xstrdup(seeds), *tok, *save = NULL;

	cl->timeout_ms = timeout_ms;
	cl->waits_left = -1;
	cl->auth = auth;
	cl->sockdir = sockdir;
	memset(cl->map, RCL_NONE, sizeof(cl->map));
	cl->stale = 1;
	cl->health = whole_health(seeds);
	for (tok = strtok_r(list, ", ", &save); tok != NULL;
	    tok = strtok_r(NULL, ", ", &save))
		if (strchr(tok, ':') != NULL)
			rcl_node_at(cl, tok);
	free(list);
	cl->nseeds = cl->nnodes;
	if (cl->nnodes == 0) {
		log_err("TALLY_REDIS_CLUSTER: no host:port in \"%s\"", seeds);
		free(cl);
		return NULL;
	}
	return cl;
}

static void
entry_free(struct rcl_entry *e)
{
	free(e->cmd);
	if (e->reply != NULL)
		freeReplyObject(e->reply);
	memset(e, 0, sizeof(*e));
}

void
rcl_close(struct rcl *cl)
{
	int i;

	if (cl == NULL)
		return;
	for (; cl->head < cl->nq; cl->head++)
		entry_free(&cl->q[cl->head]);
	free(cl->q);
	for (i = 0; i < cl->nnodes; i++)
		rconn_close(&cl->nodes[i]);
	free(cl);
}

/* What an error reply asks of us. */
enum redir { R_NONE, R_MOVED, R_ASK, R_WAIT, R_NOSCRIPT };

static enum redir
redirection(const redisReply *rep, int *slot, char *addr, size_t sz)
{
	int kind;

	if (rep == NULL || rep->type != REDIS_REPLY_ERROR || rep->str == NULL)
		return R_NONE;
	if ((kind = rcl_redirect_parse(rep->str, slot, addr, sz)) != 0)
		return kind == 'M' ? R_MOVED : R_ASK;
	if (strncmp(rep->str, "TRYAGAIN", 8) == 0 ||
	    strncmp(rep->str, "CLUSTERDOWN", 11) == 0 ||
	    strncmp(rep->str, "LOADING", 7) == 0)
		return R_WAIT;
	if (strncmp(rep->str, "NOSCRIPT", 8) == 0)
		return R_NOSCRIPT;
	return R_NONE;
}

int
rcl_node_known(const struct rcl *cl, const char *addr)
{
	int i, s;

	for (i = 0; i < cl->nnodes; i++) {
		if (strcmp(cl->nodes[i].addr, addr) != 0)
			continue;
		for (s = 0; s < RCL_SLOTS; s++)
			if (cl->map[s] == i)
				return i;
		return -1;
	}
	return -1;
}

/* Sends a formatted command to node n and waits for its reply. */
static redisReply *
raw_cmd(struct rcl *cl, int n, const char *cmd, size_t len)
{
	struct rconn *c = &cl->nodes[n];
	redisReply *rep;

	if (rconn_append_raw(c, cmd, len) == -1)
		return NULL;
	if (rconn_get_reply(c, &rep) == -1)
		return NULL;
	return rep;
}

/* Runs a formatted command from node n on, following MOVED and ASK,
 * waiting out TRYAGAIN and CLUSTERDOWN within half the timeout, loading
 * script on NOSCRIPT.  rep: the first reply when it was read already
 * (a pipeline's), else NULL. */
static redisReply *
follow(struct rcl *cl, int cslot, int n, const char *cmd, size_t len,
    const char *script, redisReply *rep)
{
	char addr[CFG_SOCK_MAX + 1];
	int hops = 0, pause = 5, slot, asking = 0, loaded = 0;
	enum redir d;

	for (;;) {
		if (rep == NULL) {
			long long t0 = clock_mono_ms();

			if (rcl_spent(cl))
				return NULL;
			if (asking) {
				redisReply *ok = rconn_cmd(&cl->nodes[n], 1,
				    (const char *[]){ "ASKING" },
				    (const size_t[]){ 6 });

				if (ok == NULL) {
					cl->stale = 1;	/* a node failed */
					rcl_waited(cl, t0);
					return NULL;
				}
				freeReplyObject(ok);
			}
			if ((rep = raw_cmd(cl, n, cmd, len)) == NULL) {
				cl->stale = 1;	/* a node failed */
				rcl_waited(cl, t0);
				return NULL;
			}
		}
		asking = 0;
		d = redirection(rep, &slot, addr, sizeof(addr));
		if (d == R_NONE || hops++ == REDIRECTS)
			return rep;
		if (d == R_NOSCRIPT) {
			redisReply *l;

			if (script == NULL || loaded++)
				return rep;
			l = rconn_cmd(&cl->nodes[n], 3, (const char *[]){
			    "SCRIPT", "LOAD", script }, (const size_t[]){ 6, 4,
			    strlen(script) });
			if (l == NULL)
				return rep;
			freeReplyObject(l);
		} else if (d == R_WAIT) {
			/* Half the timeout a pipeline (or command), not an
			 * entry, once within the caller's budget: each entry
			 * waited its own, one after another (seconds for a
			 * request on a cluster that says it is down) */
			if (cl->pause_until == 0)
				cl->pause_until = clock_mono_ms() +
				    cl->timeout_ms / 2;
			if (rcl_spent(cl) ||
			    clock_mono_ms() + pause > cl->pause_until) {
				if (cl->pause_until > 1 && cl->waits_left > 0)
					cl->waits_left--;	/* once */
				cl->pause_until = 1;	/* the others: none */
				return rep;
			}
			nanosleep(&(struct timespec){ 0, pause * 1000000L },
			    NULL);
			pause *= 2;
			/* a failover may be under way: the map read again, at
			 * its rate (forced at every pause, every process sent
			 * CLUSTER SLOTS to a cluster in trouble) */
			cl->stale = 1;
			if ((slot = rcl_node_for(cl, cslot)) < 0)
				return rep;
			n = slot;
		} else {
			/* only to a node of the cluster's own map: a stranger
			 * is asked for nothing (the map read again first, in
			 * case it is a new master) */
			int to = rcl_node_known(cl, addr);

			if (to < 0) {
				cl->stale = 1;
				cl->refreshed_ms = 0;
				rcl_node_for(cl, slot);
				to = rcl_node_known(cl, addr);
			}
			if (to < 0)
				return rep;
			if (d == R_MOVED) {
				if (slot >= 0 && slot < RCL_SLOTS) {
					cl->map[slot] = (unsigned char)to;
					cl->masters |= 1u << to;
				}
				cl->stale = 1;
			}
			asking = d == R_ASK;
			n = to;
		}
		freeReplyObject(rep);
		rep = NULL;
	}
}

redisReply *
rcl_cmd_slot(struct rcl *cl, int slot, int argc, const char **argv,
    const size_t *lens)
{
	redisReply *rep;
	char *cmd;
	size_t len;
	int n;

	/* A reply left queued would be read as this command's; one that
	 * failed there is not this command's failure. */
	if (rcl_pending(cl) > 0)
		(void)rcl_settle(cl);
	cl->failed = 0;
	if ((n = rcl_node_for(cl, slot)) < 0)
		return NULL;
	cmd = rcmd_alloc(argc, argv, lens, &len);
	cl->ncmds++;
	cl->ntrips++;
	cl->pause_until = 0;
	rep = follow(cl, slot, n, cmd, len, NULL, NULL);
	free(cmd);
	return rep;
}

/* hiredis takes NULL lengths for NUL-terminated arguments; so do we. */
static size_t *
lengths(int argc, const char **argv, const size_t *lens)
{
	size_t *out;
	int i;

	if (lens != NULL)
		return NULL;
	out = xcalloc((size_t)argc + 1, sizeof(*out));
	for (i = 0; i < argc; i++)
		out[i] = strlen(argv[i]);
	return out;
}

redisReply *
rcl_cmd(struct rcl *cl, int argc, const char **argv, const size_t *lens)
{
	size_t *own = lengths(argc, argv, lens);
	redisReply *rep;

	if (own != NULL)
		lens = own;
	rep = rcl_cmd_slot(cl, rcl_cmd_slotof(argc, argv, lens), argc, argv, lens);
	free(own);
	return rep;
}

int
rcl_append(struct rcl *cl, int argc, const char **argv, const size_t *lens,
    const char *script)
{
	size_t *own = lengths(argc, argv, lens);
	struct rcl_entry *e;
	char *cmd = NULL;
	size_t len = 0;
	int slot, n;

	/* A caller that stopped at a failed reply left the rest of its
	 * pipeline queued (other nodes' replies: one server's connection
	 * drops them with it): not this command's, nor the next reads'.
	 * They are read and dropped first, or every later reply of the
	 * request was the one before's (a badge showing a notice's id). */
	rcl_drop_failed(cl);
	if (own != NULL)
		lens = own;
	slot = rcl_cmd_slotof(argc, argv, lens);
	if ((n = rcl_node_for(cl, slot)) >= 0)
		cmd = rcmd_alloc(argc, argv, lens, &len);
	free(own);
	if (n < 0)
		return -1;
	if (rconn_append_raw(&cl->nodes[n], cmd, len) == -1) {
		free(cmd);
		cl->stale = 1;	/* a node failed */
		return -1;
	}
	if (cl->nq == cl->capq) {
		cl->capq = cl->capq ? cl->capq * 2 : 64;
		cl->q = xrealloc(cl->q, cl->capq * sizeof(*cl->q));
	}
	e = &cl->q[cl->nq++];
	memset(e, 0, sizeof(*e));
	e->slot = slot;
	e->node = n;
	e->cmd = cmd;
	e->len = len;
	e->script = script;
	cl->ncmds++;
	return 0;
}

int
rcl_pending(const struct rcl *cl)
{
	return (int)(cl->nq - cl->head);
}

/* Reads every queued reply: all nodes' commands are sent first, so the
 * nodes work at once; then the replies that ask for another node (or a
 * pause, or a script) are run again, now that no node has replies
 * pending. */
static void
drain(struct rcl *cl)
{
	int failed[RCL_NODES] = { 0 }, i;
	size_t k;

	cl->ntrips++;
	cl->pause_until = 0;
	for (i = 0; i < cl->nnodes; i++)
		if (cl->nodes[i].unsent && rconn_flush(&cl->nodes[i]) == -1)
			failed[i] = 1;
	for (k = cl->head; k < cl->nq; k++) {
		struct rcl_entry *e = &cl->q[k];

		long long t0;

		if (e->state != 0)
			continue;
		t0 = clock_mono_ms();
		/* Once a node made the caller wait as often as it allows,
		 * the others' replies are not waited for: their connections
		 * are given up (no backoff: they did nothing wrong). */
		if (!failed[e->node] && rcl_spent(cl)) {
			rconn_abandon(&cl->nodes[e->node]);
			failed[e->node] = 1;
		}
		if (failed[e->node] ||
		    rconn_get_reply(&cl->nodes[e->node], &e->reply) == -1) {
			if (!failed[e->node])
				rcl_waited(cl, t0);
			failed[e->node] = 1;
			e->state = -1;
			cl->stale = 1;	/* a node failed */
		} else
			e->state = 1;
	}
	for (k = cl->head; k < cl->nq; k++) {
		struct rcl_entry *e = &cl->q[k];
		char addr[CFG_SOCK_MAX + 1];
		int slot;

		if (e->state == 1 && redirection(e->reply, &slot, addr,
		    sizeof(addr)) != R_NONE) {
			e->reply = follow(cl, e->slot, e->node, e->cmd, e->len,
			    e->script, e->reply);
			if (e->reply == NULL)
				e->state = -1;
		}
	}
}

int
rcl_get_reply(struct rcl *cl, redisReply **out)
{
	struct rcl_entry *e;

	if (cl->head == cl->nq)
		return -1;
	e = &cl->q[cl->head];
	if (e->state == 0)
		drain(cl);
	*out = e->reply;
	e->reply = NULL;
	cl->head++;
	if (e->state == -1) {
		entry_free(e);
		cl->failed = 1;
		if (cl->head == cl->nq)
			cl->head = cl->nq = cl->failed = 0;
		return -1;
	}
	entry_free(e);
	/* the pipeline read whole: a failure in it is over with it (kept,
	 * the next pipeline's replies were dropped as its own) */
	if (cl->head == cl->nq)
		cl->head = cl->nq = cl->failed = 0;
	return 0;
}

void
rcl_drop_failed(struct rcl *cl)
{
	if (cl->failed && rcl_pending(cl) > 0)
		(void)rcl_settle(cl);
	cl->failed = 0;
}

int
rcl_settle(struct rcl *cl)
{
	redisReply *rep;
	int rc = 0, n = rcl_pending(cl);

	while (rcl_pending(cl) > 0) {
		if (rcl_get_reply(cl, &rep) == -1)
			rc = -1;
		else
			freeReplyObject(rep);
	}
	cl->head = cl->nq = 0;
	if (n > 0)
		log_warn("redis: %d queued repl%s read and dropped (left "
		    "unread by the code that queued them)", n, n == 1 ? "y" :
		    "ies");
	return rc;
}
