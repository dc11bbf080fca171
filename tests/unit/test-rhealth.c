/* test-rhealth.c -- a host's processes share their Redis backoff
 * (rhealth.h): a Redis that hangs costs one command timeout on the
 * host, not one a process, and when its backoff ends one process tries
 * while the others keep away.
 *
 * The hung server is a unix socket that is listened on and never
 * accepted from: a connect succeeds (the backlog), a command is written
 * and no reply ever comes, as with a SIGSTOPped redis-server.  The
 * processes are forked children with a table of their own per test. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "base/clock.h"
#include "store/rconn.h"
#include "store/rhealth.h"

#define TMO_MS	250

struct fixture {
	char	table[64];
	char	sock[108];
	int	lfd;
};

static struct fixture fx;

/* The table, one for the tests' processes (a slot a server). */
static int
group_setup(void **state)
{
	(void)state;
	snprintf(fx.table, sizeof(fx.table), "/tmp/tally-rhealth.%ld",
	    (long)getpid());
	unlink(fx.table);
	return rhealth_open(fx.table);
}

static int
group_teardown(void **state)
{
	(void)state;
	unlink(fx.table);
	return 0;
}

/* A hung server of its own for each test, made before any fork. */
static int
setup(void **state)
{
	static int n;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	(void)state;
	snprintf(fx.sock, sizeof(fx.sock), "/tmp/tally-rhealth.%ld.%d.sock",
	    (long)getpid(), ++n);
	unlink(fx.sock);
	memcpy(sa.sun_path, fx.sock, strlen(fx.sock) + 1);
	fx.lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fx.lfd < 0 || bind(fx.lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fx.lfd, 64))
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	close(fx.lfd);
	unlink(fx.sock);
	return 0;
}

/* One PING to the hung server through a new connection of this
 * process: how long it took, in ms (it always fails). */
static long long
ping_ms(void)
{
	const char *argv[1] = { "PING" };
	struct rconn r;
	redisReply *rep;
	long long t0 = clock_mono_ms();

	rconn_init(&r, fx.sock, TMO_MS);
	rep = rconn_cmd(&r, 1, argv, NULL);
	if (rep != NULL)
		freeReplyObject(rep);
	rconn_close(&r);
	return rep != NULL ? -1 : clock_mono_ms() - t0;
}

/* n children PING at once; each writes its time into out[]. */
static void
ping_in_children(int n, long long *out)
{
	long long *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int i, st;

	assert_true(shared != MAP_FAILED);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0) {
			shared[i] = ping_ms();
			_exit(0);
		}
	}
	for (i = 0; i < n; i++) {
		assert_true(wait(&st) > 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	memcpy(out, shared, (size_t)n * sizeof(*out));
	munmap(shared, 4096);
}

/* The first process to meet the hung server waits its timeout; another
 * process, which never met it, does not wait at all. */
static void
test_one_timeout_for_the_host(void **state)
{
	long long t[1];

	(void)state;
	ping_in_children(1, t);
	assert_true(t[0] >= TMO_MS - 10);
	t[0] = ping_ms();		/* this process: no connection yet */
	assert_true(t[0] >= 0 && t[0] < 50);
}

/* When the backoff ends, one of many processes tries: exactly one
 * waits, the rest are told at once. */
static void
test_one_try_when_the_backoff_ends(void **state)
{
	long long t[6];
	int i, waited = 0;

	(void)state;
	assert_true(ping_ms() >= TMO_MS - 10);	/* the mark: 250 ms */
	usleep(300 * 1000);			/* its backoff is over */
	ping_in_children(6, t);
	for (i = 0; i < 6; i++) {
		assert_true(t[i] >= 0);
		if (t[i] >= TMO_MS - 10)
			waited++;
		else
			assert_true(t[i] < 50);
	}
	assert_int_equal(waited, 1);
	/* that try failed: the backoff doubled (500 ms), so 300 ms later
	 * nobody tries yet */
	usleep(300 * 1000);
	ping_in_children(3, t);
	for (i = 0; i < 3; i++)
		assert_true(t[i] >= 0 && t[i] < 50);
}

/* The process that claims the try makes it: a script's call connects
 * first (rds_append_eval(), which claims), then sends; its command
 * waits, the others' do not.  A question (rconn_up(), which picks
 * between a master and its replica) claims nothing: it sends nothing
 * that would end the try. */
static void
test_the_claimer_tries(void **state)
{
	const char *argv[1] = { "PING" };
	struct rconn r, q;
	redisReply *rep;
	long long t0, t[2];

	(void)state;
	assert_true(ping_ms() >= TMO_MS - 10);	/* the mark: 250 ms */
	usleep(300 * 1000);
	rconn_init(&r, fx.sock, TMO_MS);
	assert_int_equal(rconn_connect(&r), 0);	/* claims; connects */
	ping_in_children(2, t);			/* the others keep away */
	assert_true(t[0] >= 0 && t[0] < 50 && t[1] >= 0 && t[1] < 50);
	t0 = clock_mono_ms();
	rep = rconn_cmd(&r, 1, argv, NULL);	/* the try */
	assert_null(rep);
	assert_true(clock_mono_ms() - t0 >= TMO_MS - 10);
	rconn_close(&r);
	/* the failed try doubled the backoff (500 ms); when it ends, a
	 * question leaves the try to the next command, here a child's */
	usleep(550 * 1000);
	rconn_init(&q, fx.sock, TMO_MS);
	assert_int_equal(rconn_up(&q), 1);
	ping_in_children(1, t);
	assert_true(t[0] >= TMO_MS - 10);
	rconn_close(&q);
}

/* A mark says how long the failed wait was: a caller that waits longer
 * (the worker) is not held back by a request's timeout, since for it the
 * server may only be slow; a failed connect holds everyone back. */
static void
test_longer_waits_go_on(void **state)
{
	struct rhealth *h = rhealth_slot("/test/waits");
	long long until = 0;

	(void)state;
	rhealth_failed(h, TMO_MS);
	assert_int_equal(rhealth_skip(h, 0, TMO_MS, &until), 1);
	assert_int_equal(rhealth_skip(h, 0, 5000, &until), 0);
	rhealth_failed(h, RHEALTH_ANY);
	assert_int_equal(rhealth_skip(h, 0, 5000, &until), 1);
	rhealth_answered(h);
	rhealth_failed(h, 5000);		/* a new mark: the worker's */
	assert_int_equal(rhealth_skip(h, 0, TMO_MS, &until), 1);
	assert_int_equal(rhealth_skip(h, 0, 5000, &until), 1);
	rhealth_answered(h);
}

/* The backoff's steps: 250 ms, doubling at each failed try (not at the
 * failures of commands already in flight), a reply clears it; a claim
 * left by a process that died holds the others for one try's time. */
static void
test_steps_and_claims(void **state)
{
	struct rhealth *h = rhealth_slot("/test/steps");
	long long before = clock_mono_ms() - 1, t0, until = 0;

	(void)state;
	assert_non_null(h);
	assert_ptr_equal(rhealth_slot("/test/steps"), h);
	assert_ptr_not_equal(rhealth_slot("/test/other"), h);
	assert_null(rhealth_slot(""));
	assert_int_equal(rhealth_skip(h, before, TMO_MS, &until), 0);	/* up */
	assert_int_equal(rhealth_marked(h), 0);
	assert_int_equal(rhealth_marked(NULL), 0);
	rhealth_failed(h, TMO_MS);
	assert_int_equal(rhealth_marked(h), 1);
	t0 = clock_mono_ms();
	assert_int_equal(rhealth_skip(h, before, TMO_MS, &until), 1);
	/* a process that had a reply after the mark goes on */
	assert_int_equal(rhealth_skip(h, t0 + 1, TMO_MS, &until), 0);
	rhealth_failed(h, TMO_MS);		/* in flight: no step */
	usleep(260 * 1000);
	t0 = clock_mono_ms();
	assert_int_equal(rhealth_skip(h, before, TMO_MS, &until), 0);	/* claimed */
	assert_true(until >= t0 + TMO_MS && until <= clock_mono_ms() + 1000);
	assert_int_equal(rhealth_skip(h, before, TMO_MS, &until), 1);	/* in flight */
	/* the claimer died: the claim lapses after its timeout and slack */
	usleep((TMO_MS + 110) * 1000);
	assert_int_equal(rhealth_skip(h, before, TMO_MS, &until), 0);	/* claimed */
	rhealth_failed(h, TMO_MS);		/* the try failed: 500 ms */
	usleep(300 * 1000);
	assert_int_equal(rhealth_skip(h, before, TMO_MS, &until), 1);
	usleep(250 * 1000);
	assert_int_equal(rhealth_skip(h, before, TMO_MS, &until), 0);
	/* marked until a reply, backoff over or not (rcl.h's whole cluster) */
	assert_int_equal(rhealth_marked(h), 1);
	t0 = clock_mono_ms();
	rhealth_answered(h);
	assert_int_equal(rhealth_marked(h), 0);
	assert_true(rhealth_up_ms(h) >= t0);
	assert_int_equal(rhealth_skip(h, before, TMO_MS, &until), 0);
	assert_int_equal(rhealth_skip(h, before, TMO_MS, &until), 0);
}

/* A time far ahead (a table kept across a reboot, whose clock began
 * again) is taken as passed, not as years of backoff. */
static void
test_time_from_another_boot(void **state)
{
	struct rhealth *h = rhealth_slot("/test/boot");
	int64_t *f = (int64_t *)h;
	long long until = 0;

	(void)state;
	rhealth_failed(h, TMO_MS);
	/* the slot's third field is due_ms (rhealth.c) */
	f[2] = clock_mono_ms() + 86400000LL;
	assert_int_equal(rhealth_skip(h, 0, TMO_MS, &until), 0);
	rhealth_answered(h);
}

/* A write refused by the server, told by one process, is known to the
 * host's others for RHEALTH_REFUSED_MS after it; a time far ahead (a
 * table kept across a reboot) is taken as passed. */
static void
test_refusal_told_to_the_host(void **state)
{
	struct rhealth *h = rhealth_slot("/test/refused");
	int64_t *f = (int64_t *)h;
	pid_t pid;
	int st;

	(void)state;
	assert_int_equal(rhealth_refusing(h), 0);
	if ((pid = fork()) == 0) {
		rhealth_refused(rhealth_slot("/test/refused"));
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(rhealth_refusing(h), 1);
	assert_int_equal(rhealth_refusing(NULL), 0);
	/* the slot's seventh field is refused_ms (rhealth.c) */
	f[6] = clock_mono_ms() - RHEALTH_REFUSED_MS + 50;
	assert_int_equal(rhealth_refusing(h), 1);
	f[6] = clock_mono_ms() - RHEALTH_REFUSED_MS - 1;
	assert_int_equal(rhealth_refusing(h), 0);
	f[6] = clock_mono_ms() + 86400000LL;
	assert_int_equal(rhealth_refusing(h), 0);
	/* a backoff is another matter: a refusal marks nothing down */
	assert_int_equal(rhealth_skip(h, 0, TMO_MS, NULL), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_timeout_for_the_host,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_one_try_when_the_backoff_ends, setup, teardown),
		cmocka_unit_test_setup_teardown(test_the_claimer_tries, setup,
		    teardown),
		cmocka_unit_test(test_longer_waits_go_on),
		cmocka_unit_test(test_steps_and_claims),
		cmocka_unit_test(test_time_from_another_boot),
		cmocka_unit_test(test_refusal_told_to_the_host),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
