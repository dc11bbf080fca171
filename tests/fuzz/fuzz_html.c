/* fuzz_html.c -- libFuzzer target: the escaping HTML writer.  Whatever
 * the input, escaped output never contains a raw < > " ' or NUL, and
 * every & starts an entity; html_url output is only [A-Za-z0-9-._~/%]. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "web/html.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf b = { 0 }, u = { 0 };
	char *s;
	size_t i;

	html_textn(&b, (const char *)data, size);
	for (i = 0; i < b.len; i++) {
		assert(b.p[i] != '<' && b.p[i] != '>' && b.p[i] != '"' &&
		    b.p[i] != '\'' && b.p[i] != '\0');
		if (b.p[i] == '&')
			assert(strchr(b.p + i, ';') != NULL);
	}
	s = xstrndup((const char *)data, size);
	html_url(&u, s);
	for (i = 0; i < u.len; i++)
		assert(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789-._~/%", u.p[i]) != NULL);
	free(s);
	buf_free(&b);
	buf_free(&u);
	return 0;
}
