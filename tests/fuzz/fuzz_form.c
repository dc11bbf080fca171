/* fuzz_form.c -- libFuzzer target: url-encoded form / query decoding.
 * Every decoded key and value must be a NUL-terminated string of the
 * reported length, and decoding twice gives the same result. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "base/kv.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kvlist a = { 0 }, b = { 0 };
	int ra, rb;
	size_t i;

	ra = kv_parse_form(&a, (const char *)data, size);
	rb = kv_parse_form(&b, (const char *)data, size);
	assert(ra == rb && a.n == b.n);
	assert(a.n <= KV_MAX_FIELDS);
	for (i = 0; i < a.n; i++) {
		assert(strlen(a.v[i].key) > 0 && strlen(a.v[i].key) <= KV_MAX_KEY);
		assert(a.v[i].val[a.v[i].vlen] == '\0');
		assert(a.v[i].vlen <= size);
		assert(memcmp(a.v[i].val, b.v[i].val, a.v[i].vlen) == 0);
		assert(kv_get(&a, a.v[i].key) != NULL);
	}
	kv_free(&a);
	kv_free(&b);
	return 0;
}
