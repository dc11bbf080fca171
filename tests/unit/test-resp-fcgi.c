/* test-resp-fcgi.c -- resp_send() writes an answer's FastCGI records
 * itself (web/resp.c): what nginx reads back must be exactly what
 * libfcgi's own stream would have sent.  A real libfcgi request on a
 * real unix socket: the client writes a request as nginx does, the
 * answer is sent and the request ended as serve.c ends it, and the
 * client reads the records to EOF: the stdout records carry the status,
 * the headers with the right Content-Length and the body, byte for
 * byte, for bodies around libfcgi's 8 KB buffer, FastCGI's 64 KB record
 * and more than one writev()'s records; one empty stdout record ends
 * the stream; one FCGI_END_REQUEST ends the request; nothing follows.
 * A HEAD answer says the length and sends no body; a 304 says none.
 * Every status tally answers has its reason phrase (406 was "Unknown").
 * And the point of it: an answer of up to 16 records (1 MB) leaves in
 * one system call (write() and writev() are counted on the request's
 * socket; libfcgi's stream made one of every 8 KB). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "fcgiclient.h"
#include "web/resp.h"

static char	 sock_path[108];
static int	 lfd;
static int	 watch_fd = -1;	/* the request's socket, server side */
static int	 nwrites;	/* system calls that wrote to it */

/* Counted, then done by the kernel: these take the place of libc's for
 * the whole program, libfcgi included. */
ssize_t
write(int fd, const void *p, size_t n)
{
	if (fd == watch_fd)
		nwrites++;
	return syscall(SYS_write, fd, p, n);
}

ssize_t
writev(int fd, const struct iovec *iov, int n)
{
	if (fd == watch_fd)
		nwrites++;
	return syscall(SYS_writev, fd, iov, n);
}

struct got {
	int		 fd;
	unsigned char	*p;
	size_t		 len, cap;
};

/* The client's side: everything until the server closes. */
static void *
read_all(void *arg)
{
	struct got *g = arg;
	ssize_t n;

	for (;;) {
		if (g->len == g->cap) {
			g->cap = g->cap ? g->cap * 2 : 65536;
			g->p = realloc(g->p, g->cap);
			if (g->p == NULL)
				return NULL;
		}
		if ((n = read(g->fd, g->p + g->len, g->cap - g->len)) <= 0) {
			/* as nginx closes once the request ended: libfcgi's
			 * close waits for it (up to 2 s) */
			shutdown(g->fd, SHUT_WR);
			return NULL;
		}
		g->len += (size_t)n;
	}
}

static int
setup(void **state)
{
	(void)state;
	lfd = fcgi_listen(sock_path, sizeof(sock_path), "resp");
	assert_true(lfd >= 0);
	assert_int_equal(FCGX_Init(), 0);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	close(lfd);
	unlink(sock_path);
	return 0;
}

/* Sends a (method) request, answers it with status and a body of blen
 * bytes as serve.c does, and returns what the client read (g). */
static void
exchange(const char *method, int status, size_t blen, char **body,
    struct got *g)
{
	unsigned char trash[64];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	FCGX_Request fr;
	struct req r;
	pthread_t t;
	size_t i;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(fcgi_ask(fd, method, "/u/someone"), 0);

	FCGX_InitRequest(&fr, lfd, 0);
	assert_true(FCGX_Accept_r(&fr) >= 0);
	memset(&r, 0, sizeof(r));
	r.fr = &fr;
	r.method = strcmp(method, "HEAD") == 0 ? METHOD_HEAD : METHOD_GET;
	r.status = status;
	*body = malloc(blen + 1);
	assert_non_null(*body);
	for (i = 0; i < blen; i++)	/* every offset tells itself apart */
		(*body)[i] = (char)('a' + (i * 7 + i / 251) % 26);
	(*body)[blen] = '\0';
	buf_put(&r.body, *body, blen);
	memset(g, 0, sizeof(*g));
	g->fd = fd;
	assert_int_equal(pthread_create(&t, NULL, read_all, g), 0);
	nwrites = 0;
	watch_fd = fr.ipcFd;
	assert_int_equal(resp_send(&r), 0);
	/* serve.c's end of a request: its input read, then finished */
	while (FCGX_GetStr((char *)trash, (int)sizeof(trash), fr.in) > 0)
		;
	FCGX_Finish_r(&fr);
	watch_fd = -1;
	assert_int_equal(pthread_join(t, NULL), 0);
	close(fd);
	buf_free(&r.body);
	buf_free(&r.head);
}

/* Splits what the client read into records: the stdout content (out),
 * and asserts the records' order, ids and the request's end. */
static void
records(const struct got *g, char **out, size_t *olen)
{
	size_t off = 0, clen;
	int ended = 0, eos = 0;

	*out = malloc(g->len + 1);
	assert_non_null(*out);
	*olen = 0;
	while (off < g->len) {
		const unsigned char *h = g->p + off;

		assert_true(off + 8 <= g->len);
		assert_false(ended);		/* nothing after the end */
		assert_int_equal(h[0], 1);
		assert_int_equal((h[2] << 8) | h[3], 1);
		clen = (size_t)(h[4] << 8 | h[5]);
		assert_true(off + 8 + clen + h[6] <= g->len);
		if (h[1] == 6) {		/* FCGI_STDOUT */
			assert_false(eos);
			if (clen == 0)
				eos = 1;
			memcpy(*out + *olen, h + 8, clen);
			*olen += clen;
		} else {
			assert_int_equal(h[1], 3);	/* FCGI_END_REQUEST */
			assert_true(eos);
			assert_int_equal(clen, 8);
			assert_int_equal(h[8 + 4], 0);	/* REQUEST_COMPLETE */
			ended = 1;
		}
		off += 8 + clen + h[6];
	}
	assert_true(ended);
	(*out)[*olen] = '\0';
}

/* The answer is right; it took nw system calls to write. */
static void
check_n(const char *method, int status, size_t blen, int nw)
{
	struct got g;
	char *body, *out, want[64], *end;
	size_t olen;

	exchange(method, status, blen, &body, &g);
	records(&g, &out, &olen);
	end = strstr(out, "\r\n\r\n");
	assert_non_null(end);
	*end = '\0';
	snprintf(want, sizeof(want), "Status: %d ", status);
	assert_memory_equal(out, want, strlen(want));
	snprintf(want, sizeof(want), "\r\nContent-Length: %zu\r\n", blen);
	if (status == 304) {
		assert_null(strstr(out, "Content-Length"));
		assert_int_equal(out + olen - (end + 4), 0);
	} else {
		assert_non_null(strstr(out, want));
		if (strcmp(method, "HEAD") == 0)
			assert_int_equal(out + olen - (end + 4), 0);
		else {
			assert_int_equal(out + olen - (end + 4), blen);
			assert_memory_equal(end + 4, body, blen);
		}
	}
	assert_int_equal(nwrites, nw);
	free(out);
	free(body);
	free(g.p);
}

static void
check(const char *method, int status, size_t blen)
{
	check_n(method, status, blen, 1);
}

static void
test_small(void **state)
{
	(void)state;
	check("GET", 303, 0);		/* a redirect: no body */
	check("GET", 200, 1);
	check("GET", 200, 1000);
}

static void
test_around_8k(void **state)
{
	size_t n;

	(void)state;
	for (n = 8100; n <= 8200; n += 7)
		check("GET", 200, n);
	check("GET", 200, 17573);	/* a profile page */
}

static void
test_around_64k(void **state)
{
	(void)state;
	check("GET", 200, 65528 - 200);
	check("GET", 200, 65528);
	check("GET", 200, 65535);
	check("GET", 200, 65536);
	check("GET", 200, 2 * 65528 + 3);
}

static void
test_many_records(void **state)
{
	(void)state;
	/* more records than one writev() carries (16) */
	check("GET", 200, 16 * 65528 - 500);	/* 16 records */
	check_n("GET", 200, 16 * 65528, 2);		/* 16, then 1 */
	check_n("GET", 200, 40 * 65528 + 123, 3);	/* 16, 16, 9 */
}

static void
test_head_and_304(void **state)
{
	(void)state;
	check("HEAD", 200, 17573);
	check("GET", 304, 0);
}

static void
test_reasons(void **state)
{
	static const int statuses[] = { 200, 204, 303, 304, 400, 401, 403,
	    404, 405, 406, 409, 413, 429, 500, 503 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		if (strcmp(resp_reason(statuses[i]), "Unknown") == 0)
			fail_msg("%d: no reason phrase", statuses[i]);
	assert_string_equal(resp_reason(406), "Not Acceptable");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_around_8k),
		cmocka_unit_test(test_around_64k),
		cmocka_unit_test(test_many_records),
		cmocka_unit_test(test_head_and_304),
		cmocka_unit_test(test_reasons),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
