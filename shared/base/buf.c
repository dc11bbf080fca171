/* buf.c -- growable byte buffers; see buf.h for the ownership rules. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/log.h"

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL) {
		log_err("out of memory (%zu bytes)", n);
		abort();
	}
	return p;
}

void *
xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);

	if (p == NULL) {
		log_err("out of memory (%zu x %zu bytes)", n, sz);
		abort();
	}
	return p;
}

void *
xrealloc(void *o, size_t n)
{
	void *p = realloc(o, n ? n : 1);

	if (p == NULL) {
		log_err("out of memory (%zu bytes)", n);
		abort();
	}
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

void
buf_grow(struct buf *b, size_t need)
{
	size_t cap;

	if (b->len + need + 1 <= b->cap)
		return;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + need + 1) {
		if (cap > ((size_t)-1) / 2) {
			log_err("buffer size overflow");
			abort();
		}
		cap *= 2;
	}
	b->p = xrealloc(b->p, cap);
	b->cap = cap;
	assert(b->len + need < b->cap);
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	buf_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	assert(b->len < b->cap && b->p[b->len] == '\0');
}

size_t
buf_fmt_ll(char *out, long long v)
{
	char d[LL_CHARS], *p = d + sizeof(d);
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v :
	    (unsigned long long)v;
	size_t n;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*--p = '-';
	n = (size_t)(d + sizeof(d) - p);
	memcpy(out, p, n);
	out[n] = '\0';
	return n;
}

void
buf_put_ll(struct buf *b, long long v)
{
	char d[LL_CHARS];
	size_t n = buf_fmt_ll(d, v);

	buf_put(b, d, n);
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->p != NULL)
		b->p[0] = '\0';
}

void
buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

char *
buf_take(struct buf *b)
{
	char *p = b->p ? b->p : xstrdup("");

	b->p = NULL;
	b->len = b->cap = 0;
	return p;
}
