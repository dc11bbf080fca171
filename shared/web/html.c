/* html.c -- the escaping HTML writer; see html.h. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "web/html.h"

/* What each byte becomes in text and attribute values: its entity in
 * esc[], or 0: itself. */
static const unsigned char esc_of[256] = {
	[0] = 6, ['&'] = 1, ['<'] = 2, ['>'] = 3, ['"'] = 4, ['\''] = 5,
};
static const struct { const char *s; size_t n; } esc[] = {
	{ NULL, 0 }, { LIT("&amp;") }, { LIT("&lt;") }, { LIT("&gt;") },
	{ LIT("&quot;") }, { LIT("&#39;") }, { LIT("&#xFFFD;") },
};

void
html_textn(struct buf *b, const char *s, size_t n)
{
	size_t i, run = 0;
	int k;

	for (i = 0; i < n; i++) {
		if ((k = esc_of[(unsigned char)s[i]]) == 0)
			continue;
		buf_put(b, s + run, i - run);
		buf_put(b, esc[k].s, esc[k].n);
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

/* The length of the URL at s (0: none there): "http://" or "https://"
 * and at least one character of host, up to a space, a quote, an angle
 * bracket or the end; trailing punctuation, and a ")" with no "(" in the
 * URL to close, are not part of it (a sentence's, or a parenthesis'). */
static size_t
url_at(const char *s)
{
	size_t n, start, open = 0, close = 0, i;

	if (strncasecmp(s, "http://", 7) == 0)
		start = 7;
	else if (strncasecmp(s, "https://", 8) == 0)
		start = 8;
	else
		return 0;
	for (n = start; s[n] != '\0' && (unsigned char)s[n] > ' ' &&
	    strchr("\"'<>`", s[n]) == NULL; n++)
		;
	for (i = start; i < n; i++) {
		open += s[i] == '(';
		close += s[i] == ')';
	}
	while (n > start && (strchr(".,;:!?*", s[n - 1]) != NULL ||
	    (s[n - 1] == ')' && close > open))) {
		close -= s[n - 1] == ')';
		n--;
	}
	return n > start ? n : 0;
}

void
html_linked(struct buf *b, const char *s)
{
	size_t i = 0, run = 0, n;

	if (s == NULL)
		return;
	for (i = 0; s[i] != '\0'; i++) {
		if ((s[i] != 'h' && s[i] != 'H') || (i > 0 &&
		    ((s[i - 1] >= 'a' && s[i - 1] <= 'z') ||
		    (s[i - 1] >= 'A' && s[i - 1] <= 'Z') ||
		    (s[i - 1] >= '0' && s[i - 1] <= '9'))) ||
		    (n = url_at(s + i)) == 0)
			continue;
		html_textn(b, s + run, i - run);
		html_raw(b, "<a href=\"");
		html_textn(b, s + i, n);
		html_raw(b, "\" rel=\"nofollow ugc noopener\">");
		html_textn(b, s + i, n);
		html_raw(b, "</a>");
		i += n - 1;
		run = i + 1;
	}
	html_textn(b, s + run, i - run);
}
