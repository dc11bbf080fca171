/* rcmd.c -- a command in the Redis protocol's form; see rcmd.h. */
#include <string.h>

#include "base/buf.h"
#include "store/rcmd.h"

/* Writes "<c><n>\r\n" at out + at when it fits; its length. */
static size_t
header(char *out, size_t cap, size_t at, char c, size_t n)
{
	char digits[24];
	size_t nd = 0, len;

	do
		digits[nd++] = (char)('0' + n % 10);
	while ((n /= 10) > 0);
	len = 1 + nd + 2;
	if (out != NULL && at + len <= cap) {
		out[at++] = c;
		while (nd > 0)
			out[at++] = digits[--nd];
		out[at++] = '\r';
		out[at] = '\n';
	}
	return len;
}

size_t
rcmd_format(char *out, size_t cap, int argc, const char **argv,
    const size_t *lens)
{
	size_t at, n;
	int i;

	at = header(out, cap, 0, '*', (size_t)argc);
	for (i = 0; i < argc; i++) {
		n = lens != NULL ? lens[i] : strlen(argv[i]);
		at += header(out, cap, at, '$', n);
		if (out != NULL && at + n + 2 <= cap) {
			memcpy(out + at, argv[i], n);
			out[at + n] = '\r';
			out[at + n + 1] = '\n';
		}
		at += n + 2;
	}
	return at;
}

char *
rcmd_alloc(int argc, const char **argv, const size_t *lens, size_t *len)
{
	char *cmd;

	*len = rcmd_format(NULL, 0, argc, argv, lens);
	cmd = xmalloc(*len);
	rcmd_format(cmd, *len, argc, argv, lens);
	return cmd;
}
