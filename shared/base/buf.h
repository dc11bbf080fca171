/* buf.h -- growable byte buffers.
 *
 * A struct buf owns its memory; buf_free() releases it and accepts a
 * zeroed buffer.  The contents are always NUL-terminated after any put,
 * so b->p can be used as a C string when no NUL was put into it.
 * Allocation failure aborts the process: a FastCGI child that cannot
 * allocate is restarted by its master, which is the only sane recovery.
 */
#ifndef TALLY_BUF_H
#define TALLY_BUF_H

#include <stddef.h>
#include <string.h>

struct buf {
	char	*p;
	size_t	 len;
	size_t	 cap;
};

/* String literal with its length, for APIs taking (ptr, len). */
#define LIT(s)	("" s ""), (sizeof(s) - 1)

/* Makes room for need more bytes and the NUL, doubling. */
void	 buf_grow(struct buf *, size_t need);

/* The puts are inline: a page is thousands of small pieces, and a call
 * for each, room or not, was a twentieth of a feed's handler time
 * (docs/BENCHMARKS.md).  buf_grow() only when the room is short. */
static inline void
buf_put(struct buf *b, const void *s, size_t n)
{
	if (b->len + n + 1 > b->cap)
		buf_grow(b, n);
	if (n > 0)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static inline void
buf_puts(struct buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}

static inline void
buf_putc(struct buf *b, char c)
{
	if (b->len + 2 > b->cap)
		buf_grow(b, 1);
	b->p[b->len++] = c;
	b->p[b->len] = '\0';
}
void	 buf_printf(struct buf *, const char *, ...)
	     __attribute__((format(printf, 2, 3)));
/* The decimal digits of v, as "%lld" writes them, without printf: a page
 * writes hundreds of numbers, and two vsnprintf calls each were a tenth
 * of a feed's handler time (docs/BENCHMARKS.md). */
void	 buf_put_ll(struct buf *, long long v);
/* The same into out (at least LL_CHARS bytes, NUL-terminated); returns
 * the length. */
#define LL_CHARS	21
size_t	 buf_fmt_ll(char *out, long long v);
void	 buf_reset(struct buf *);
void	 buf_free(struct buf *);
/* Moves the contents out: the caller frees the returned string. */
char	*buf_take(struct buf *);

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);

#endif
