/* test-batch-listen.c -- a gathering writer (web/batch.h) leaves its
 * listening socket blocking, and a new writer makes it so whatever the
 * one before left: O_NONBLOCK belongs to the socket, which every process
 * of the pool inherits, and a successor whose accept fails at once
 * (EAGAIN) would exit and be restarted in a loop. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/socket.h>

#include <fcntl.h>
#include <unistd.h>

#include "web/batch.h"

static void
test_reset(void **state)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	(void)state;
	assert_true(fd >= 0);
	/* what a writer killed while it gathered leaves behind */
	assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK),
	    0);
	batch_listen_reset(fd);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	batch_listen_reset(fd);		/* already blocking: stays so */
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
