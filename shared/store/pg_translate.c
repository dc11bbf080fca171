/* pg_translate.c -- a statement of the table in PostgreSQL's words: its
 * "?N" and "?" placeholders as "$N", SQLite's planner hints dropped; see
 * pg.h. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "store/pg.h"

/* Skips "INDEXED BY name " at s; how many bytes it takes (0: none). */
static size_t
hint_len(const char *s)
{
	const char *p = s;

	if (strncmp(p, "INDEXED BY ", 11) != 0)
		return 0;
	p += 11;
	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	while (*p == ' ')
		p++;
	return (size_t)(p - s);
}

char *
pg_translate(const char *sql)
{
	struct buf b = { 0 };
	const char *s = sql;
	int next = 1, quoted = 0;
	long v;
	char *end;
	size_t h;

	while (*s != '\0') {
		if (*s == '\'')
			quoted = !quoted;
		if (!quoted && *s == '?') {
			s++;
			if (isdigit((unsigned char)*s)) {
				v = strtol(s, &end, 10);
				s = end;
			} else
				v = next;
			next = (int)v + 1;
			buf_printf(&b, "$%ld", v);
			continue;
		}
		if (!quoted && (h = hint_len(s)) > 0) {
			s += h;
			continue;
		}
		buf_putc(&b, *s++);
	}
	buf_putc(&b, '\0');
	return buf_take(&b);
}
