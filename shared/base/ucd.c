/* ucd.c -- format characters (Cf); see ucd.h.  The ranges are those of
 * Unicode 15's DerivedGeneralCategory.txt for Cf. */
#include "base/ucd.h"

static const struct { unsigned long lo, hi; } cf[] = {
	{ 0x00AD, 0x00AD }, { 0x0600, 0x0605 }, { 0x061C, 0x061C },
	{ 0x06DD, 0x06DD }, { 0x070F, 0x070F }, { 0x0890, 0x0891 },
	{ 0x08E2, 0x08E2 }, { 0x180E, 0x180E }, { 0x200B, 0x200F },
	{ 0x202A, 0x202E }, { 0x2060, 0x2064 }, { 0x2066, 0x206F },
	{ 0xFEFF, 0xFEFF }, { 0xFFF9, 0xFFFB }, { 0x110BD, 0x110BD },
	{ 0x110CD, 0x110CD }, { 0x13430, 0x1343F }, { 0x1BCA0, 0x1BCA3 },
	{ 0x1D173, 0x1D17A }, { 0xE0001, 0xE0001 }, { 0xE0020, 0xE007F },
};

int
ucd_is_format(unsigned long c)
{
	size_t i;

	for (i = 0; i < sizeof(cf) / sizeof(cf[0]); i++)
		if (c >= cf[i].lo && c <= cf[i].hi)
			return 1;
	return 0;
}

/* The code point at p[*i] of valid UTF-8, *i moved past it. */
static unsigned long
next_cp(const unsigned char *p, size_t len, size_t *i)
{
	unsigned long c;
	size_t n, k;

	if (p[*i] < 0x80)
		return p[(*i)++];
	n = p[*i] >= 0xF0 ? 4 : p[*i] >= 0xE0 ? 3 : 2;
	c = p[*i] & (0x7F >> n);
	for (k = 1; k < n && *i + k < len; k++)
		c = (c << 6) | (p[*i + k] & 0x3F);
	*i += n;
	return c;
}

int
ucd_has_format(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len)
		if (ucd_is_format(next_cp((const unsigned char *)s, len, &i)))
			return 1;
	return 0;
}

int
ucd_is_blank(unsigned long c)
{
	/* White_Space, then what draws nothing yet is no space: the Hangul
	 * fillers, the Braille blank, invisible combining marks */
	static const unsigned long blank[] = { 0x85, 0xA0, 0x34F, 0x115F,
	    0x1160, 0x1680, 0x17B4, 0x17B5, 0x2028, 0x2029, 0x202F, 0x205F,
	    0x2800, 0x3000, 0x3164, 0xFFA0 };
	size_t i;

	if ((c >= 0x09 && c <= 0x0D) || c == 0x20 ||
	    (c >= 0x2000 && c <= 0x200A) || ucd_is_format(c))
		return 1;
	for (i = 0; i < sizeof(blank) / sizeof(blank[0]); i++)
		if (blank[i] == c)
			return 1;
	return 0;
}

int
ucd_all_blank(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len)
		if (!ucd_is_blank(next_cp((const unsigned char *)s, len, &i)))
			return 0;
	return 1;
}
