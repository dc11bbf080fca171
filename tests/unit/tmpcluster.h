/* tmpcluster.h -- a real Redis Cluster of n masters (no replicas) on
 * loopback TCP ports, each in a fresh temporary directory, for the unit
 * tests of the cluster client (header-only: each test is one program).
 * tmpcluster_start() starts the servers on free ports (a port and its
 * bus port, +10000), gives each an equal share of the slots in `chunks`
 * ranges (the slot space cut in n * chunks, dealt in turn), joins them
 * with CLUSTER MEET and waits (up to 20 s) until every node says the
 * cluster is ok and knows every range; tmpcluster_kill() kills one node
 * with SIGKILL (a crash), tmpcluster_restart() starts it again (a new
 * run id, its slots kept); tmpcluster_stop() stops the others by their
 * PIDs and removes the directories.  A test that dies first takes its
 * servers with it (SIGTERM when its process ends).  The node timeout is a
 * minute: a node killed by the test stays in the map it was in. */
#ifndef TALLY_TMPCLUSTER_H
#define TALLY_TMPCLUSTER_H

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#define TMPCLUSTER_MAX	3
#define TMPCLUSTER_SLOTS	16384

struct tmpcluster {
	int	n, ranges;
	char	dir[TMPCLUSTER_MAX][64];
	int	port[TMPCLUSTER_MAX];
	pid_t	pid[TMPCLUSTER_MAX];
	char	seeds[TMPCLUSTER_MAX * 24];	/* "127.0.0.1:P,..." */
};

/* 1 when a TCP port on 127.0.0.1 can be bound now. */
static inline int
tmpcluster_port_free(int port)
{
	struct sockaddr_in sa;
	int s = socket(AF_INET, SOCK_STREAM, 0), ok;

	if (s == -1)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(s);
	return ok;
}

/* A free port whose bus port (+10000) is free too, from a random start
 * in 20000-29999. */
static inline int
tmpcluster_free_port(void)
{
	int i, p;

	for (i = 0; i < 200; i++) {
		p = 20000 + (int)((unsigned)rand() % 10000);
		if (tmpcluster_port_free(p) && tmpcluster_port_free(p + 10000))
			return p;
	}
	return -1;
}

static inline redisReply *
tmpcluster_cmd(int port, const char *fmt, const char *arg)
{
	redisContext *c = redisConnect("127.0.0.1", port);
	redisReply *rep = NULL;

	if (c != NULL && c->err == 0)
		rep = arg != NULL ? redisCommand(c, fmt, arg) :
		    redisCommand(c, fmt);
	if (c != NULL)
		redisFree(c);
	return rep;
}

/* Whether node i says cluster_state:ok and its CLUSTER SLOTS has n
 * ranges. */
static inline int
tmpcluster_ready(const struct tmpcluster *t, int i)
{
	redisReply *rep = tmpcluster_cmd(t->port[i], "CLUSTER INFO", NULL);
	int ok = rep != NULL && rep->type == REDIS_REPLY_STRING &&
	    strstr(rep->str, "cluster_state:ok") != NULL;

	if (rep != NULL)
		freeReplyObject(rep);
	if (!ok)
		return 0;
	rep = tmpcluster_cmd(t->port[i], "CLUSTER SLOTS", NULL);
	ok = rep != NULL && rep->type == REDIS_REPLY_ARRAY &&
	    (int)rep->elements == t->ranges;
	if (rep != NULL)
		freeReplyObject(rep);
	return ok;
}

/* Starts node i's server and waits (up to 10 s) for its PING: 0, -1. */
static inline int
tmpcluster_spawn(struct tmpcluster *t, int i)
{
	char port[16];
	redisReply *rep = NULL;
	int tries;

	snprintf(port, sizeof(port), "%d", t->port[i]);
	if ((t->pid[i] = fork()) == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1 || getppid() == 1)
			_exit(127);
		dup2(null, 1);
		dup2(null, 2);
		execlp("redis-server", "redis-server", "--port", port, "--bind",
		    "127.0.0.1", "--dir", t->dir[i], "--cluster-enabled", "yes",
		    "--cluster-config-file", "nodes.conf",
		    "--cluster-node-timeout", "60000",
		    "--cluster-require-full-coverage", "no", "--save", "",
		    "--appendonly", "no", "--loglevel", "warning", NULL);
		_exit(127);
	}
	for (tries = 0; tries < 200; tries++) {
		if ((rep = tmpcluster_cmd(t->port[i], "PING", NULL)) != NULL)
			break;
		usleep(50 * 1000);
	}
	if (rep == NULL)
		return -1;
	freeReplyObject(rep);
	return 0;
}

/* Until every node says the cluster is ok with every range: 0, or -1
 * after 20 s. */
static inline int
tmpcluster_wait(const struct tmpcluster *t)
{
	int j, tries;

	for (tries = 0; tries < 400; tries++) {
		for (j = 0; j < t->n && tmpcluster_ready(t, j); j++)
			;
		if (j == t->n)
			return 0;
		usleep(50 * 1000);
	}
	return -1;
}

static inline int
tmpcluster_start(struct tmpcluster *t, const char *name, int n, int chunks)
{
	char first[16], last[16], meet[16];
	redisReply *rep;
	int i, k;

	memset(t, 0, sizeof(*t));
	t->n = n;
	t->ranges = n * chunks;
	srand((unsigned)getpid() ^ (unsigned)time(NULL));
	for (i = 0; i < n; i++) {
		snprintf(t->dir[i], sizeof(t->dir[i]), "/tmp/tally-%s.XXXXXX",
		    name);
		if (mkdtemp(t->dir[i]) == NULL ||
		    (t->port[i] = tmpcluster_free_port()) == -1 ||
		    tmpcluster_spawn(t, i) == -1)
			return -1;
		snprintf(t->seeds + strlen(t->seeds),
		    sizeof(t->seeds) - strlen(t->seeds), "%s127.0.0.1:%d",
		    i ? "," : "", t->port[i]);
	}
	for (k = 0; k < t->ranges; k++) {	/* range k to node k % n */
		redisContext *c = redisConnect("127.0.0.1", t->port[k % n]);

		snprintf(first, sizeof(first), "%d",
		    TMPCLUSTER_SLOTS * k / t->ranges);
		snprintf(last, sizeof(last), "%d",
		    TMPCLUSTER_SLOTS * (k + 1) / t->ranges - 1);
		if (c == NULL || c->err)
			return -1;
		rep = redisCommand(c, "CLUSTER ADDSLOTSRANGE %s %s", first,
		    last);
		redisFree(c);
		if (rep == NULL || rep->type == REDIS_REPLY_ERROR)
			return -1;
		freeReplyObject(rep);
	}
	for (i = 1; i < n; i++) {
		redisContext *c = redisConnect("127.0.0.1", t->port[0]);

		snprintf(meet, sizeof(meet), "%d", t->port[i]);
		if (c == NULL || c->err)
			return -1;
		rep = redisCommand(c, "CLUSTER MEET 127.0.0.1 %s", meet);
		redisFree(c);
		if (rep == NULL)
			return -1;
		freeReplyObject(rep);
	}
	return tmpcluster_wait(t);
}

/* Node i killed as a crash would (SIGKILL), and reaped. */
static inline void
tmpcluster_kill(struct tmpcluster *t, int i)
{
	if (t->pid[i] > 0) {
		kill(t->pid[i], SIGKILL);
		waitpid(t->pid[i], NULL, 0);
		t->pid[i] = 0;
	}
}

/* Node i started again after tmpcluster_kill(), and the cluster ok. */
static inline int
tmpcluster_restart(struct tmpcluster *t, int i)
{
	return tmpcluster_spawn(t, i) == -1 ? -1 : tmpcluster_wait(t);
}

static inline int
tmpcluster_stop(struct tmpcluster *t)
{
	char cmd[128];
	int i, rc = 0;

	for (i = 0; i < t->n; i++) {
		if (t->pid[i] > 0) {
			kill(t->pid[i], SIGTERM);
			waitpid(t->pid[i], NULL, 0);
		}
		snprintf(cmd, sizeof(cmd), "rm -rf %s", t->dir[i]);
		if (t->dir[i][0] != '\0' && system(cmd) != 0)
			rc = -1;
	}
	return rc;
}

#endif
