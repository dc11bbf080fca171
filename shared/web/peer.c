/* peer.c -- whom a handler pool answers; see peer.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "base/log.h"
#include "web/peer.h"

#define ALLOW_MAX	512

/* The pool's listening socket, whether it is TCP, and the peers it
 * answers: set once at start (peer_setup()), the process's. */
static int listen_fd = -1;
static int tcp;
static char allow[ALLOW_MAX];

/* The peer's address as 16 bytes (IPv4 as IPv4-mapped IPv6): 0, or -1. */
static int
as_v6(const struct sockaddr *sa, socklen_t len, unsigned char out[16])
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0, 0xff, 0xff };

	if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct
	    sockaddr_in)) {
		memcpy(out, mapped, 12);
		memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct
	    sockaddr_in6)) {
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return 0;
	}
	return -1;
}

/* One entry of the list as 16 bytes: 0, or -1 when it is no address. */
static int
parse_one(const char *s, size_t n, unsigned char out[16])
{
	struct sockaddr_in v4 = { .sin_family = AF_INET };
	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6 };
	char buf[INET6_ADDRSTRLEN];

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (inet_pton(AF_INET, buf, &v4.sin_addr) == 1)
		return as_v6((struct sockaddr *)&v4, sizeof(v4), out);
	if (inet_pton(AF_INET6, buf, &v6.sin6_addr) == 1)
		return as_v6((struct sockaddr *)&v6, sizeof(v6), out);
	return -1;
}

/* Calls each entry of list: how many are addresses, or -1 when one is
 * not.  When peer is given: 1 as soon as an entry is it. */
static int
scan(const char *list, const unsigned char *peer)
{
	unsigned char a[16];
	const char *p = list, *q;
	int n = 0;

	while (*p != '\0') {
		while (*p == ',' || *p == ' ')
			p++;
		if (*p == '\0')
			break;
		for (q = p; *q != '\0' && *q != ',' && *q != ' '; q++)
			;
		if (parse_one(p, (size_t)(q - p), a) == -1)
			return -1;
		if (peer != NULL && memcmp(a, peer, 16) == 0)
			return 1;
		n++;
		p = q;
	}
	return peer != NULL ? 0 : n;
}

int
peer_allowed(const char *list, const struct sockaddr *sa, socklen_t len)
{
	unsigned char p[16];

	return list != NULL && as_v6(sa, len, p) == 0 && scan(list, p) == 1;
}

int
peer_setup(int fd, const char *sock)
{
	const char *list = getenv("TALLY_FCGI_ALLOW");

	listen_fd = fd;
	tcp = sock[0] != '/' && strchr(sock, ':') != NULL;
	if (!tcp)
		return 0;
	if (list == NULL || *list == '\0') {
		log_err("%s: FastCGI over TCP needs TALLY_FCGI_ALLOW (the "
		    "addresses of the nginx that may connect)", sock);
		return -1;
	}
	if (strlen(list) >= sizeof(allow) || scan(list, NULL) <= 0) {
		log_err("TALLY_FCGI_ALLOW: not a list of addresses: %s", list);
		return -1;
	}
	memcpy(allow, list, strlen(list) + 1);
	log_info("%s: answers %s only", sock, allow);
	return 0;
}

void
peer_init_request(FCGX_Request *fr)
{
	/* over TCP libfcgi's own accept gets no socket: peer_accept() */
	FCGX_InitRequest(fr, tcp ? -1 : listen_fd, 0);
}

int
peer_accept(FCGX_Request *fr)
{
	struct sockaddr_storage ss;
	struct timeval rt = { PEER_READ_SECS, 0 }, wt = { PEER_WRITE_SECS, 0 };
	socklen_t len;
	int c, rc;

	if (!tcp)
		return FCGX_Accept_r(fr);
	for (;;) {
		memset(&ss, 0, sizeof(ss));	/* AF_UNSPEC if accept says nothing */
		len = sizeof(ss);
		if ((c = accept4(listen_fd, (struct sockaddr *)&ss, &len,
		    SOCK_CLOEXEC)) == -1)
			return errno == EAGAIN || errno == EWOULDBLOCK ?
			    -EAGAIN : errno == EINTR ? -EAGAIN : -errno;
		if (!peer_allowed(allow, (struct sockaddr *)&ss, len)) {
			close(c);	/* not a byte read, none written */
			continue;
		}
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &rt, sizeof(rt));
		setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &wt, sizeof(wt));
		/* libfcgi reads the request from this open connection (its
		 * finish of the last request keeps it: keepConnection) */
		fr->ipcFd = c;
		fr->keepConnection = 1;
		if ((rc = FCGX_Accept_r(fr)) == 0 && FCGX_GetError(fr->in) == 0)
			return 0;
		/* a read timed out inside the request's parameters: libfcgi
		 * takes what it had as the request; dropped unanswered */
		if (rc == 0) {
			FCGX_Free(fr, 1);
			continue;
		}
		/* silent, slow or not FastCGI: libfcgi closed it; then it
		 * found no socket of its own to accept on.  The next. */
		if (fr->ipcFd >= 0) {
			close(fr->ipcFd);
			fr->ipcFd = -1;
		}
	}
}
