/* html.h -- an HTML writer that escapes by default.
 *
 * Every function appends to a struct buf.  Text and attribute values are
 * escaped (& < > " ' all become entities), so the same call is safe in
 * element content and in a quoted attribute.  Markup goes in only through
 * html_raw(), which accepts string literals and nothing else: a string
 * that came from a user cannot reach the output unescaped.
 */
#ifndef TALLY_HTML_H
#define TALLY_HTML_H

#include <stddef.h>

#include "base/buf.h"

void	html_text(struct buf *, const char *);
void	html_textn(struct buf *, const char *, size_t);
void	html_attr(struct buf *, const char *);
void	html_int(struct buf *, long long);
/* Percent-encodes everything but [A-Za-z0-9-._~/], then escapes. */
void	html_url(struct buf *, const char *);
void	html_raw_lit(struct buf *, const char *, size_t);
/* Text as html_text() writes it, with every http:// or https:// URL in it
 * (starting a word, up to a space, a quote or an angle bracket, without
 * trailing punctuation or an unopened closing parenthesis) a link:
 * <a href="URL" rel="nofollow ugc noopener">URL</a>, both escaped.  No
 * other scheme is linked (javascript: stays text). */
void	html_linked(struct buf *, const char *);
/* Literal markup: html_raw(b, "<p>") -- a non-literal does not compile. */
#define html_raw(b, s)	html_raw_lit((b), LIT(s))

#endif
