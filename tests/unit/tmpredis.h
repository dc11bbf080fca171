/* tmpredis.h -- a real redis-server on a unix socket in a fresh
 * temporary directory, for the unit tests that talk to Redis
 * (header-only: each test is one program).  tmpredis_start() starts it
 * and connects r to it (up to 10 s for its first PING); tmpredis_stop()
 * closes r, stops the server by its PID and removes the directory;
 * tmpredis_calls() counts the commands it ran.  A
 * test that dies first (a crash, a signal) stops the server too: it gets
 * SIGTERM when the test's process ends. */
#ifndef TALLY_TMPREDIS_H
#define TALLY_TMPREDIS_H

#include <sys/prctl.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/rds.h"

struct tmpredis {
	char	dir[64], sock[96];
	pid_t	pid;
};

static inline int
tmpredis_start(struct tmpredis *t, const char *name, struct rds *r)
{
	rds_reply *rep = NULL;
	int i;

	snprintf(t->dir, sizeof(t->dir), "/tmp/tally-%s.XXXXXX", name);
	if (mkdtemp(t->dir) == NULL)
		return -1;
	snprintf(t->sock, sizeof(t->sock), "%s/redis.sock", t->dir);
	if ((t->pid = fork()) == 0) {
		int null = open("/dev/null", O_WRONLY);

		/* a test that dies takes its server with it */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1 || getppid() == 1)
			_exit(127);
		dup2(null, 1);
		dup2(null, 2);
		execlp("redis-server", "redis-server", "--port", "0",
		    "--unixsocket", t->sock, "--save", "", "--appendonly",
		    "no", "--dir", t->dir, "--loglevel", "warning", NULL);
		_exit(127);
	}
	rds_init(r, t->sock, 2000);
	for (i = 0; i < 200; i++) {	/* up to 10 s */
		if (access(t->sock, F_OK) == 0 &&
		    (rep = rds_cmdv(r, "PING", NULL)) != NULL)
			break;
		usleep(50 * 1000);
	}
	if (rep == NULL)
		return -1;
	rds_free(rep);
	return 0;
}

/* How many times the server ran cmd ("hincrby", "script|load") since
 * its last CONFIG RESETSTAT: INFO commandstats.  -1 if it did not answer. */
static inline long long
tmpredis_calls(struct rds *r, const char *cmd)
{
	rds_reply *rep = rds_cmdv(r, "INFO", "commandstats", NULL);
	char want[64];
	const char *p;
	long long n = 0;

	if (rep == NULL || rds_type(rep) != RDS_STRING) {
		rds_free(rep);
		return -1;
	}
	snprintf(want, sizeof(want), "cmdstat_%s:calls=", cmd);
	if ((p = strstr(rds_str(rep), want)) != NULL)
		n = strtoll(p + strlen(want), NULL, 10);
	rds_free(rep);
	return n;
}

static inline int
tmpredis_stop(struct tmpredis *t, struct rds *r)
{
	char cmd[128];

	rds_close(r);
	kill(t->pid, SIGTERM);
	waitpid(t->pid, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", t->dir);
	return system(cmd) != 0 ? -1 : 0;
}

/* A test's server and its connection as cmocka's state:
 * tmpredis_setup(state, name) in a setup, tmpredis_teardown(state) in
 * the teardown. */
struct tmpredis_fix {
	struct rds	rds;
	struct tmpredis	srv;
};

static inline int
tmpredis_setup(void **state, const char *name)
{
	struct tmpredis_fix *f = calloc(1, sizeof(*f));

	if (f == NULL || tmpredis_start(&f->srv, name, &f->rds) == -1)
		return -1;
	*state = f;
	return 0;
}

static inline int
tmpredis_teardown(void **state)
{
	struct tmpredis_fix *f = *state;
	int rc = tmpredis_stop(&f->srv, &f->rds);

	free(f);
	return rc;
}

/* The next reply, read and freed: a reply of type whose string (an
 * RDS_STRING) or number (an RDS_INTEGER) is want. */
static inline void
tmpredis_expect(struct rds *r, int type, const char *want)
{
	rds_reply *rep = NULL;
	char n[32];

	assert_int_equal(rds_get_reply(r, &rep), 0);
	assert_non_null(rep);
	assert_int_equal(rds_type(rep), type);
	if (type == RDS_INTEGER) {
		snprintf(n, sizeof(n), "%lld", rds_int(rep));
		assert_string_equal(n, want);
	} else
		assert_string_equal(rds_str(rep), want);
	rds_free(rep);
}

#endif
