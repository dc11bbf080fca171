/* run_hosts.h -- handler hosts (make run DB=postgres HOSTS=N).
 *
 * With HOSTS=N (2..8) the site's tally-run keeps PostgreSQL, Redis and
 * nginx, and runs N host supervisors instead of its own pools and
 * worker: each is tally-run again ("tally-run --host K --base B"), with a
 * full set of handler pools listening on FastCGI over TCP at
 * 127.0.0.(K+1), ports B, B+1, ... (one a pool, the same on every host),
 * and a worker.  Host K writes its pid to $RUN_DIR/host<K>/pid and its
 * programs' logs to $RUN_DIR/host<K>/logs/.  nginx names every host's
 * pool in one upstream a handler (tally-http.conf).
 */
#ifndef TALLY_RUN_HOSTS_H
#define TALLY_RUN_HOSTS_H

#include <stddef.h>

#define RUN_HOSTS_MAX	8

/* HOSTS: 1 (no hosts: the pools on unix sockets) .. RUN_HOSTS_MAX, or -1
 * when it is not a number of that range (logged). */
int	run_hosts_n(void);

/* Host k's address: "127.0.0.<k+1>". */
void	run_host_addr(int k, char *out, size_t sz);

/* A base port from which npools ports are free on every host's address
 * (HOSTS_PORT when set), or -1. */
int	run_hosts_base(int hosts, int npools);

/* The upstream blocks of nginx (TALLY_UPSTREAMS) for the pools names[0..n):
 * each pool's unix socket in run_dir (hosts 1), or every host's
 * address:base+i. */
void	run_hosts_upstreams(char *out, size_t sz, const char *const *names,
	    size_t n, const char *run_dir, int hosts, int base);

/* tally-run's arguments: 0 for the site, or K with *base for
 * "--host K --base B"; -1 when they make no sense (logged). */
int	run_host_args(int argc, char **argv, int *base);

#endif
