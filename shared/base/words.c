/* words.c -- words of a name for the people search; see words.h. */
#include <string.h>

#include "base/words.h"

static char
fold(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

size_t
words_next(const char **s, char *out)
{
	const char *p = *s;
	size_t n = 0;

	while (*p == ' ')
		p++;
	while (*p != '\0' && *p != ' ') {
		if (n < WORD_MAX - 1)
			out[n++] = fold(*p);
		p++;
	}
	out[n] = '\0';
	*s = p;
	return n;
}

size_t
words_fold(const char *s, char *out)
{
	char w[WORD_MAX];
	size_t n = 0, k;

	out[0] = '\0';
	while ((k = words_next(&s, w)) > 0) {
		if (n > 0 && n < WORD_MAX - 1)
			out[n++] = ' ';
		if (k > WORD_MAX - 1 - n)
			k = WORD_MAX - 1 - n;
		memcpy(out + n, w, k);
		n += k;
		out[n] = '\0';
	}
	return n;
}

void
words_upper(const char *p, char *out)
{
	static const char top[] = "\xf4\x8f\xbf\xbf";	/* U+10FFFF */
	size_t n = strlen(p);

	/* The highest code point, not a 0xff byte: PostgreSQL refuses a
	 * parameter that is not UTF-8 (every /people?q= was a 500 there). */
	if (n > WORD_MAX - sizeof(top))
		n = WORD_MAX - sizeof(top);
	memcpy(out, p, n);
	memcpy(out + n, top, sizeof(top));
}
