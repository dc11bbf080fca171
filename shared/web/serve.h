/* serve.h -- a FastCGI handler program's main loop.
 *
 * Only the handler programs link it: the worker, tallyctl and tally-run
 * serve no HTTP and never pull in libfcgi.
 */
#ifndef TALLY_SERVE_H
#define TALLY_SERVE_H

#include <stddef.h>

struct route;
struct slot;

/* The whole main() of a FastCGI handler: parses "-s SOCKET -n PROCS"
 * (defaults $RUN_DIR/NAME.sock and 2), listens, forks PROCS children that
 * each open an app and serve requests through routes[], restarts
 * children that die, and returns the exit status when TERM/INT arrive. */
int	serve_run(int argc, char **argv, const char *name,
	    const struct route *routes, size_t nroutes);
/* Before serve_run(): what a pool of readers does once for the
 * ROUTE_TOGETHER requests it took together (web/batch.h), before
 * serving them in turn (begin) and after (end, may be NULL).  Without
 * it, such a pool takes one request at a time. */
void	serve_together(void (*begin)(struct slot *, int n),
	    void (*end)(void));

#endif
