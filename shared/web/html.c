/* html.c -- the escaping HTML writer; see html.h. */
#include <stdio.h>
#include <string.h>

#include "web/html.h"

void
html_textn(struct buf *b, const char *s, size_t n)
{
	size_t i, run = 0;
	const char *ent;

	for (i = 0; i < n; i++) {
		switch (s[i]) {
		case '&': ent = "&amp;"; break;
		case '<': ent = "&lt;"; break;
		case '>': ent = "&gt;"; break;
		case '"': ent = "&quot;"; break;
		case '\'': ent = "&#39;"; break;
		case '\0': ent = "&#xFFFD;"; break;
		default: ent = NULL; break;
		}
		if (ent == NULL)
			continue;
		buf_put(b, s + run, i - run);
		buf_puts(b, ent);
		run = i + 1;
	}
	buf_put(b, s + run, n - run);
}

void
html_text(struct buf *b, const char *s)
{
	if (s != NULL)
		html_textn(b, s, strlen(s));
}

void
html_attr(struct buf *b, const char *s)
{
	html_text(b, s);
}

void
html_int(struct buf *b, long long v)
{
	buf_put_ll(b, v);
}

void
html_url(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	unsigned char c;

	for (; s != NULL && *s != '\0'; s++) {
		c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~' || c == '/')
			buf_putc(b, (char)c);
		else {
			buf_putc(b, '%');
			buf_putc(b, hex[c >> 4]);
			buf_putc(b, hex[c & 15]);
		}
	}
}

void
html_raw_lit(struct buf *b, const char *s, size_t n)
{
	buf_put(b, s, n);
}
