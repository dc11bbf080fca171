/* test-rcl-trust.c -- what the Redis Cluster client believes of what a
 * cluster tells it (store/rcl.h): a CLUSTER SLOTS reply with a
 * negative, reversed or out-of-range range, parts of the wrong type, a
 * host that is a path or a port out of range changes nothing of the map
 * and adds no node; a MOVED or ASK is parsed only when its slot and
 * host:port are sound, and one to a node the map does not have is not
 * followed.  Run under ASan too: a range below 0 once wrote below the
 * map.  And a cluster whose nodes come back under new addresses, again
 * and again: the node table (RCL_NODES) makes room for each new one in
 * the place of one the map no longer names, the seeds and the masters
 * kept; it filled, and a new node's slots stayed unreachable. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "store/rcl.h"

static redisReply *
num(long long v)
{
	redisReply *r = calloc(1, sizeof(*r));

	r->type = REDIS_REPLY_INTEGER;
	r->integer = v;
	return r;
}

static redisReply *
str(const char *s)
{
	redisReply *r = calloc(1, sizeof(*r));

	r->type = REDIS_REPLY_STRING;
	r->str = strdup(s);
	r->len = strlen(s);
	return r;
}

static redisReply *
arr(size_t n, ...)
{
	redisReply *r = calloc(1, sizeof(*r));
	va_list ap;
	size_t i;

	r->type = REDIS_REPLY_ARRAY;
	r->elements = n;
	r->element = calloc(n, sizeof(*r->element));
	va_start(ap, n);
	for (i = 0; i < n; i++)
		r->element[i] = va_arg(ap, redisReply *);
	va_end(ap);
	return r;
}

/* [a, b, [host, port]] */
static redisReply *
range(redisReply *a, redisReply *b, const char *host, redisReply *port)
{
	return arr(3, a, b, arr(2, str(host), port));
}

static int
mapped(const unsigned char *map)
{
	int s, n = 0;

	for (s = 0; s < RCL_SLOTS; s++)
		n += map[s] != RCL_NONE;
	return n;
}

static void
test_bent_ranges(void **state)
{
	static unsigned char map[RCL_SLOTS];
	struct rcl *cl = rcl_open("127.0.0.1:7001", 100, NULL, NULL);
	int before = cl->nnodes;
	redisReply *rep = arr(9,
	    range(num(-5), num(10), "127.0.0.1", num(7002)),	/* negative */
	    range(num(100), num(50), "127.0.0.1", num(7002)),	/* reversed */
	    range(num(0), num(RCL_SLOTS), "127.0.0.1", num(7002)), /* past */
	    range(str("0"), num(10), "127.0.0.1", num(7002)),	/* a string */
	    range(num(0), num(10), "../../x", num(7002)),	/* a path */
	    range(num(0), num(10), "127.0.0.1", num(0)),	/* port 0 */
	    range(num(0), num(10), "127.0.0.1", num(70000)),	/* too big */
	    range(num(0), num(10), "127.0.0.1", str("7002")),	/* a string */
	    num(3));						/* no range */

	(void)state;
	assert_non_null(cl);
	assert_int_equal(rcl_map_parse(cl, rep, map), 0);
	assert_int_equal(mapped(map), 0);
	assert_int_equal(cl->nnodes, before);
	freeReplyObject(rep);
	/* not a map at all */
	rep = num(1);
	assert_int_equal(rcl_map_parse(cl, rep, map), -1);
	freeReplyObject(rep);
	rcl_close(cl);
}

static void
test_sound_map(void **state)
{
	static unsigned char map[RCL_SLOTS];
	struct rcl *cl = rcl_open("127.0.0.1:7001", 100, NULL, NULL);
	redisReply *rep = arr(2,
	    range(num(0), num(8191), "127.0.0.1", num(7001)),
	    range(num(8192), num(16383), "", num(7002)));	/* "": the asked */

	assert_int_equal(rcl_map_parse(cl, rep, map), 0);
	assert_int_equal(mapped(map), RCL_SLOTS);
	assert_int_equal(map[0], rcl_node_at(cl, "127.0.0.1:7001"));
	assert_int_equal(map[16383], rcl_node_at(cl, "127.0.0.1:7002"));
	memcpy(cl->map, map, sizeof(map));
	assert_true(rcl_node_known(cl, "127.0.0.1:7002") >= 0);
	/* a MOVED to a stranger: not a node of the map */
	assert_int_equal(rcl_node_known(cl, "10.9.9.9:7000"), -1);
	freeReplyObject(rep);
	rcl_close(cl);
	(void)state;
}

static void
test_redirects(void **state)
{
	char addr[64];
	int slot = -7;

	(void)state;
	assert_int_equal(rcl_redirect_parse("MOVED 3999 127.0.0.1:7002", &slot,
	    addr, sizeof(addr)), 'M');
	assert_int_equal(slot, 3999);
	assert_string_equal(addr, "127.0.0.1:7002");
	assert_int_equal(rcl_redirect_parse("ASK 0 node-a.example:6379", &slot,
	    addr, sizeof(addr)), 'A');
	slot = -7;
	assert_int_equal(rcl_redirect_parse("MOVED -1 127.0.0.1:7002", &slot,
	    addr, sizeof(addr)), 0);
	assert_int_equal(rcl_redirect_parse("MOVED 16384 127.0.0.1:7002",
	    &slot, addr, sizeof(addr)), 0);
	assert_int_equal(rcl_redirect_parse("MOVED 5 127.0.0.1:../../x", &slot,
	    addr, sizeof(addr)), 0);
	assert_int_equal(rcl_redirect_parse("MOVED 5 /tmp/sock:7000", &slot,
	    addr, sizeof(addr)), 0);
	assert_int_equal(rcl_redirect_parse("MOVED 5", &slot, addr,
	    sizeof(addr)), 0);
	assert_int_equal(rcl_redirect_parse("MOVED x 1.2.3.4:5", &slot, addr,
	    sizeof(addr)), 0);
	assert_int_equal(rcl_redirect_parse("ERR MOVED 5 1.2.3.4:5", &slot,
	    addr, sizeof(addr)), 0);
	assert_int_equal(slot, -7);
	assert_int_equal(rcl_addr_valid("127.0.0.1:7001"), 1);
	assert_int_equal(rcl_addr_valid("127.0.0.1:"), 0);
	assert_int_equal(rcl_addr_valid(":7001"), 0);
	assert_int_equal(rcl_addr_valid("127.0.0.1:123456"), 0);
	assert_int_equal(rcl_addr_valid("a b:1"), 0);
}

/* The map as load_map() (rcl_map.c) takes it: copied, its masters. */
static void
take(struct rcl *cl, const unsigned char *map)
{
	int s;

	memcpy(cl->map, map, RCL_SLOTS);
	cl->masters = 0;
	for (s = 0; s < RCL_SLOTS; s++)
		if (map[s] != RCL_NONE)
			cl->masters |= 1u << map[s];
}

static void
test_nodes_come_and_go(void **state)
{
	static unsigned char map[RCL_SLOTS];
	struct rcl *cl = rcl_open("127.0.0.1:7001", 100, NULL, NULL);
	char host[32];
	redisReply *rep;
	int k, stay = -1;

	(void)state;
	for (k = 0; k < 4 * RCL_NODES; k++) {
		/* one master stays, the other is new every time */
		snprintf(host, sizeof(host), "10.0.%d.%d", k / 200, k % 200 + 1);
		rep = arr(2, range(num(0), num(8191), "10.9.9.9", num(7000)),
		    range(num(8192), num(16383), host, num(7000)));
		assert_int_equal(rcl_map_parse(cl, rep, map), 0);
		freeReplyObject(rep);
		assert_int_equal(mapped(map), RCL_SLOTS);
		take(cl, map);
		if (stay == -1)
			stay = map[0];
		assert_int_equal(map[0], stay);		/* kept its place */
		snprintf(host + strlen(host), sizeof(host) - strlen(host),
		    ":7000");
		assert_int_equal(map[16383], rcl_node_at(cl, host));
		assert_true(cl->nnodes <= RCL_NODES);
	}
	/* the seed is kept for ever, at its place */
	assert_int_equal(rcl_node_at(cl, "127.0.0.1:7001"), 0);
	rcl_close(cl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bent_ranges),
		cmocka_unit_test(test_sound_map),
		cmocka_unit_test(test_nodes_come_and_go),
		cmocka_unit_test(test_redirects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
