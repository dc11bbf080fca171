/* run_os.h -- the small operating-system helpers of tally-run. */
#ifndef TALLY_RUN_OS_H
#define TALLY_RUN_OS_H

#include <stddef.h>

/* snprintf that refuses to truncate (a cut path would name another
 * file): logs and exits instead. */
void	pathf(char *out, size_t sz, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

/* A program's path from PATH, then the sbin directories (malloc'd), or
 * NULL. */
char	*which(const char *prog);

/* 1 if port can be bound on 127.0.0.1; on addr (dotted IPv4, NULL:
 * 127.0.0.1). */
int	port_free(int port);
int	addr_port_free(const char *addr, int port);

/* A free loopback TCP port, or -1. */
int	free_port(void);

/* 1 if something accepts connections on 127.0.0.1:port. */
int	port_answers(int port);

#endif
