/* fuzz_cookies.c -- libFuzzer target: Cookie header parsing. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/kv.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kvlist l = { 0 };
	char *s = malloc(size + 1);
	size_t i;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';		/* a header is a C string: stops at NUL */
	kv_parse_cookies(&l, s);
	assert(l.n <= KV_MAX_COOKIES);
	for (i = 0; i < l.n; i++) {
		assert(*l.v[i].key != '\0' && strlen(l.v[i].key) <= KV_MAX_KEY);
		assert(strchr(l.v[i].key, ';') == NULL);
		assert(strlen(l.v[i].val) == l.v[i].vlen);
	}
	kv_free(&l);
	free(s);
	return 0;
}
