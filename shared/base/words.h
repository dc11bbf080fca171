/* words.h -- the words of a name, as the people search indexes them.
 *
 * A person is found by a prefix of their login, of any word of their name,
 * or of their whole name: each is one row of name_words (store/schema.c),
 * every letter folded to lower case (Unicode's simple mapping, as the C
 * library's C.UTF-8 locale has it: "Émile" and "ÉMILE" are "émile",
 * "Ｔａｒｏ" is "ｔａｒｏ"; bytes that are not UTF-8 as they are), words
 * split on spaces.  A prefix is then a range of
 * that key: [prefix, prefix "\xff"), since no UTF-8 text holds 0xff.
 */
#ifndef TALLY_WORDS_H
#define TALLY_WORDS_H

#include <stddef.h>

#define WORD_MAX	272	/* a whole name (64 chars of UTF-8) and a NUL */

/* Copies the next word of *s, folded, into out (size WORD_MAX) and
 * advances *s past it.  Its length, or 0 at the end of the text. */
size_t	words_next(const char **s, char *out);
/* s folded into out (size WORD_MAX), with its spaces trimmed and runs of
 * them made one; its length (0: nothing to look for). */
size_t	words_fold(const char *s, char *out);
/* The exclusive upper end of the range of prefix p: p followed by
 * U+10FFFF, the highest code point (valid UTF-8, which PostgreSQL asks
 * of a text parameter; in byte order above every other character, so the
 * range misses only words with that noncharacter right after p). */
void	words_upper(const char *p, char *out);

#endif
