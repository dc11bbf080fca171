/* valid.h -- the validator table: every user-supplied field is checked
 * here before page code sees it, by the rules of its kind.
 */
#ifndef TALLY_VALID_H
#define TALLY_VALID_H

#include <stddef.h>

/* The longest snapshot taken (a page keeps none longer: noteview.h) */
#define VALID_SNAPSHOT_MAX	1024

enum valid {
	VALID_LOGIN,	/* 3-32 of [a-z0-9_], folded to lower case */
	VALID_NAME,	/* 1-64 characters of UTF-8, no control characters */
	VALID_PASSWORD,	/* 8-128 bytes of UTF-8, no control characters */
	VALID_BODY,	/* 1-2000 characters of UTF-8; \n \r \t allowed; not blank */
	VALID_TOPIC,	/* 0-32 of [a-z0-9-], folded; empty becomes "general" */
	VALID_TITLE,	/* 1-120 characters, no control characters */
	VALID_BOOL,	/* "0" or "1" */
	VALID_PAGE,	/* decimal 1..1000 (docs/INTERFACE.md §4) */
	VALID_ID,	/* decimal 1..2^53 */
	VALID_SECRET,	/* 0-1024 bytes of UTF-8, no NUL: a password as typed to be
			 * checked against its hash (login, settings'
			 * current), not held to VALID_PASSWORD: the admin's
			 * may come from TALLY_ADMIN_PASSWORD */
	VALID_BOARD,	/* a leaderboard: posts followers following likes
			 * rating (count/lb.h maps it), exactly */
	VALID_TOP_N,	/* decimal 1..100: a leaderboard's length (LB_MAX) */
	VALID_SNAPSHOT,	/* a database's snapshot as a page gives it,
			 * "XMIN:XMAX:" then decimal ids joined by ",":
			 * at most VALID_SNAPSHOT_MAX bytes */
	VALID__MAX
};

/* Checks s[0..len) against kind.  Returns 0 and, when norm is not NULL,
 * a normalised copy the caller frees; -1 when the value is not valid. */
int	valid_check(enum valid kind, const char *s, size_t len, char **norm);

/* 0 when s[0..len) is well-formed UTF-8 (no overlongs, no surrogates,
 * nothing above U+10FFFF); the number of code points goes in *nchars. */
int	valid_utf8(const char *s, size_t len, size_t *nchars);

/* Strict decimal: digits only, no sign or spaces, within [min, max]. */
int	valid_int(const char *s, long long min, long long max, long long *out);

/* What a valid value of kind looks like, for a person (missing: the
 * field was absent). */
const char	*valid_hint(enum valid kind, int missing);

/* What a value of kind must be, for a refusal that lists it ("posts,
 * followers, following, likes or rating"), or NULL when a refusal only
 * says the value is not valid. */
const char	*valid_must(enum valid kind);

#endif
