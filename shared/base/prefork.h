/* prefork.h -- the pre-fork master of a FastCGI handler pool.
 *
 * prefork_listen() makes the listening unix socket itself (a stale socket
 * file is replaced; mode set explicitly, not left to the umask), or, for
 * "host:port" (no '/'), a TCP socket: FastCGI from another machine's
 * nginx (handler hosts).
 * prefork_run() forks nproc children running child(fd, arg), re-forks any
 * child that exits (a slot whose child failed to start, an exit with an
 * error within a second, waits a second, then twice as long each time,
 * up to 4 s: every death woke the loop, and a pool of two re-forked each
 * other's slot at once, as fast as its children failed; one killed young
 * waits 100 ms), and on SIGTERM/SIGINT stops them (TERM, then KILL after
 * 5 s),
 * removes the socket and returns 0.  Children get SIGTERM if the master
 * dies, so a kill -9 of the master leaves no orphan serving requests.
 */
#ifndef TALLY_PREFORK_H
#define TALLY_PREFORK_H

int	prefork_listen(const char *path, int mode);
int	prefork_run(int fd, const char *path, int nproc,
	    int (*child)(int fd, void *arg), void *arg);

/* A slot's pause before its next fork (prefork_run()), its child born
 * at born and dead at now after a pause of pause; failed: it exited with
 * an error.  No longer than PREFORK_PAUSE_MAX_MS: once what stopped the
 * children (the database restarting) is over, the pool is back within
 * the 5 s a supervised process has to come back (docs/INTERFACE.md); it
 * was up to 30 s. */
#define PREFORK_PAUSE_MAX_MS	4000
long long prefork_pause(long long pause, long long born, long long now,
	    int failed);

/* In a freshly forked child: default signal dispositions, empty mask,
 * SIGPIPE ignored, and SIGTERM when the parent dies. */
void	prefork_child_signals(void);

#endif
