/* test-req-addr.c -- the client as views and limits key it
 * (shared/web/req.h req_addr_key): IPv4 as is, IPv6 by its /64, an
 * IPv4-mapped IPv6 address as IPv4, anything else "". */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "web/req.h"

static void
check(const char *addr, const char *want)
{
	char out[REQ_ADDR_MAX];

	req_addr_key(addr, out, sizeof(out));
	assert_string_equal(out, want);
}

static void
test_keys(void **state)
{
	(void)state;
	check("198.51.100.7", "198.51.100.7");
	check("2001:db8:1:2::1", "2001:db8:1:2::/64");
	check("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64");
	check("2001:db8:1:3::1", "2001:db8:1:3::/64");
	check("::ffff:198.51.100.7", "198.51.100.7");
	check("::1", "::/64");
	check("", "");
	check("not an address", "");
	check("198.51.100.7; DROP", "");
	check(NULL, "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
