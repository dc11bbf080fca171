/* rcl_topo.c -- who serves a Redis Cluster: its nodes (and how each is
 * reached), its masters, and the signature that changes when a replica
 * is promoted or a master restarts; see rcluster.h. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "store/rcl_int.h"
#include "store/rcluster.h"

int
rcl_node_at(struct rcl *cl, const char *addr)
{
	struct rconn *c;
	const char *port;
	int i;

	for (i = 0; i < cl->nnodes; i++)
		if (strcmp(cl->nodes[i].addr, addr) == 0)
			return i;
	if (cl->nnodes == RCL_NODES || strlen(addr) > CFG_SOCK_MAX ||
	    !rcl_addr_valid(addr))
		return -1;
	c = &cl->nodes[cl->nnodes];
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
	return cl->nnodes++;
}

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

/* A master's run_id (changes when it restarts), or "?". */
static void
run_id(struct rcl *cl, int n, char *out, size_t sz)
{
	redisReply *rep = rcl_node_cmd(cl, n, 2, (const char *[]){ "INFO",
	    "server" }, (const size_t[]){ 4, 6 });
	const char *p;

	snprintf(out, sz, "?");
	if (rep != NULL && rep->type == REDIS_REPLY_STRING &&
	    (p = strstr(rep->str, "run_id:")) != NULL)
		snprintf(out, sz, "%.40s", p + 7);
	if (rep != NULL)
		freeReplyObject(rep);
}

int
rcl_signature(struct rcl *cl, char *out, size_t sz)
{
	char rid[48], addr[CFG_SOCK_MAX + 1];
	redisReply *rep = NULL, *r, *m;
	size_t k, at = 0;
	int i, n;

	for (i = 0; i < cl->nnodes && rep == NULL; i++)
		if ((rep = rcl_node_cmd(cl, i, 2, (const char *[]){ "CLUSTER",
		    "SLOTS" }, (const size_t[]){ 7, 5 })) != NULL &&
		    rep->type != REDIS_REPLY_ARRAY) {
			freeReplyObject(rep);
			rep = NULL;
		}
	if (rep == NULL)
		return -1;
	out[0] = '\0';
	for (k = 0; k < rep->elements && at < sz; k++) {
		r = rep->element[k];
		if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 ||
		    (m = r->element[2])->type != REDIS_REPLY_ARRAY ||
		    m->elements < 3 || m->element[2]->type != REDIS_REPLY_STRING)
			continue;
		snprintf(addr, sizeof(addr), "%s:%lld", m->element[0]->str,
		    m->element[1]->integer);
		if ((n = rcl_node_at(cl, addr)) < 0)
			continue;
		run_id(cl, n, rid, sizeof(rid));
		at += (size_t)snprintf(out + at, sz - at, "%lld-%lld:%s@%s;",
		    r->element[0]->integer, r->element[1]->integer,
		    m->element[2]->str, rid);
	}
	freeReplyObject(rep);
	return at < sz ? 0 : -1;
}
