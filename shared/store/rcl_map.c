/* rcl_map.c -- a Redis Cluster's slot map (CLUSTER SLOTS, refreshed
 * when stale) and its backoff when no node answers or one made us wait;
 * see rcluster.h. */
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "store/rcl_int.h"
#include "store/rcluster.h"

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

/* Reads CLUSTER SLOTS from node i into the map: 0, or -1. */
static int
load_map(struct rcl *cl, int i)
{
	unsigned char map[RCL_SLOTS];
	redisReply *rep;
	int rc;

	rep = rconn_cmd(&cl->nodes[i], 2, (const char *[]){ "CLUSTER",
	    "SLOTS" }, (const size_t[]){ 7, 5 });
	if (rep == NULL)
		return -1;
	rc = rcl_map_parse(cl, rep, map);
	freeReplyObject(rep);
	if (rc == -1)
		return -1;
	memcpy(cl->map, map, sizeof(map));
	cl->stale = 0;
	return 0;
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
	return 1;
}

/* Asks the nodes in turn for the map (at most once per RCL_REFRESH_MS),
 * starting where the last refresh ended, so a dead node is not asked
 * first every time. */
static int
refresh(struct rcl *cl)
{
	static int start;
	long long now = clock_mono_ms();
	int k, n = cl->nnodes, hung = 0;

	if (now - cl->refreshed_ms < RCL_REFRESH_MS || now < cl->down_until)
		return -1;
	cl->refreshed_ms = now;
	for (k = 0; k < n; k++) {
		int i = (start + k) % n;

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
	 * (being restarted) cost nothing: ask again at the next refresh. */
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
 * stale or has no node for it; -1 when none is known, or the caller's
 * wait budget is spent. */
int
rcl_node_for(struct rcl *cl, int slot)
{
	int s = slot < 0 ? 0 : slot;

	if (rcl_spent(cl))
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
rcl_up(struct rcl *cl)
{
	int n = rcl_node_for(cl, 0);

	return n >= 0 && rconn_up(&cl->nodes[n]);
}

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
