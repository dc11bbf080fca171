/* fuzz_rcl.c -- libFuzzer target: what a Redis Cluster may answer.  The
 * input is read as RESP by hiredis's own reader (so every shape a node
 * could send is reachable); each reply is given to the slot map's parser
 * (rcl_map_parse) and, as an error's text, to the MOVED/ASK parser.
 * Whatever comes in: the map holds only RCL_NONE or a node of the table,
 * the table stays within RCL_NODES with valid host:ports, a parsed
 * redirect has a slot in range and a valid address, and nothing reads
 * or writes outside its buffers (ASan). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "store/rcl.h"

static unsigned char map[RCL_SLOTS];

static void
one(const redisReply *rep)
{
	struct rcl *cl = rcl_open("127.0.0.1:7001", 50, NULL, NULL);
	char addr[64];
	int s, slot;

	assert(cl != NULL);
	if (rcl_map_parse(cl, rep, map) == 0)
		for (s = 0; s < RCL_SLOTS; s++)
			assert(map[s] == RCL_NONE || map[s] < cl->nnodes);
	assert(cl->nnodes <= RCL_NODES);
	for (s = 0; s < cl->nnodes; s++)
		assert(rcl_addr_valid(cl->nodes[s].addr));
	if ((rep->type == REDIS_REPLY_ERROR || rep->type == REDIS_REPLY_STRING ||
	    rep->type == REDIS_REPLY_STATUS) && rep->str != NULL &&
	    rcl_redirect_parse(rep->str, &slot, addr, sizeof(addr)) != 0) {
		assert(slot >= 0 && slot < RCL_SLOTS);
		assert(rcl_addr_valid(addr));
	}
	rcl_close(cl);
}

/* Whether a length in the input (after '*' or '$') is past what the
 * input could hold: hiredis 0.14's reader allocates a multi-bulk's
 * array at the length it is told (newer hiredis bounds it with
 * maxelements), so such an input only measures malloc.  Skipped. */
static int
too_long(const uint8_t *d, size_t n)
{
	size_t i, j;
	unsigned long long v;

	for (i = 0; i + 1 < n; i++) {
		if (d[i] != '*' && d[i] != '$')
			continue;
		for (j = i + 1, v = 0; j < n && d[j] >= '0' && d[j] <= '9' &&
		    v < 1000000; j++)
			v = v * 10 + (d[j] - '0');
		if (v > n)
			return 1;
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	redisReader *r;
	void *rep = NULL;
	int k;

	if (too_long(data, size) || (r = redisReaderCreate()) == NULL)
		return 0;
	redisReaderFeed(r, (const char *)data, size);
	for (k = 0; k < 8 && redisReaderGetReply(r, &rep) == REDIS_OK &&
	    rep != NULL; k++) {
		one(rep);
		freeReplyObject(rep);
		rep = NULL;
	}
	redisReaderFree(r);
	return 0;
}
