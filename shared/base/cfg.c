/* cfg.c -- configuration from the environment; see cfg.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cfg.h"
#include "base/log.h"

const char *
cfg_run_dir_env(void)
{
	const char *rd = getenv("RUN_DIR");

	return rd == NULL || *rd == '\0' ? CFG_RUN_DIR : rd;
}

int
cfg_path(const struct cfg *c, const char *name, char *out, size_t outsz)
{
	int n = snprintf(out, outsz, "%s/%s", c->run_dir, name);

	return (n < 0 || (size_t)n >= outsz) ? -1 : 0;
}

/* The first line of file, without its newline: a secret kept out of the
 * environment and of every command line.  -1 (logged) when unreadable,
 * empty or too long. */
static int
read_secret(const char *file, char *out, size_t outsz)
{
	FILE *f;
	size_t n;

	if ((f = fopen(file, "r")) == NULL) {
		log_err("%s: %s", file, strerror(errno));
		return -1;
	}
	if (fgets(out, (int)outsz, f) == NULL)
		out[0] = '\0';
	fclose(f);
	n = strcspn(out, "\r\n");
	if (n == 0 || n == outsz - 1) {
		log_err("%s: no password of 1..%zu bytes on its first line",
		    file, outsz - 2);
		out[0] = '\0';
		return -1;
	}
	out[n] = '\0';
	return 0;
}

/* The nodes file of a cluster run (host:port a line) as "a,b,...";
 * nothing when there is none (tally-run removes it on other runs). */
static void
read_nodes(const char *file, char *out, size_t outsz)
{
	char line[256];
	size_t at = 0, n;
	FILE *f;

	if ((f = fopen(file, "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if ((n = strcspn(line, "\r\n")) == 0 || at + n + 2 > outsz)
			continue;
		if (at > 0)
			out[at++] = ',';
		memcpy(out + at, line, n);
		at += n;
		out[at] = '\0';
	}
	fclose(f);
}

int
cfg_load(struct cfg *c)
{
	const char *rd = cfg_run_dir_env(), *v;
	char auth[PATH_MAX];
	char *end;
	long days;

	memset(c, 0, sizeof(*c));
	if (mkdir(rd, 0700) == -1 && errno != EEXIST) {
		log_err("RUN_DIR %s: %s", rd, strerror(errno));
		return -1;
	}
	if (realpath(rd, c->run_dir) == NULL) {
		log_err("RUN_DIR %s: %s", rd, strerror(errno));
		return -1;
	}
	if ((v = getenv("TALLY_DB")) != NULL && *v != '\0') {
		if (strlen(v) >= sizeof(c->db_path))
			return -1;
		memcpy(c->db_path, v, strlen(v) + 1);
	} else if (cfg_path(c, CFG_DB_FILE, c->db_path, sizeof(c->db_path)) == -1) {
		log_err("RUN_DIR too long");
		return -1;
	} else if (cfg_path(c, CFG_DB_URL_FILE, auth, sizeof(auth)) == 0 &&
	    access(auth, F_OK) == 0 &&	/* tally-run's PostgreSQL */
	    read_secret(auth, c->db_path, sizeof(c->db_path)) == -1)
		return -1;
	if ((v = getenv("TALLY_REDIS")) != NULL && *v != '\0') {
		if (strlen(v) > CFG_SOCK_MAX) {
			log_err("TALLY_REDIS longer than %d bytes", CFG_SOCK_MAX);
			return -1;
		}
		memcpy(c->redis_sock, v, strlen(v) + 1);
	} else if (cfg_path(c, "redis.sock", c->redis_sock,
	    sizeof(c->redis_sock)) == -1) {
		log_err("RUN_DIR %s too long for unix sockets (max %d bytes)",
		    c->run_dir, CFG_SOCK_MAX - 16);
		return -1;
	}
	/* nginx's: systemd's units name it (/run/tally/live.sock), RUN_DIR
	 * being the state's directory there */
	if ((v = getenv("TALLY_LIVE_SOCK")) != NULL && *v != '\0') {
		if (strlen(v) > CFG_SOCK_MAX) {
			log_err("TALLY_LIVE_SOCK longer than %d bytes",
			    CFG_SOCK_MAX);
			return -1;
		}
		memcpy(c->live_sock, v, strlen(v) + 1);
	} else if (cfg_path(c, "live.sock", c->live_sock,
	    sizeof(c->live_sock)) == -1) {
		log_err("RUN_DIR %s too long for unix sockets (max %d bytes)",
		    c->run_dir, CFG_SOCK_MAX - 16);
		return -1;
	}
	if ((v = getenv("TALLY_REDIS_REPLICA")) != NULL && *v != '\0') {
		if (strlen(v) > CFG_SOCK_MAX) {
			log_err("TALLY_REDIS_REPLICA longer than %d bytes",
			    CFG_SOCK_MAX);
			return -1;
		}
		memcpy(c->replica_sock, v, strlen(v) + 1);
	}
	if ((v = getenv("TALLY_REDIS_CLUSTER")) != NULL && *v != '\0') {
		if (strlen(v) >= sizeof(c->redis_cluster)) {
			log_err("TALLY_REDIS_CLUSTER longer than %zu bytes",
			    sizeof(c->redis_cluster) - 1);
			return -1;
		}
		memcpy(c->redis_cluster, v, strlen(v) + 1);
	} else if (cfg_path(c, "redis-cluster/nodes", auth, sizeof(auth)) == 0)
		read_nodes(auth, c->redis_cluster, sizeof(c->redis_cluster));
	/* where tally-run's cluster nodes also listen on unix sockets */
	if (cfg_path(c, "redis-cluster", c->cluster_socks,
	    sizeof(c->cluster_socks)) == -1)
		c->cluster_socks[0] = '\0';
	/* The password tally-run keeps in the run directory while a
	 * replica listens on TCP (it removes the file otherwise). */
	if ((v = getenv("TALLY_REDIS_AUTH")) != NULL && *v != '\0') {
		if (read_secret(v, c->redis_auth, sizeof(c->redis_auth)) == -1)
			return -1;
	} else if (cfg_path(c, "redis-auth", auth, sizeof(auth)) == 0 &&
	    access(auth, F_OK) == 0 &&
	    read_secret(auth, c->redis_auth, sizeof(c->redis_auth)) == -1)
		return -1;
	v = getenv("TALLY_PWHASH");
	c->pwhash_min = v != NULL && strcmp(v, "min") == 0;
	c->session_secs = 30L * 86400;
	if ((v = getenv("TALLY_SESSION_DAYS")) != NULL && *v != '\0') {
		errno = 0;
		days = strtol(v, &end, 10);
		if (errno == 0 && *end == '\0' && days > 0 && days <= 3650)
			c->session_secs = days * 86400;
	}
	return 0;
}
