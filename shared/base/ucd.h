/* ucd.h -- the one piece of the Unicode Character Database tally needs:
 * which code points are format characters (General_Category Cf: bidi
 * overrides and isolates, zero-width joiners, soft hyphen, tags...),
 * invisible characters that make a name look like another's. */
#ifndef TALLY_UCD_H
#define TALLY_UCD_H

#include <stddef.h>

/* 1 when code point c is of category Cf (Unicode 15). */
int	ucd_is_format(unsigned long c);
/* 1 when the valid UTF-8 text s[0..len) holds a Cf code point. */
int	ucd_has_format(const char *s, size_t len);
/* 1 when c draws nothing: White_Space, Cf, the Hangul fillers, the
 * Braille blank, the invisible combining marks. */
int	ucd_is_blank(unsigned long c);
/* 1 when every code point of the valid UTF-8 text s[0..len) is blank. */
int	ucd_all_blank(const char *s, size_t len);

#endif
