/* words.c -- words of a name for the people search; see words.h.
 *
 * Case is folded by the C library's lower-case mapping of the C.UTF-8
 * locale (towlower_l(): Unicode's simple mapping, one code point for
 * one), the same in every process and on every database: the index's
 * words and a search's prefix are folded here alike.  The locale is
 * made once a process and only read after. */
#include <locale.h>
#include <pthread.h>
#include <string.h>
#include <wctype.h>

#include "base/words.h"

static locale_t utf8;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void
utf8_make(void)
{
	/* (locale_t)0 when the locale is missing: ASCII alone folds */
	utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/* The code point of the UTF-8 sequence at p (its length in *len), or
 * -1 when p does not start a well-formed one (*len 1: the byte is kept
 * as it is). */
static long
decode(const unsigned char *p, size_t *len)
{
	unsigned long c;
	size_t n, i;

	*len = 1;
	if (p[0] < 0x80)
		return p[0];
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07;
	else
		return -1;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return -1;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 ||
	    c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
		return -1;
	*len = n;
	return (long)c;
}

static size_t
encode(unsigned long c, char *out)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | (c >> 12 & 0x3f));
	out[2] = (char)(0x80 | (c >> 6 & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* The lower case of code point c, as one code point. */
static unsigned long
lower(unsigned long c)
{
	wint_t l;

	if (c < 0x80)
		return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
	pthread_once(&utf8_once, utf8_make);
	if (utf8 == (locale_t)0)
		return c;
	l = towlower_l((wint_t)c, utf8);
	/* a mapping outside Unicode's code points is none */
	return l > 0 && l <= 0x10ffff && (l < 0xd800 || l > 0xdfff) ?
	    (unsigned long)l : c;
}

size_t
words_next(const char **s, char *out)
{
	const unsigned char *p = (const unsigned char *)*s;
	char enc[4];
	size_t n = 0, len, k;
	long c;

	while (*p == ' ')
		p++;
	while (*p != '\0' && *p != ' ') {
		c = decode(p, &len);
		if (c == -1) {
			enc[0] = (char)*p;
			k = 1;
		} else
			k = encode(lower((unsigned long)c), enc);
		/* a character fits whole or not at all */
		if (n + k <= WORD_MAX - 1) {
			memcpy(out + n, enc, k);
			n += k;
		}
		p += len;
	}
	out[n] = '\0';
	*s = (const char *)p;
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
		if (k > WORD_MAX - 1 - n) {	/* cut between characters */
			k = WORD_MAX - 1 - n;
			while (k > 0 && ((unsigned char)w[k] & 0xc0) == 0x80)
				k--;
		}
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
