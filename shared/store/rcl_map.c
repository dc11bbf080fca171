/* rcl_map.c -- who serves a Redis Cluster: its nodes (and how each is
 * reached), the slot map (CLUSTER SLOTS, refreshed when stale) with its
 * backoff when no node answers, a caller's wait budget, the masters, and
 * the signature that changes when a replica is promoted or a master
 * restarts; see rcl.h.
 *
 * In this order, each part calling only the parts above it: the node
 * table; the whole cluster's host-wide backoff; the wait budget; the
 * map; what the map tells (masters, a key's node); one node's command
 * and the signature.  rcl.c routes with it and is not called from here. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "base/clock.h"
#include "store/rcl.h"
#include "store/rcl_int.h"
#include "store/rhealth.h"

/* The nodes: every master and replica seen, by host:port. */

/* A place for a new node: the next, or when every one is taken that of
 * a node nothing needs (rcl.h: rcl_node_at()); -1 when none is free. */
static int
free_node(const struct rcl *cl)
{
	int i;

	if (cl->nnodes < RCL_NODES)
		return cl->nnodes;
	if (cl->head < cl->nq)	/* a pipeline's entries name nodes */
		return -1;
	for (i = cl->nseeds; i < cl->nnodes; i++)
		if (!(cl->masters & (1u << i)) && !(cl->naming & (1u << i)) &&
		    cl->nodes[i].pending == 0 && cl->nodes[i].unsent == 0)
			return i;
	return -1;
}

int
rcl_node_at(struct rcl *cl, const char *addr)
{
	struct rconn *c;
	const char *port;
	int i;

	for (i = 0; i < cl->nnodes; i++)
		if (strcmp(cl->nodes[i].addr, addr) == 0) {
			cl->naming |= 1u << i;
			return i;
		}
	if (strlen(addr) > CFG_SOCK_MAX || !rcl_addr_valid(addr) ||
	    (i = free_node(cl)) == -1)
		return -1;
	c = &cl->nodes[i];
	rconn_close(c);
	rconn_init(c, addr, cl->timeout_ms);
	c->auth = cl->auth;
	/* A node of this machine that also listens on a unix socket
	 * (sockdir/<port>/redis.sock, as tally-run starts them): the same
	 * node, without TCP's cost. */
	if (cl->sockdir != NULL && strncmp(addr, "127.0.0.1:", 10) == 0 &&
	    (port = strchr(addr, ':') + 1) != NULL) {
		char path[CFG_SOCK_MAX + 32];
		int n = snprintf(path, sizeof(path), "%s/%s/redis.sock",
		    cl->sockdir, port);

		if (n > 0 && n <= CFG_SOCK_MAX && access(path, F_OK) == 0)
			memcpy(c->local, path, (size_t)n + 1);
	}
	if (i == cl->nnodes)
		cl->nnodes++;
	cl->naming |= 1u << i;
	return i;
}

/* The whole cluster down (rcl.h): one backoff for all its nodes while
 * every master of the map is marked down on the host.  Replicas are not
 * asked: no command goes to them, so most are never tried.  A process
 * without a map (none of its requests has reached the cluster yet) takes
 * the host's word, the whole cluster's mark. */

static int
all_down(const struct rcl *cl)
{
	int i;

	if (cl->health == NULL)
		return 0;
	if (cl->masters == 0)
		return rhealth_marked(cl->health);
	for (i = 0; i < cl->nnodes; i++)
		if ((cl->masters & (1u << i)) &&
		    !rhealth_marked(cl->nodes[i].health))
			return 0;
	return 1;
}

/* 1 when the caller leaves every node alone: all are marked down and the
 * cluster's backoff runs, or another process's try is in flight.  claim:
 * when the backoff is over, take the try (this process goes on until
 * try_until_ms); else a question only. */
static int
whole_skip(struct rcl *cl, int claim)
{
	long long answered = 0;
	int i;

	if (cl->health == NULL)
		return 0;
	/* a node answered since (its mark cleared): the cluster is up.
	 * Asked first: on a cluster that answers, a load or two a command,
	 * no clock */
	if (!all_down(cl)) {
		rhealth_answered(cl->health);
		return 0;
	}
	if (clock_mono_ms() < cl->try_until_ms)
		return 0;		/* this process holds the try */
	for (i = 0; i < cl->nnodes; i++)
		if (cl->nodes[i].answered_ms > answered)
			answered = cl->nodes[i].answered_ms;
	return rhealth_skip(cl->health, answered, cl->timeout_ms,
	    claim ? &cl->try_until_ms : NULL);
}

/* The caller's wait budget: a node that made it wait spends one. */

void
rcl_budget(struct rcl *cl, int waits)
{
	cl->waits_left = waits;
}

int
rcl_spent(const struct rcl *cl)
{
	return cl->waits_left == 0;
}

/* After a node failed: 1 when it made us wait since t0 (hung, or past
 * its timeout), which spends the caller's wait budget (rcl_budget());
 * 0 when it failed at once (being restarted, or dead: a failover). */
int
rcl_waited(struct rcl *cl, long long t0)
{
	if (clock_mono_ms() - t0 <= RCL_WAITED_MS)
		return 0;
	if (cl->waits_left > 0)
		cl->waits_left--;
	/* the node is marked down now (rconn.c); were all of them, the
	 * cluster's own backoff starts, or goes a step further after the
	 * try it claimed */
	if (all_down(cl))
		rhealth_failed(cl->health, cl->timeout_ms);
	cl->try_until_ms = 0;
	return 1;
}

/* The slot map. */

int
rcl_map_parse(struct rcl *cl, const redisReply *rep, unsigned char *map)
{
	const redisReply *r, *m;
	char addr[CFG_SOCK_MAX + 1];
	long long a, b, s;
	size_t k;
	int n;

	if (rep == NULL || rep->type != REDIS_REPLY_ARRAY || rep->elements == 0)
		return -1;
	memset(map, RCL_NONE, RCL_SLOTS);
	cl->naming = 0;		/* what this map names, from now */
	for (k = 0; k < rep->elements; k++) {
		r = rep->element[k];
		/* [start, end, [host, port, ...], replicas...]: every part
		 * of the type it must be, the range within the slots */
		if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 3 ||
		    r->element[0]->type != REDIS_REPLY_INTEGER ||
		    r->element[1]->type != REDIS_REPLY_INTEGER)
			continue;
		a = r->element[0]->integer;
		b = r->element[1]->integer;
		if (a < 0 || b < a || b >= RCL_SLOTS)
			continue;
		m = r->element[2];
		if (m->type != REDIS_REPLY_ARRAY || m->elements < 2 ||
		    m->element[0]->type != REDIS_REPLY_STRING ||
		    m->element[1]->type != REDIS_REPLY_INTEGER ||
		    m->element[1]->integer < 1 || m->element[1]->integer > 65535)
			continue;
		if (snprintf(addr, sizeof(addr), "%s:%lld",
		    m->element[0]->len > 0 ? m->element[0]->str : "127.0.0.1",
		    m->element[1]->integer) >= (int)sizeof(addr))
			continue;
		if ((n = rcl_node_at(cl, addr)) < 0)
			continue;
		for (s = a; s <= b; s++)
			map[s] = (unsigned char)n;
	}
	return 0;
}

/* Reads CLUSTER SLOTS from node n into the map: 0, or -1. */
static int
load_map(struct rcl *cl, int n)
{
	unsigned char map[RCL_SLOTS];
	redisReply *rep;
	int rc, i;

	rep = rconn_cmd(&cl->nodes[n], 2, (const char *[]){ "CLUSTER",
	    "SLOTS" }, (const size_t[]){ 7, 5 });
	if (rep == NULL)
		return -1;
	rc = rcl_map_parse(cl, rep, map);
	freeReplyObject(rep);
	if (rc == -1)
		return -1;
	memcpy(cl->map, map, sizeof(map));
	cl->masters = 0;
	for (i = 0; i < RCL_SLOTS; i++)
		if (map[i] != RCL_NONE)
			cl->masters |= 1u << map[i];
	cl->stale = 0;
	return 0;
}

/* Asks the nodes in turn for the map (at most once per RCL_REFRESH_MS),
 * starting where the last refresh ended, so a dead node is not asked
 * first every time.  A node with a pipeline's replies queued is not
 * asked: its CLUSTER SLOTS would read them first and drop them, and the
 * pipeline's entries would then take the replies of the commands after
 * them (a page showed another post's counts during a failover). */
static int
refresh(struct rcl *cl)
{
	static int start;
	long long now = clock_mono_ms();
	int k, n = cl->nnodes, hung = 0, skipped = 0;

	if (now - cl->refreshed_ms < RCL_REFRESH_MS || now < cl->down_until)
		return -1;
	cl->refreshed_ms = now;
	for (k = 0; k < n; k++) {
		int i = (start + k) % n;

		if (cl->nodes[i].pending > 0) {
			skipped++;
			continue;
		}
		if (load_map(cl, i) == 0) {
			start = i;
			cl->down_ms = 0;
			return 0;
		}
		/* One node that made us wait (hung, or a timeout) is all a
		 * request pays: the next refresh starts after it.  Nodes in
		 * their backoff fail at once and cost nothing. */
		if ((hung = rcl_waited(cl, now))) {
			start = (i + 1) % n;
			break;
		}
	}
	/* No node answered.  When one made us wait (hung), the whole cluster
	 * is left alone for a growing backoff, as rconn.c does for one
	 * server (250 ms doubling to 4 s).  Nodes that refused at once
	 * (being restarted) cost nothing: ask again at the next refresh --
	 * at once when a node was passed over for its queued replies (it
	 * may well answer once they are read). */
	if (!hung && skipped > 0) {
		cl->refreshed_ms = 0;
		return -1;
	}
	if (!hung) {
		cl->down_until = now + RCL_REFRESH_MS;
		return -1;
	}
	cl->down_ms = cl->down_ms ? cl->down_ms * 2 : 250;
	if (cl->down_ms > 4000)
		cl->down_ms = 4000;
	cl->down_until = clock_mono_ms() + cl->down_ms;
	return -1;
}

/* The node serving slot (-1: any master), refreshing the map when it is
 * stale or has no node for it; -1 when none is known, the whole cluster
 * is left alone (whole_skip(), which claim passes on), or the caller's
 * wait budget is spent. */
static int
node_for(struct rcl *cl, int slot, int claim)
{
	int s = slot < 0 ? 0 : slot;

	if (rcl_spent(cl) || whole_skip(cl, claim))
		return -1;
	if (cl->stale || cl->map[s] == RCL_NONE)
		refresh(cl);
	/* No node answered the last refresh: down until its backoff ends */
	if (clock_mono_ms() < cl->down_until)
		return -1;
	if (slot < 0) {
		for (s = 0; s < RCL_SLOTS && cl->map[s] == RCL_NONE; s++)
			;
		if (s == RCL_SLOTS)
			return -1;
	}
	return cl->map[s] == RCL_NONE ? -1 : cl->map[s];
}

int
rcl_node_for(struct rcl *cl, int slot)
{
	return node_for(cl, slot, 1);
}

int
rcl_up(struct rcl *cl)
{
	int n = node_for(cl, 0, 0);	/* a question: claims no try */

	return n >= 0 && rconn_up(&cl->nodes[n]);
}

/* What the map tells. */

int
rcl_masters(struct rcl *cl, int *idx, int max)
{
	int seen[RCL_NODES] = { 0 }, s, k = 0;

	if (!rcl_up(cl))
		return 0;
	for (s = 0; s < RCL_SLOTS; s++)
		if (cl->map[s] != RCL_NONE && !seen[cl->map[s]] && k < max) {
			seen[cl->map[s]] = 1;
			idx[k++] = cl->map[s];
		}
	return k;
}

int
rcl_same_node(const struct rcl *cl, const char *a, const char *b)
{
	unsigned char na = cl->map[rcl_keyslot(a, strlen(a))];

	return na != RCL_NONE && na == cl->map[rcl_keyslot(b, strlen(b))];
}

/* One node asked directly; who serves what. */

redisReply *
rcl_node_cmd(struct rcl *cl, int idx, int argc, const char **argv,
    const size_t *lens)
{
	long long t0 = clock_mono_ms();
	redisReply *rep;

	if (idx < 0 || idx >= cl->nnodes || rcl_spent(cl))
		return NULL;
	cl->ncmds++;
	cl->ntrips++;
	if ((rep = rconn_cmd(&cl->nodes[idx], argc, argv, lens)) == NULL) {
		cl->stale = 1;
		rcl_waited(cl, t0);
	}
	return rep;
}

/* A master's run_id (changes when it restarts): 0, or -1 when it could
 * not be read. */
static int
run_id(struct rcl *cl, int n, char *out, size_t sz)
{
	redisReply *rep = rcl_node_cmd(cl, n, 2, (const char *[]){ "INFO",
	    "server" }, (const size_t[]){ 4, 6 });
	const char *p;

	int rc = -1;

	snprintf(out, sz, "?");
	if (rep != NULL && rep->type == REDIS_REPLY_STRING &&
	    (p = strstr(rep->str, "run_id:")) != NULL) {
		snprintf(out, sz, "%.40s", p + 7);
		rc = 0;
	}
	if (rep != NULL)
		freeReplyObject(rep);
	return rc;
}

int
rcl_signature(struct rcl *cl, char *out, size_t sz, unsigned long long *hash)
{
	char rid[48], addr[CFG_SOCK_MAX + 1], ent[CFG_SOCK_MAX + 160];
	redisReply *rep = NULL, *r, *m;
	unsigned long long h = 1469598103934665603ULL;
	size_t k, at = 0, len;
	const char *p;
	int i, n;

	for (i = 0; i < cl->nnodes && rep == NULL; i++)
		if ((rep = rcl_node_cmd(cl, i, 2, (const char *[]){ "CLUSTER",
		    "SLOTS" }, (const size_t[]){ 7, 5 })) != NULL &&
		    (rep->type != REDIS_REPLY_ARRAY || rep->elements == 0)) {
			/* a node back empty knows no slot: not the map */
			freeReplyObject(rep);
			rep = NULL;
		}
	if (rep == NULL)
		return -1;
	snprintf(out, sz, "%s", "");
	for (k = 0; k < rep->elements; k++) {
		r = rep->element[k];
		if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 ||
		    (m = r->element[2])->type != REDIS_REPLY_ARRAY ||
		    m->elements < 3 || m->element[2]->type != REDIS_REPLY_STRING)
			continue;
		snprintf(addr, sizeof(addr), "%s:%lld", m->element[0]->str,
		    m->element[1]->integer);
		if ((n = rcl_node_at(cl, addr)) < 0)
			continue;
		/* a master that did not answer is no change of hands: the
		 * signature is not taken (a blip started two repair runs,
		 * one each way) */
		if (run_id(cl, n, rid, sizeof(rid)) == -1) {
			freeReplyObject(rep);
			return -1;
		}
		len = (size_t)snprintf(ent, sizeof(ent), "%lld-%lld:%.64s@%s;",
		    r->element[0]->integer, r->element[1]->integer,
		    m->element[2]->str, rid);
		for (p = ent; *p != '\0'; p++)		/* FNV-1a */
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		if (at + len + 4 <= sz) {	/* room for "..." after it */
			memcpy(out + at, ent, len + 1);
			at += len;
		} else if (at + 4 <= sz && at > 0 && out[at - 1] != '.')
			at += (size_t)snprintf(out + at, sz - at, "...");
	}
	freeReplyObject(rep);
	*hash = h & 0x7fffffffffffffffULL;
	return 0;
}
