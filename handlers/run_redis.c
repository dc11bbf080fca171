/* run_redis.c -- the Redis servers tally-run supervises.
 *
 * By default one redis-server on a unix socket only (mode 0700), AOF on:
 * nothing on the network can reach it.  REDIS_CLUSTER=1 starts a Redis
 * Cluster of six nodes instead (run_cluster.c).  REPLICA=1 adds a
 * replica, and
 * Redis replicates over TCP only, so the master then also listens on a
 * free loopback port.  Any local user could connect there; both servers
 * therefore ask for a password (requirepass, and masterauth for the
 * replica's own link); so do a cluster's nodes.  The password is drawn once, kept in
 * $RUN_DIR/redis-auth (0600), where the programs and tallyctl find it
 * (base/cfg.h), and given to the servers in a 0600 configuration file,
 * never on a command line (which every local user can read in /proc).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/log.h"
#include "run_cluster.h"
#include "run_os.h"
#include "run_redis.h"

static char password[65];
static int run_cluster;

const char *
run_redis_password(void)
{
	return password[0] != '\0' ? password : NULL;
}

int
run_redis_is_cluster(void)
{
	return run_cluster;
}

/* Writes text to file, mode 0600, replacing it. */
static int
write_private(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t n = strlen(text);

	if (fd == -1 || fchmod(fd, 0600) == -1 ||
	    write(fd, text, n) != (ssize_t)n) {
		log_err("%s: %s", file, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	return close(fd);
}

/* The run's Redis password: $RUN_DIR/redis-auth, drawn on first use
 * (32 random bytes as hex) so restarts and the AOF keep agreeing. */
static int
redis_password(const struct cfg *c, char *file, size_t filesz,
    char pw[65])
{
	unsigned char raw[32];
	FILE *f;
	int fd;
	size_t i;

	pathf(file, filesz, "%s/redis-auth", c->run_dir);
	if ((f = fopen(file, "r")) != NULL) {
		int ok = fgets(pw, 65, f) != NULL && strlen(pw) == 64;

		fclose(f);
		if (ok)
			return 0;
	}
	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1 ||
	    read(fd, raw, sizeof(raw)) != (ssize_t)sizeof(raw)) {
		log_err("/dev/urandom: %s", strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	close(fd);
	for (i = 0; i < sizeof(raw); i++)
		snprintf(pw + 2 * i, 3, "%02x", raw[i]);
	return write_private(file, pw);
}

int
run_redis_plan(struct svc *svcs, size_t *k, const struct cfg *c,
    const char *redis)
{
	char dir[PATH_MAX + 32], rsock[PATH_MAX + 32], rdir[PATH_MAX + 32];
	char authf[PATH_MAX + 32], conf[PATH_MAX + 32], text[200];
	char rport[16];
	const char **av;
	const char *v;
	int port, cluster, replica;

	pathf(dir, sizeof(dir), "%s/redis", c->run_dir);
	mkdir(dir, 0700);
	av = xcalloc(20, sizeof(*av));
	av[0] = redis;
	svcs[*k].name = "redis";
	svcs[*k].stop_group = 2;
	svcs[*k].argv = av;
	cluster = (v = getenv("REDIS_CLUSTER")) != NULL && strcmp(v, "1") == 0;
	replica = (v = getenv("REPLICA")) != NULL && strcmp(v, "1") == 0;
	if (!cluster && !replica) {
		const char *rest[] = { "--port", "0", "--unixsocket",
		    c->redis_sock, "--unixsocketperm", "700", "--dir",
		    xstrdup(dir), "--appendonly", "yes", "--save", "", NULL };

		memcpy(av + 1, rest, sizeof(rest));
		(*k)++;
		/* No password now: one left by a replica run would be
		 * sent to a server that asks for none; nor a cluster. */
		pathf(authf, sizeof(authf), "%s/redis-auth", c->run_dir);
		unlink(authf);
		pathf(authf, sizeof(authf), "%s/redis-cluster/nodes", c->run_dir);
		unlink(authf);
		return 0;
	}

	if (redis_password(c, authf, sizeof(authf), password) == -1)
		return -1;
	/* The configuration file comes first on the command line; the
	 * options after it override it. */
	pathf(conf, sizeof(conf), "%s/redis/auth.conf", c->run_dir);
	snprintf(text, sizeof(text), "requirepass %s\nmasterauth %s\n",
	    password, password);
	if (write_private(conf, text) == -1)
		return -1;
	setenv("TALLY_REDIS_AUTH", authf, 1);
	if (cluster) {
		run_cluster = 1;
		return cluster_plan(svcs, k, c, redis, conf);
	}
	pathf(authf, sizeof(authf), "%s/redis-cluster/nodes", c->run_dir);
	unlink(authf);
	if ((port = free_port()) <= 0) {
		log_err("no free port for the Redis replica");
		return -1;
	}
	snprintf(rport, sizeof(rport), "%d", port);
	pathf(rsock, sizeof(rsock), "%s/redis-replica.sock", c->run_dir);
	if (strlen(rsock) > CFG_SOCK_MAX) {
		log_err("RUN_DIR too long for %s", rsock);
		return -1;
	}
	pathf(rdir, sizeof(rdir), "%s/redis-replica", c->run_dir);
	mkdir(rdir, 0700);
	{
		const char *rest[] = { xstrdup(conf), "--port", xstrdup(rport),
		    "--bind", "127.0.0.1", "--unixsocket", c->redis_sock,
		    "--unixsocketperm", "700", "--dir", xstrdup(dir),
		    "--appendonly", "yes", "--save", "",
		    /* the stream in fewer packets, as run_cluster.c */
		    "--repl-disable-tcp-nodelay", "yes", NULL };

		memcpy(av + 1, rest, sizeof(rest));
	}
	(*k)++;
	av = xcalloc(20, sizeof(*av));
	av[0] = redis;
	{
		const char *rest[] = { xstrdup(conf), "--port", "0",
		    "--unixsocket", xstrdup(rsock), "--unixsocketperm", "700",
		    "--dir", xstrdup(rdir), "--replicaof", "127.0.0.1",
		    xstrdup(rport), "--save", "", NULL };

		memcpy(av + 1, rest, sizeof(rest));
	}
	svcs[*k].name = "redis-replica";
	svcs[*k].stop_group = 2;
	svcs[*k].argv = av;
	(*k)++;
	setenv("TALLY_REDIS_REPLICA", rsock, 1);
	printf("tally: Redis replica on %s (replicating 127.0.0.1:%s, "
	    "password in %s)\n", rsock, rport, authf);
	return 0;
}
