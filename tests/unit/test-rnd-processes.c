/* test-rnd-processes.c -- rnd_below() (rnd.h), what the drift check
 * samples its keys with: two processes draw different keys, and draws
 * stay in range.  The drift check once used random(), never seeded: every
 * worker (and every restart) sampled the same keys in the same order --
 * the first case shows random() doing exactly that in two processes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/wait.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/auth.h"
#include "base/rnd.h"

#define DRAWS	8

/* The draws of a child process, through a pipe. */
static void
draws_of_child(int use_rnd, long long *out)
{
	int fd[2], st;
	pid_t pid;
	long long v[DRAWS];

	assert_int_equal(pipe(fd), 0);
	if ((pid = fork()) == 0) {
		for (int i = 0; i < DRAWS; i++)
			v[i] = use_rnd ? rnd_below(1000000007LL) :
			    random() % 1000000007LL;
		_exit(write(fd[1], v, sizeof(v)) == sizeof(v) ? 0 : 1);
	}
	assert_true(pid > 0);
	close(fd[1]);
	assert_int_equal(read(fd[0], out, sizeof(v)), (ssize_t)sizeof(v));
	close(fd[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(st, 0);
}

static void
test_random_repeats_across_processes(void **state)
{
	long long a[DRAWS], b[DRAWS];

	(void)state;
	draws_of_child(0, a);
	draws_of_child(0, b);
	assert_memory_equal(a, b, sizeof(a));	/* the old defect */
}

static void
test_rnd_differs_across_processes(void **state)
{
	long long a[DRAWS], b[DRAWS];

	(void)state;
	draws_of_child(1, a);
	draws_of_child(1, b);
	assert_memory_not_equal(a, b, sizeof(a));
}

static void
test_rnd_range(void **state)
{
	long long big = 1LL << 40, v;
	int i, seen_high = 0;

	(void)state;
	assert_int_equal(rnd_below(0), 0);
	assert_int_equal(rnd_below(-5), 0);
	assert_int_equal(rnd_below(1), 0);
	for (i = 0; i < 1000; i++) {
		v = rnd_below(big);
		assert_true(v >= 0 && v < big);
		seen_high |= v >= (1LL << 32);
		v = rnd_below(7);
		assert_true(v >= 0 && v < 7);
	}
	assert_true(seen_high);		/* above 32 bits too */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_repeats_across_processes),
		cmocka_unit_test(test_rnd_differs_across_processes),
		cmocka_unit_test(test_rnd_range),
	};

	if (auth_init() == -1)
		return 1;
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
