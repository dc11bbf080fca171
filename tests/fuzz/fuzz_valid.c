/* fuzz_valid.c -- libFuzzer target: the field validators.  A value that
 * passes is well-formed UTF-8 of the allowed length, its normalised copy
 * passes again (idempotent), and nothing reads past len. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/valid.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *norm, *again;
	size_t n;
	int k;

	for (k = 0; k < VALID__MAX; k++) {
		/* an exact-size copy, so ASan sees any read past len */
		char *copy = malloc(size ? size : 1);

		memcpy(copy, data, size);
		if (valid_check((enum valid)k, copy, size, &norm) == 0) {
			assert(valid_utf8(norm, strlen(norm), &n) == 0);
			assert(valid_check((enum valid)k, norm, strlen(norm),
			    &again) == 0);
			assert(strcmp(norm, again) == 0);
			free(again);
			free(norm);
		}
		free(copy);
	}
	return 0;
}
