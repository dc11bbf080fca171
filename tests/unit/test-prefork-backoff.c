/* test-prefork-backoff.c -- a pool whose children cannot start
 * (base/prefork.h): each slot waits a second after a child that died
 * young, then twice as long, so a pool of two forks a handful of times
 * in 2.5 s.  Every death woke the master, which re-forked the other
 * slot's child at once: thousands of forks a second, the log flooded. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/mman.h>
#include <sys/wait.h>

#include <signal.h>
#include <unistd.h>

#include "base/prefork.h"

static volatile long *forks;

static int
failing_child(int fd, void *arg)
{
	(void)fd;
	(void)arg;
	__atomic_add_fetch(forks, 1, __ATOMIC_SEQ_CST);
	return -1;
}

static void
test_young_deaths_back_off(void **state)
{
	int pipefd[2];
	pid_t master;
	int status;

	(void)state;
	forks = mmap(NULL, sizeof(*forks), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(forks != MAP_FAILED);
	*forks = 0;
	assert_int_equal(pipe(pipefd), 0);
	if ((master = fork()) == 0)
		_exit(prefork_run(pipefd[0], NULL, 2, failing_child, NULL));
	assert_true(master > 0);
	usleep(2500 * 1000);
	kill(master, SIGTERM);
	assert_int_equal(waitpid(master, &status, 0), master);
	/* 2 at once, 2 a second later, the next 2 s after that */
	assert_true(*forks >= 2);
	assert_true(*forks <= 6);
	close(pipefd[0]);
	close(pipefd[1]);
}

/* The pauses of a slot whose children keep failing: 1 s, 2 s, then no
 * more than 4 s, so that a pool is back within 5 s of its cause's end
 * (a database restarting for 20 s left pauses of 16 and 30 s: no child
 * for as long, every request queued at the socket until nginx gave up);
 * a child killed young waits 100 ms; one that lived a second, none. */
static void
test_pauses_bounded(void **state)
{
	long long p = 0, t = 0;
	int i;

	(void)state;
	p = prefork_pause(p, t, t + 10, 1);
	assert_int_equal(p, 1000);
	p = prefork_pause(p, t, t + 10, 1);
	assert_int_equal(p, 2000);
	for (i = 0; i < 10; i++) {
		p = prefork_pause(p, t, t + 10, 1);
		assert_true(p <= PREFORK_PAUSE_MAX_MS);
	}
	assert_int_equal(p, 4000);
	assert_true(PREFORK_PAUSE_MAX_MS < 5000);
	assert_int_equal(prefork_pause(p, t, t + 10, 0), 100);
	assert_int_equal(prefork_pause(p, t, t + 1000, 1), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_young_deaths_back_off),
		cmocka_unit_test(test_pauses_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
