/* test-batch-gather.c -- a process takes the requests queued together
 * (web/batch.h) without ever waiting: the listening socket is made
 * non-blocking once, and a gathering takes what is queued while each
 * asks for a route of the first one's kind (a group's, or pages
 * prepared together), at most that kind's max, and stops at the first
 * that does not (served alone after the group); with nothing else
 * queued, or a first request without the flag, it takes nothing more.
 * Real libfcgi on a real unix socket, with FastCGI requests written as
 * nginx writes them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "fcgiclient.h"
#include "web/batch.h"
#include "web/route.h"

#define NCLIENT	8

static enum page_load
load(struct req *r, void *m)
{
	(void)r;
	(void)m;
	return PAGE_ANSWERED;
}

static void
render(struct req *r, const void *m)
{
	(void)r;
	(void)m;
}

static int
act(struct req *r, const struct route *rt)
{
	(void)r;
	(void)rt;
	return 0;
}

static const struct page page = { 1, load, render, NULL };

static const struct route routes[] = {
	{ METHOD_GET, "/feed", .page = &page, .flags = ROUTE_TOGETHER },
	{ METHOD_GET, "/people", .page = &page },
	{ METHOD_POST, "/posts/:id/like", .act = act, .flags = ROUTE_GROUP },
};

static char	 sock_path[108];
static int	 lfd;
static int	 clients[NCLIENT];
static int	 nclient;
static int	 opened;

/* A client asking for method and uri, as nginx does, left queued. */
static void
ask(const char *method, const char *uri)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0 && nclient < NCLIENT);
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(fcgi_ask(fd, method, uri), 0);
	clients[nclient++] = fd;
}

/* batch_gather()'s open: what req_parse() reads, from the params. */
static void
open_slot(struct slot *sl, void *arg)
{
	const char *m = FCGX_GetParam("REQUEST_METHOD", sl->fr.envp);
	const char *u = FCGX_GetParam("REQUEST_URI", sl->fr.envp);

	(void)arg;
	opened++;
	sl->st = 0;
	sl->r.method = m != NULL && strcmp(m, "POST") == 0 ? METHOD_POST :
	    METHOD_GET;
	free(sl->r.path);
	sl->r.path = strdup(u != NULL ? u : "/");
}

static struct slot	 s[READ_MAX + 2];

static int
setup(void **state)
{
	int i;

	(void)state;
	lfd = fcgi_listen(sock_path, sizeof(sock_path), "gather");
	assert_true(lfd >= 0);
	assert_int_equal(FCGX_Init(), 0);
	for (i = 0; i < READ_MAX + 2; i++)
		FCGX_InitRequest(&s[i].fr, lfd, 0);
	batch_listen_init(lfd);
	return 0;
}

static int
teardown(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < READ_MAX + 2; i++) {
		FCGX_Finish_r(&s[i].fr);
		free(s[i].r.path);
	}
	close(lfd);
	unlink(sock_path);
	return 0;
}

/* Ends the slots' requests and the clients, and what is left queued. */
static void
done(void)
{
	int i, fd;

	/* the clients' ends first, as nginx's: libfcgi's close of a
	 * request waits for the peer's (up to 2 s each) */
	for (i = 0; i < nclient; i++)
		shutdown(clients[i], SHUT_WR);
	for (i = 0; i < READ_MAX + 2; i++)
		FCGX_Finish_r(&s[i].fr);
	for (i = 0; i < nclient; i++)
		close(clients[i]);
	while ((fd = accept(lfd, NULL, NULL)) >= 0)
		close(fd);
	nclient = 0;
	opened = 0;
}

/* Takes the first, as serve.c does, and gathers after it what a pool
 * gathering flag does (at most max: BATCH_MAX a group, READ_MAX else). */
static int
gather(int max, unsigned flag, int *shared)
{
	unsigned kind;
	int n;

	assert_int_equal(max, flag == ROUTE_GROUP ? BATCH_MAX : READ_MAX);
	assert_true(FCGX_Accept_r(&s[0].fr) >= 0);
	open_slot(&s[0], NULL);
	n = batch_gather(s, routes, 3, flag, open_slot, NULL, shared, &kind);
	if (*shared > 1)
		assert_int_equal(kind, flag);
	return n;
}

static void
test_nonblocking(void **state)
{
	(void)state;
	assert_int_not_equal(fcntl(lfd, F_GETFL) & O_NONBLOCK, 0);
	/* nothing queued: accept says so at once (serve.c then polls) */
	assert_true(FCGX_Accept_r(&s[0].fr) < 0);
}

static void
test_alone(void **state)
{
	int shared, n;

	(void)state;
	ask("GET", "/feed");
	n = gather(READ_MAX, ROUTE_TOGETHER, &shared);
	assert_int_equal(n, 1);
	assert_int_equal(shared, 1);
	assert_int_equal(opened, 1);
	done();
}

static void
test_up_to_max(void **state)
{
	int shared, n, i;

	(void)state;
	for (i = 0; i < READ_MAX + 1; i++)
		ask("GET", "/feed");
	n = gather(READ_MAX, ROUTE_TOGETHER, &shared);
	assert_int_equal(n, READ_MAX);
	assert_int_equal(shared, READ_MAX);
	for (i = 0; i < READ_MAX; i++)
		assert_string_equal(s[i].r.path, "/feed");
	/* the one beyond max is still queued, for the next take */
	assert_true(FCGX_Accept_r(&s[READ_MAX].fr) >= 0);
	done();
}

static void
test_stops_at_other(void **state)
{
	int shared, n;

	(void)state;
	ask("GET", "/feed");
	ask("GET", "/feed");
	ask("GET", "/people");		/* served alone, after the two */
	ask("GET", "/feed");		/* left queued */
	n = gather(READ_MAX, ROUTE_TOGETHER, &shared);
	assert_int_equal(n, 3);
	assert_int_equal(shared, 2);
	assert_string_equal(s[2].r.path, "/people");
	assert_true(FCGX_Accept_r(&s[3].fr) >= 0);
	done();
}

static void
test_first_not_flagged(void **state)
{
	int shared, n;

	(void)state;
	ask("GET", "/people");
	ask("GET", "/feed");
	n = gather(READ_MAX, ROUTE_TOGETHER, &shared);
	assert_int_equal(n, 1);
	assert_int_equal(shared, 1);
	assert_int_equal(opened, 1);	/* the other was not taken */
	/* likes are a group's, not kept pages */
	done();
	ask("POST", "/posts/7/like");
	ask("POST", "/posts/8/like");
	n = gather(READ_MAX, ROUTE_TOGETHER, &shared);
	assert_int_equal(n, 1);
	done();
	ask("POST", "/posts/7/like");
	ask("POST", "/posts/8/like");
	n = gather(BATCH_MAX, ROUTE_GROUP, &shared);
	assert_int_equal(n, 2);
	assert_int_equal(shared, 2);
	done();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nonblocking),
		cmocka_unit_test(test_alone),
		cmocka_unit_test(test_up_to_max),
		cmocka_unit_test(test_stops_at_other),
		cmocka_unit_test(test_first_not_flagged),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
