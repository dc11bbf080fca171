/* run_cluster.c -- the local Redis Cluster of "make run REDIS_CLUSTER=1".
 *
 * Six redis-server processes on 127.0.0.1 (REDIS_CLUSTER_PORT, default
 * 7001, to +5; bus ports +10000), cluster-enabled, AOF on, behind the
 * run's password (they listen on TCP), created once by redis-cli
 * --cluster create with one replica per master.  Each keeps its
 * nodes.conf in $RUN_DIR/redis-cluster/<port>/, so a node the supervisor
 * restarts rejoins by itself; one restarted empty (its directory lost)
 * is brought back by cluster_tick().  A short cluster-node-timeout
 * (TALLY_CLUSTER_NODE_TIMEOUT, 2000 ms) makes a replica take over a
 * dead master within a few seconds; cluster-require-full-coverage is
 * off, so the other masters' slots keep answering meanwhile.  Each node
 * also listens on <its directory>/redis.sock: the programs of this run
 * reach it there (store/rcl.h), other clients over TCP.
 *
 * repl-disable-tcp-nodelay: a master sends its replica the write stream
 * in fewer, larger packets (Nagle's delay, up to ~40 ms), so a replica
 * wakes for a group of likes, not for each.  Measured on the 2-core
 * machine, a like's Redis CPU on the cluster fell from 128 to 107 and
 * from 98 to 86 us (docs/BENCHMARKS.md).  What it costs is a replica up
 * to ~40 ms further behind its master; replication is asynchronous
 * anyway (a failover loses the writes not yet sent), and what a failover
 * loses the outbox and reconciliation put back (docs/ARCHITECTURE.md).
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/log.h"
#include "base/valid.h"
#include "run_cluster.h"
#include "run_os.h"
#include "store/rconn.h"
#include "store/rds.h"

static int ports[CLUSTER_NODES];
static struct rconn nodes[CLUSTER_NODES];
static char log_file[PATH_MAX + 32];

int
cluster_plan(struct svc *svcs, size_t *k, const struct cfg *c,
    const char *redis, const char *auth_conf)
{
	char dir[PATH_MAX + 32], file[PATH_MAX + 32], seeds[256] = "";
	char sock[PATH_MAX + 48];
	const char *v = getenv("REDIS_CLUSTER_PORT"), *tmo;
	long long base = 7001, ms = 2000;
	FILE *f;
	int i;

	if (v != NULL && *v != '\0' && valid_int(v, 1, 55530, &base) == -1) {
		log_err("REDIS_CLUSTER_PORT must be 1..55530");
		return -1;
	}
	if ((tmo = getenv("TALLY_CLUSTER_NODE_TIMEOUT")) != NULL &&
	    *tmo != '\0' && valid_int(tmo, 100, 60000, &ms) == -1) {
		log_err("TALLY_CLUSTER_NODE_TIMEOUT must be 100..60000 (ms)");
		return -1;
	}
	pathf(dir, sizeof(dir), "%s/redis-cluster", c->run_dir);
	mkdir(dir, 0700);
	pathf(log_file, sizeof(log_file), "%s/logs/redis-cluster.log",
	    c->run_dir);
	for (i = 0; i < CLUSTER_NODES; i++) {
		const char **av = xcalloc(32, sizeof(*av));
		char port[32], node_tmo[16], *name = xcalloc(1, 32);

		ports[i] = (int)base + i;
		if (!port_free(ports[i]) || !port_free(ports[i] + 10000)) {
			log_err("port %d or %d on 127.0.0.1 is in use; set "
			    "REDIS_CLUSTER_PORT", ports[i], ports[i] + 10000);
			return -1;
		}
		snprintf(port, sizeof(port), "%d", ports[i]);
		snprintf(node_tmo, sizeof(node_tmo), "%lld", ms);
		pathf(file, sizeof(file), "%s/%d", dir, ports[i]);
		mkdir(file, 0700);
		pathf(sock, sizeof(sock), "%s/redis.sock", file);
		if (strlen(sock) > CFG_SOCK_MAX) {
			log_err("RUN_DIR too long for %s", sock);
			return -1;
		}
		{
			const char *rest[] = { xstrdup(auth_conf), "--port",
			    xstrdup(port), "--bind", "127.0.0.1", "--dir",
			    xstrdup(file), "--cluster-enabled", "yes",
			    "--cluster-config-file", "nodes.conf",
			    "--cluster-node-timeout", xstrdup(node_tmo),
			    "--cluster-require-full-coverage", "no",
			    "--appendonly", "yes", "--save", "",
			    "--repl-disable-tcp-nodelay", "yes",
			    "--unixsocket", xstrdup(sock), "--unixsocketperm",
			    "700", NULL };

			av[0] = redis;
			memcpy(av + 1, rest, sizeof(rest));
		}
		snprintf(name, 32, "redis-%d", ports[i]);
		svcs[*k].name = name;
		svcs[*k].stop_group = 2;
		svcs[*k].argv = av;
		(*k)++;
		snprintf(port, sizeof(port), "127.0.0.1:%d", ports[i]);
		rconn_init(&nodes[i], port, 1000);
		snprintf(seeds + strlen(seeds), sizeof(seeds) - strlen(seeds),
		    "%s%s", i ? "," : "", port);
	}
	pathf(file, sizeof(file), "%s/nodes", dir);
	if ((f = fopen(file, "w")) == NULL)
		return -1;
	for (i = 0; i < CLUSTER_NODES; i++)
		fprintf(f, "127.0.0.1:%d\n", ports[i]);
	fclose(f);
	setenv("TALLY_REDIS_CLUSTER", seeds, 1);
	printf("tally: Redis Cluster on 127.0.0.1:%d..%d (3 masters, 3 "
	    "replicas; nodes in %s)\n", ports[0], ports[CLUSTER_NODES - 1],
	    file);
	return 0;
}

/* A field of CLUSTER INFO on node i, or -1. */
static long long
info_field(int i, const char *field)
{
	rds_reply *rep = rconn_cmd(&nodes[i], 2, (const char *[]){ "CLUSTER",
	    "INFO" }, (const size_t[]){ 7, 4 });
	const char *p;
	long long v = -1;

	if (rep != NULL && rds_type(rep) == RDS_STRING &&
	    (p = strstr(rds_str(rep), field)) != NULL &&
	    p[strlen(field)] == ':') {
		if (strncmp(p + strlen(field) + 1, "ok", 2) == 0)
			v = 1;
		else
			v = strtoll(p + strlen(field) + 1, NULL, 10);
	}
	if (rep != NULL)
		rds_free(rep);
	return v;
}

static void
pause_ms(long ms)
{
	nanosleep(&(struct timespec){ ms / 1000, (ms % 1000) * 1000000L },
	    NULL);
}

/* redis-cli --cluster create over the six nodes, output to the log. */
static int
create(const char *password)
{
	const char *argv[CLUSTER_NODES + 8];
	char addrs[CLUSTER_NODES][32];
	int i, n = 0, status, fd;
	pid_t pid;

	argv[n++] = "redis-cli";
	argv[n++] = "--cluster";
	argv[n++] = "create";
	for (i = 0; i < CLUSTER_NODES; i++) {
		snprintf(addrs[i], sizeof(addrs[i]), "127.0.0.1:%d", ports[i]);
		argv[n++] = addrs[i];
	}
	argv[n++] = "--cluster-replicas";
	argv[n++] = "1";
	argv[n++] = "--cluster-yes";
	argv[n] = NULL;
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if ((fd = open(log_file, O_WRONLY | O_CREAT | O_APPEND,
		    0600)) != -1) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (password != NULL)
			setenv("REDISCLI_AUTH", password, 1);
		execvp("redis-cli", (char *const *)argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) == -1 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		log_err("redis-cli --cluster create failed (see %s)", log_file);
		return -1;
	}
	return 0;
}

/* 1 when node i is a master, or a replica whose link is up. */
static int
synced(int i)
{
	rds_reply *rep = rconn_cmd(&nodes[i], 2, (const char *[]){ "INFO",
	    "replication" }, (const size_t[]){ 4, 11 });
	int ok = rep != NULL && rds_type(rep) == RDS_STRING &&
	    (strstr(rds_str(rep), "role:master") != NULL ||
	    strstr(rds_str(rep), "master_link_status:up") != NULL);

	if (rep != NULL)
		rds_free(rep);
	return ok;
}

int
cluster_ready(const char *password)
{
	int i, t, assigned = 0;

	for (i = 0; i < CLUSTER_NODES; i++) {
		nodes[i].auth = password;
		for (t = 0; t < 100 && info_field(i, "cluster_state") < 0; t++) {
			nodes[i].retry_at_ms = 0;
			pause_ms(100);
		}
		if (info_field(i, "cluster_slots_assigned") > 0)
			assigned = 1;
	}
	if (!assigned) {
		printf("tally: creating the Redis Cluster\n");
		if (create(password) == -1)
			return -1;
	}
	/* Ok everywhere, and every replica in sync with its master (a
	 * replica still in its first sync could not take over). */
	for (t = 0; t < 300; t++) {
		for (i = 0; i < CLUSTER_NODES; i++)
			if (info_field(i, "cluster_state") != 1 || !synced(i))
				break;
		if (i == CLUSTER_NODES)
			return 0;
		pause_ms(100);
	}
	log_err("the Redis Cluster is not ok after 30 s (see %s)", log_file);
	return -1;
}

/* One line of CLUSTER NODES. */
struct cnode {
	char	id[48];
	int	port;
	int	myself, master, failed, noaddr, slots;
	char	of[48];		/* a replica's master */
};

/* CLUSTER NODES as node i sees it: how many lines, or -1. */
static int
cluster_nodes(int i, struct cnode *out, int max)
{
	rds_reply *rep = rconn_cmd(&nodes[i], 2, (const char *[]){ "CLUSTER",
	    "NODES" }, (const size_t[]){ 7, 5 });
	char *line, *save = NULL, *text;
	int n = 0;

	if (rep == NULL || rds_type(rep) != RDS_STRING) {
		if (rep != NULL)
			rds_free(rep);
		return -1;
	}
	text = xstrdup(rds_str(rep));
	rds_free(rep);
	for (line = strtok_r(text, "\n", &save); line != NULL && n < max;
	    line = strtok_r(NULL, "\n", &save)) {
		struct cnode *c = &out[n];
		char addr[64], flags[128], of[48], *colon;
		int used = 0;

		memset(c, 0, sizeof(*c));
		if (sscanf(line, "%47s %63s %127s %47s %*s %*s %*s %*s%n",
		    c->id, addr, flags, of, &used) < 4)
			continue;
		if ((colon = strrchr(addr, ':')) != NULL)
			c->port = (int)strtol(colon + 1, NULL, 10);
		c->myself = strstr(flags, "myself") != NULL;
		c->master = strstr(flags, "master") != NULL;
		c->failed = strstr(flags, "fail") != NULL ||
		    strstr(flags, "noaddr") != NULL;
		c->noaddr = strstr(flags, "noaddr") != NULL;
		c->slots = used > 0 && line[used] != '\0';
		snprintf(c->of, sizeof(c->of), "%s", of);
		n++;
	}
	free(text);
	return n;
}

/* Sends a command to node i, ignoring the answer. */
static void
tell(int i, int argc, const char **argv)
{
	size_t lens[8];
	rds_reply *rep;
	int k;

	for (k = 0; k < argc; k++)
		lens[k] = strlen(argv[k]);
	if ((rep = rconn_cmd(&nodes[i], argc, argv, lens)) != NULL)
		rds_free(rep);
}

void
cluster_tick(void *password)
{
	struct cnode view[32], mine[32];
	char port[16];
	int i, j, k, n, m, h = -1;

	(void)password;
	/* A healthy node's view: one that knows every node. */
	for (i = 0; i < CLUSTER_NODES && h < 0; i++)
		if ((n = cluster_nodes(i, view, 32)) >= CLUSTER_NODES)
			h = i;
	if (h < 0)
		return;
	for (i = 0; i < CLUSTER_NODES; i++) {
		if ((m = cluster_nodes(i, mine, 32)) < 0)
			continue;
		if (m == 1 && i != h) {
			/* It knows only itself: it lost its configuration. */
			log_info("redis %d came back empty: meeting it again",
			    ports[i]);
			snprintf(port, sizeof(port), "%d", ports[i]);
			tell(h, 4, (const char *[]){ "CLUSTER", "MEET",
			    "127.0.0.1", port });
			continue;
		}
		for (j = 0; j < m && !mine[j].myself; j++)
			;
		if (j == m || !mine[j].master || mine[j].slots)
			continue;
		/* A master with no slots: a replica of the master that has
		 * the fewest live replicas. */
		{
			const char *best = NULL;
			int fewest = 1 << 30;

			for (k = 0; k < n; k++) {
				int reps = 0, x;

				if (!view[k].master || !view[k].slots ||
				    view[k].failed)
					continue;
				for (x = 0; x < n; x++)
					reps += !view[x].failed &&
					    strcmp(view[x].of, view[k].id) == 0;
				if (reps < fewest) {
					fewest = reps;
					best = view[k].id;
				}
			}
			if (best != NULL) {
				log_info("redis %d: replica of %s", ports[i],
				    best);
				tell(i, 3, (const char *[]){ "CLUSTER",
				    "REPLICATE", best });
			}
		}
	}
	/* Identities left behind by a node that came back as another:
	 * failed, at a port a live node now answers, or with no address at
	 * all (its port was taken by the new identity). */
	for (k = 0; k < n; k++) {
		if (!view[k].failed || view[k].slots)
			continue;
		for (j = 0; j < n; j++)
			if (j != k && !view[j].failed &&
			    view[j].port == view[k].port)
				break;
		if (j == n && !view[k].noaddr)
			continue;
		log_info("redis: forgetting %s (port %d has a new node)",
		    view[k].id, view[k].port);
		for (i = 0; i < CLUSTER_NODES; i++)
			if (ports[i] != view[k].port)
				tell(i, 3, (const char *[]){ "CLUSTER", "FORGET",
				    view[k].id });
	}
}
