/* run_os.c -- the small operating-system helpers of tally-run: paths that
 * refuse to be cut, finding a program, loopback TCP ports.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/log.h"
#include "run_os.h"

void
pathf(char *out, size_t sz, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, sz, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sz) {
		log_err("path too long: %.80s...", out);
		exit(1);
	}
}

char *
which(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX], *dirs, *d, *save = NULL;

	dirs = xstrdup(path != NULL ? path : "/usr/bin:/bin");
	dirs = xrealloc(dirs, strlen(dirs) + 32);
	memcpy(dirs + strlen(dirs), ":/usr/sbin:/sbin:/usr/local/sbin", 31);
	for (d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		pathf(buf, sizeof(buf), "%s/%s", d, prog);
		if (access(buf, X_OK) == 0) {
			free(dirs);
			return xstrdup(buf);
		}
	}
	free(dirs);
	return NULL;
}

/* 127.0.0.1:port (0: any port). */
static struct sockaddr_in
loopback(int port)
{
	struct sockaddr_in sa;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sa;
}

int
addr_port_free(const char *addr, int port)
{
	struct sockaddr_in sa = loopback(port);
	int fd, ok, one = 1;

	if (addr != NULL && inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return 0;
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return 0;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

int
port_free(int port)
{
	return addr_port_free(NULL, port);
}

int
free_port(void)
{
	struct sockaddr_in sa = loopback(0);
	socklen_t len = sizeof(sa);
	int fd, port = -1;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

int
port_answers(int port)
{
	struct sockaddr_in sa = loopback(port);
	int fd, ok;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return 0;
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}
