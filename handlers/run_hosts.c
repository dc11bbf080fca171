/* run_hosts.c -- handler hosts for tally-run; see run_hosts.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/valid.h"
#include "run_hosts.h"
#include "run_os.h"

int
run_hosts_n(void)
{
	const char *v = getenv("HOSTS");
	long long n;

	if (v == NULL || *v == '\0')
		return 1;
	if (valid_int(v, 1, RUN_HOSTS_MAX, &n) == -1) {
		log_err("HOSTS must be 1..%d", RUN_HOSTS_MAX);
		return -1;
	}
	return (int)n;
}

void
run_host_addr(int k, char *out, size_t sz)
{
	snprintf(out, sz, "127.0.0.%d", k + 1);
}

int
run_hosts_base(int hosts, int npools)
{
	const char *v = getenv("HOSTS_PORT");
	char addr[32];
	long long b;
	int base, k, i, tries;

	if (v != NULL && *v != '\0') {
		if (valid_int(v, 1024, 65535 - npools, &b) == -1) {
			log_err("HOSTS_PORT must be 1024..%d", 65535 - npools);
			return -1;
		}
		/* checked free first: a port another program holds would
		 * take the pool's requests (login bodies, session cookies) */
		for (k = 1; k <= hosts; k++) {
			run_host_addr(k, addr, sizeof(addr));
			for (i = 0; i < npools; i++)
				if (!addr_port_free(addr, (int)b + i)) {
					log_err("HOSTS_PORT=%lld: port %d on %s is "
					    "in use; choose another HOSTS_PORT",
					    b, (int)b + i, addr);
					return -1;
				}
		}
		return (int)b;
	}
	srand((unsigned)getpid());
	for (tries = 0; tries < 200; tries++) {
		base = 30000 + rand() % 20000;
		for (k = 1; k <= hosts; k++) {
			run_host_addr(k, addr, sizeof(addr));
			for (i = 0; i < npools; i++)
				if (!addr_port_free(addr, base + i))
					goto next;
		}
		return base;
next:		;
	}
	log_err("no %d free ports on the hosts' addresses", npools);
	return -1;
}

void
run_hosts_upstreams(char *out, size_t sz, const char *const *names,
    size_t n, const char *run_dir, int hosts, int base)
{
	char addr[32], up[64];
	size_t i, at = 0;
	int k, j;

	out[0] = '\0';
	for (i = 0; i < n && at < sz; i++) {
		snprintf(up, sizeof(up), "tally_%s", names[i]);
		for (j = 0; up[j] != '\0'; j++)
			if (up[j] == '-')
				up[j] = '_';
		if (hosts <= 1) {
			at += (size_t)snprintf(out + at, sz - at,
			    "upstream %s { server unix:%s/%s.sock; }\n", up,
			    run_dir, names[i]);
			continue;
		}
		at += (size_t)snprintf(out + at, sz - at, "upstream %s {\n", up);
		for (k = 1; k <= hosts && at < sz; k++) {
			run_host_addr(k, addr, sizeof(addr));
			at += (size_t)snprintf(out + at, sz - at,
			    "    server %s:%d max_fails=1 fail_timeout=5s;\n",
			    addr, base + (int)i);
		}
		if (at < sz)
			at += (size_t)snprintf(out + at, sz - at, "}\n");
	}
}

int
run_host_args(int argc, char **argv, int *base)
{
	long long k, b;

	if (argc == 1)
		return 0;
	if (argc == 5 && strcmp(argv[1], "--host") == 0 &&
	    strcmp(argv[3], "--base") == 0 &&
	    valid_int(argv[2], 1, RUN_HOSTS_MAX, &k) == 0 &&
	    valid_int(argv[4], 1, 65535, &b) == 0) {
		*base = (int)b;
		return (int)k;
	}
	log_err("usage: tally-run [--host K --base PORT]");
	return -1;
}
