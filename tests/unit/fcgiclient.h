/* fcgiclient.h -- the web server's side of a FastCGI request, for the
 * unit tests that serve one through real libfcgi on a real socket
 * (header-only: each test is one program).  fcgi_ask() writes on fd
 * what nginx writes for a request without a body: FCGI_BEGIN_REQUEST
 * (request id 1, responder), the params REQUEST_METHOD and REQUEST_URI,
 * the empty params record and the empty stdin record.  0, or -1 when
 * the write failed or a value is 128 bytes or more.  fcgi_listen()
 * makes the handler's side: a unix socket at /tmp/tally-TAG-PID.sock
 * (its path in path), listening; its fd, or -1. */
#ifndef TALLY_FCGICLIENT_H
#define TALLY_FCGICLIENT_H

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* One record: header, content, no padding. */
static size_t
fcgi_record(unsigned char *p, int type, const void *c, size_t len)
{
	p[0] = 1;
	p[1] = (unsigned char)type;
	p[2] = 0;
	p[3] = 1;
	p[4] = (unsigned char)(len >> 8);
	p[5] = (unsigned char)len;
	p[6] = 0;
	p[7] = 0;
	memcpy(p + 8, c, len);
	return 8 + len;
}

/* A name-value pair, both shorter than 128 bytes (one length byte). */
static size_t
fcgi_pair(unsigned char *p, const char *n, const char *v)
{
	size_t nl = strlen(n), vl = strlen(v);

	p[0] = (unsigned char)nl;
	p[1] = (unsigned char)vl;
	memcpy(p + 2, n, nl);
	memcpy(p + 2 + nl, v, vl);
	return 2 + nl + vl;
}

static int
fcgi_ask(int fd, const char *method, const char *uri)
{
	static const unsigned char begin[8] = { 0, 1, 0, 0, 0, 0, 0, 0 };
	unsigned char buf[600], params[300];
	size_t n = 0, pl = 0;

	if (strlen(method) >= 128 || strlen(uri) >= 128)
		return -1;
	pl += fcgi_pair(params + pl, "REQUEST_METHOD", method);
	pl += fcgi_pair(params + pl, "REQUEST_URI", uri);
	n += fcgi_record(buf + n, 1, begin, sizeof(begin));
	n += fcgi_record(buf + n, 4, params, pl);
	n += fcgi_record(buf + n, 4, "", 0);
	n += fcgi_record(buf + n, 5, "", 0);
	return write(fd, buf, n) == (ssize_t)n ? 0 : -1;
}

static int
fcgi_listen(char *path, size_t cap, const char *tag)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	snprintf(path, cap, "/tmp/tally-%s-%d.sock", tag, (int)getpid());
	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	unlink(path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    listen(fd, 64) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

#endif
