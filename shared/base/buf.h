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

struct buf {
	char	*p;
	size_t	 len;
	size_t	 cap;
};

/* String literal with its length, for APIs taking (ptr, len). */
#define LIT(s)	("" s ""), (sizeof(s) - 1)

void	 buf_put(struct buf *, const void *, size_t);
void	 buf_puts(struct buf *, const char *);
void	 buf_putc(struct buf *, char);
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
