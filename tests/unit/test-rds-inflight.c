/* test-rds-inflight.c -- the Redis connection's liveness poll (rds.h)
 * never replaces a connection that still has replies in flight.
 *
 * The poll takes a readable idle connection for one the server closed.
 * A connection whose caller stalled (a flusher stopped mid-take) with
 * replies not yet read is readable too -- those replies -- and replacing
 * it lost them: every bucket of the take stayed locked until recovery.
 * A caller that abandons a pipeline must not hand its replies to the
 * next command (rds_settle()).  A small server in a thread answers the
 * n-th PING of a connection with the integer n. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "store/rds.h"
#include "store/rds_int.h"

#define PING_BYTES	14	/* "*1\r\n$4\r\nPING\r\n" */

struct server {
	int		lfd;
	int		cfd;		/* the connection served, or -1 */
	char		path[108];
	pthread_t	th;
};

static void *
serve(void *arg)
{
	struct server *s = arg;
	char buf[4096];
	char out[32];
	size_t have = 0;
	ssize_t n;
	int fd, seq, len;

	while ((fd = accept(s->lfd, NULL, NULL)) >= 0) {
		s->cfd = fd;
		have = 0;
		seq = 0;
		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			have += (size_t)n;
			/* one reply at a time, 50 ms apart: a reader
			 * gets the first before the next is sent */
			for (; have >= PING_BYTES; have -= PING_BYTES) {
				len = snprintf(out, sizeof(out), ":%d\r\n",
				    ++seq);
				if (write(fd, out, (size_t)len) != len)
					break;
				usleep(50 * 1000);
			}
		}
		s->cfd = -1;
		close(fd);
	}
	return NULL;
}

static int
setup(void **state)
{
	struct server *s = calloc(1, sizeof(*s));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(s->path, sizeof(s->path), "/tmp/tally-rds-test.%ld.sock",
	    (long)getpid());
	unlink(s->path);
	s->cfd = -1;
	memcpy(sa.sun_path, s->path, strlen(s->path) + 1);
	s->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(s->lfd, 4) || pthread_create(&s->th, NULL, serve, s))
		return -1;
	*state = s;
	return 0;
}

static int
teardown(void **state)
{
	struct server *s = *state;

	shutdown(s->lfd, SHUT_RDWR);
	if (s->cfd >= 0)		/* a test that failed left it open */
		shutdown(s->cfd, SHUT_RDWR);
	close(s->lfd);
	pthread_join(s->th, NULL);
	unlink(s->path);
	free(s);
	return 0;
}

/* Reads the next reply: the answer to the connection's n-th PING. */
static void
pong(struct rds *r, long long n)
{
	rds_reply *rep = NULL;

	assert_int_equal(rds_get_reply(r, &rep), 0);
	assert_non_null(rep);
	assert_int_equal(rds_type(rep), RDS_INTEGER);
	assert_int_equal(rds_int(rep), n);
	rds_free(rep);
}

static void
test_stalled_pipeline_kept(void **state)
{
	struct server *s = *state;
	const char *ping[1] = { "PING" };
	struct rds r;
	unsigned gen;

	rds_init(&r, s->path, 1000);
	assert_int_equal(rds_append_strs(&r, 1, ping), 0);
	assert_int_equal(rds_append_strs(&r, 1, ping), 0);
	pong(&r, 1);			/* sends both; reads the first */
	gen = r.one.gen;
	usleep(200 * 1000);		/* the second is in the socket now */
	r.one.answered_ms -= 5000;		/* ... and the caller stalled */
	assert_int_equal(rds_append_strs(&r, 1, ping), 0);
	assert_int_equal(r.one.gen, gen);	/* the same connection */
	pong(&r, 2);			/* the reply in flight */
	pong(&r, 3);			/* and the new one */
	assert_int_equal(r.one.pending, 0);
	rds_close(&r);
}

static void
test_closed_idle_replaced(void **state)
{
	struct server *s = *state;
	const char *ping[1] = { "PING" };
	struct rds r;
	unsigned gen;

	rds_init(&r, s->path, 1000);
	assert_int_equal(rds_append_strs(&r, 1, ping), 0);
	pong(&r, 1);
	gen = r.one.gen;
	/* idle, nothing in flight, and the server closed it */
	shutdown(r.one.c->fd, SHUT_RD);
	r.one.answered_ms -= 5000;
	assert_int_equal(rds_append_strs(&r, 1, ping), 0);
	assert_int_not_equal(r.one.gen, gen);	/* replaced */
	pong(&r, 1);				/* a new connection */
	rds_close(&r);
}

static void
test_abandoned_replies_settled(void **state)
{
	struct server *s = *state;
	const char *ping[1] = { "PING" };
	rds_reply *rep;
	struct rds r;

	rds_init(&r, s->path, 1000);
	assert_int_equal(rds_append_strs(&r, 1, ping), 0);
	assert_int_equal(rds_append_strs(&r, 1, ping), 0);
	assert_int_equal(rds_append_strs(&r, 1, ping), 0);
	pong(&r, 1);		/* ... and the caller gives up on 2 and 3 */
	rep = rds_cmdv(&r, "PING", NULL);
	assert_non_null(rep);
	assert_int_equal(rds_type(rep), RDS_INTEGER);
	assert_int_equal(rds_int(rep), 4);	/* its own, not 2 */
	rds_free(rep);
	assert_int_equal(r.one.pending, 0);

	/* the same at a request's end, before a new pipeline */
	assert_int_equal(rds_append_strs(&r, 1, ping), 0);
	assert_int_equal(rds_append_strs(&r, 1, ping), 0);
	pong(&r, 5);
	assert_int_equal(rds_settle(&r), 0);
	assert_int_equal(r.one.pending, 0);
	assert_int_equal(rds_append_strs(&r, 1, ping), 0);
	pong(&r, 7);
	rds_close(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stalled_pipeline_kept,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_closed_idle_replaced,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_abandoned_replies_settled,
		    setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);	/* a failed test closes early */
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
