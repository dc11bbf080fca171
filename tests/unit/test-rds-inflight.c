/* test-rds-inflight.c -- the Redis connection's liveness poll (rds.h)
 * never replaces a connection that still has replies in flight.
 *
 * The poll takes a readable idle connection for one the server closed.
 * A connection whose caller stalled (a flusher stopped mid-take) with
 * replies not yet read is readable too -- those replies -- and replacing
 * it lost them: every bucket of the take stayed locked until recovery.
 * A small server in a thread answers each PING with +PONG. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/rds.h"

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
	size_t have = 0;
	ssize_t n;
	int fd;

	while ((fd = accept(s->lfd, NULL, NULL)) >= 0) {
		s->cfd = fd;
		have = 0;
		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			have += (size_t)n;
			/* one reply at a time, 50 ms apart: a reader
			 * gets the first before the next is sent */
			for (; have >= PING_BYTES; have -= PING_BYTES) {
				if (write(fd, "+PONG\r\n", 7) != 7)
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

static void
pong(struct rds *r)
{
	rds_reply *rep = NULL;

	assert_int_equal(rds_get_reply(r, &rep), 0);
	assert_non_null(rep);
	assert_int_equal(rep->type, RDS_STATUS);
	assert_string_equal(rep->str, "PONG");
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
	pong(&r);			/* sends both; reads the first */
	gen = r.gen;
	usleep(200 * 1000);		/* the second is in the socket now */
	r.answered_ms -= 5000;		/* ... and the caller stalled */
	assert_int_equal(rds_append_strs(&r, 1, ping), 0);
	assert_int_equal(r.gen, gen);	/* the same connection */
	pong(&r);			/* the reply in flight */
	pong(&r);			/* and the new one */
	assert_int_equal(r.pending, 0);
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
	pong(&r);
	gen = r.gen;
	/* idle, nothing in flight, and the server closed it */
	shutdown(r.c->fd, SHUT_RD);
	r.answered_ms -= 5000;
	assert_int_equal(rds_append_strs(&r, 1, ping), 0);
	assert_int_not_equal(r.gen, gen);	/* replaced */
	pong(&r);
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
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
