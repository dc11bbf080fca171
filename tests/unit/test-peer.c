/* test-peer.c -- whom a pool over TCP answers (shared/web/peer.h
 * peer_allowed): the addresses of TALLY_FCGI_ALLOW, IPv4 or IPv6, an
 * IPv4 peer also by its IPv4-mapped form; nobody else.  (A list with a
 * name or a prefix in it never gets this far: peer_setup() refuses to
 * start the pool.) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <string.h>

#include "web/peer.h"

static int
v4(const char *list, const char *addr)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };

	inet_pton(AF_INET, addr, &sa.sin_addr);
	return peer_allowed(list, (struct sockaddr *)&sa, sizeof(sa));
}

static int
v6(const char *list, const char *addr)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };

	inet_pton(AF_INET6, addr, &sa.sin6_addr);
	return peer_allowed(list, (struct sockaddr *)&sa, sizeof(sa));
}

static void
test_allowed(void **state)
{
	(void)state;
	assert_int_equal(v4("127.0.0.1", "127.0.0.1"), 1);
	assert_int_equal(v4("127.0.0.1", "127.0.0.99"), 0);
	assert_int_equal(v4("10.0.0.1, 127.0.0.1", "127.0.0.1"), 1);
	assert_int_equal(v4("::ffff:192.0.2.5", "192.0.2.5"), 1);
	assert_int_equal(v6("192.0.2.5", "::ffff:192.0.2.5"), 1);
	assert_int_equal(v6("2001:db8::1", "2001:db8::1"), 1);
	assert_int_equal(v6("2001:db8::1", "2001:db8::2"), 0);
	assert_int_equal(v6("127.0.0.1", "::1"), 0);
	assert_int_equal(v4("", "127.0.0.1"), 0);
	assert_int_equal(v4(NULL, "127.0.0.1"), 0);
	/* no names, no prefixes */
	assert_int_equal(v4("nginx.local", "127.0.0.1"), 0);
	assert_int_equal(v4("127.0.0.0/8", "127.0.0.1"), 0);
}

static void
test_unknown_family(void **state)
{
	struct sockaddr sa = { .sa_family = AF_UNIX };

	(void)state;
	assert_int_equal(peer_allowed("127.0.0.1", &sa, sizeof(sa)), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_unknown_family),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
