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

int
ucd_has_format(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned long c;
	size_t i = 0, n, k;

	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		n = p[i] >= 0xF0 ? 4 : p[i] >= 0xE0 ? 3 : 2;
		c = p[i] & (0x7F >> n);
		for (k = 1; k < n && i + k < len; k++)
			c = (c << 6) | (p[i + k] & 0x3F);
		if (ucd_is_format(c))
			return 1;
		i += n;
	}
	return 0;
}
