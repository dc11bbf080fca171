/* valid.c -- field validators; see valid.h for the rules. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/ucd.h"
#include "base/valid.h"

int
valid_utf8(const char *s, size_t len, size_t *nchars)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + len;
	unsigned int cp;
	size_t n = 0;
	int need, i;

	while (p < e) {
		if (*p < 0x80) {
			p++;
			n++;
			continue;
		}
		if ((*p & 0xE0) == 0xC0) {
			need = 1;
			cp = *p & 0x1F;
		} else if ((*p & 0xF0) == 0xE0) {
			need = 2;
			cp = *p & 0x0F;
		} else if ((*p & 0xF8) == 0xF0) {
			need = 3;
			cp = *p & 0x07;
		} else
			return -1;
		if (e - p <= need)
			return -1;
		for (i = 1; i <= need; i++) {
			if ((p[i] & 0xC0) != 0x80)
				return -1;
			cp = cp << 6 | (p[i] & 0x3F);
		}
		if ((need == 1 && cp < 0x80) || (need == 2 && cp < 0x800) ||
		    (need == 3 && cp < 0x10000) || cp > 0x10FFFF ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			return -1;
		p += need + 1;
		n++;
	}
	if (nchars != NULL)
		*nchars = n;
	return 0;
}

int
valid_int(const char *s, long long min, long long max, long long *out)
{
	long long v;
	char *end;
	size_t i;

	if (s == NULL || *s == '\0' || strlen(s) > 19)
		return -1;
	for (i = 0; s[i] != '\0'; i++)
		if (s[i] < '0' || s[i] > '9')
			return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* s[0..len) as a strict decimal in [min, max].  s need not be
 * NUL-terminated at len: it is copied first, so nothing past len is read
 * and an embedded NUL is rejected. */
static int
int_ok(const char *s, size_t len, long long min, long long max)
{
	char tmp[24];
	long long v;

	if (len == 0 || len >= sizeof(tmp) || memchr(s, '\0', len) != NULL)
		return 0;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	return valid_int(tmp, min, max, &v) == 0;
}

/* Control characters: C0, DEL and C1 (U+0080..U+009F, encoded C2 80..9F). */
static int
has_control(const char *s, size_t len, int allow_ws)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[i] < 0x20 || p[i] == 0x7F) {
			if (allow_ws && (p[i] == '\n' || p[i] == '\r' ||
			    p[i] == '\t'))
				continue;
			return 1;
		}
		if (p[i] == 0xC2 && i + 1 < len && p[i + 1] >= 0x80 &&
		    p[i + 1] <= 0x9F)
			return 1;
	}
	return 0;
}

static int
text_ok(const char *s, size_t len, size_t lo, size_t hi, int allow_ws)
{
	size_t n;

	if (valid_utf8(s, len, &n) == -1 || n < lo || n > hi ||
	    has_control(s, len, allow_ws))
		return 0;
	/* not blank: something a reader sees (an invisible filler, a
	 * no-break space or a zero-width one made a blank name, an empty
	 * post) */
	return lo == 0 || !ucd_all_blank(s, len);
}

/* s with every CRLF (and lone CR) a LF, in a fresh string of *out_len
 * bytes (a NUL in s stays in it, for text_ok() to refuse). */
static char *
crlf_to_lf(const char *s, size_t len, size_t *out_len)
{
	char *d = xmalloc(len + 1);
	size_t i, k = 0;

	for (i = 0; i < len; i++) {
		if (s[i] == '\r') {
			d[k++] = '\n';
			if (i + 1 < len && s[i + 1] == '\n')
				i++;
		} else
			d[k++] = s[i];
	}
	d[k] = '\0';
	*out_len = k;
	return d;
}

/* [a-z0-9 + extra], folded to lower case into a fresh string. */
static int
slug_ok(const char *s, size_t len, size_t lo, size_t hi, char extra,
    char **norm)
{
	char *d;
	size_t i;

	if (len < lo || len > hi)
		return 0;
	d = xmalloc(len + 1);
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == extra)) {
			free(d);
			return 0;
		}
		d[i] = c;
	}
	d[len] = '\0';
	*norm = d;
	return 1;
}

/* A decimal number of 1 to 19 digits at s[*i..len), *i moved past it.
 * 0 when there is none (or it is longer). */
static int
snap_num(const char *s, size_t len, size_t *i, unsigned long long *v)
{
	size_t start = *i;

	for (*v = 0; *i < len && s[*i] >= '0' && s[*i] <= '9'; (*i)++) {
		if (*i - start == 19)
			return 0;
		*v = *v * 10 + (unsigned long long)(s[*i] - '0');
	}
	return *i > start;
}

/* PostgreSQL's pg_snapshot as text, as its input takes it:
 * "XMIN:XMAX:" (0 < XMIN <= XMAX) then the ids in flight, ascending,
 * each in [XMIN, XMAX), joined by ","; VALID_SNAPSHOT_MAX bytes at
 * most.  A value the server would refuse is a 400 here, not its error. */
static int
snapshot_ok(const char *s, size_t len)
{
	unsigned long long xmin, xmax, id, last = 0;
	size_t i = 0;

	if (len > VALID_SNAPSHOT_MAX || !snap_num(s, len, &i, &xmin) ||
	    i == len || s[i++] != ':' || !snap_num(s, len, &i, &xmax) ||
	    i == len || s[i++] != ':' || xmin == 0 || xmin > xmax)
		return 0;
	while (i < len) {
		if (!snap_num(s, len, &i, &id) || id < xmin || id >= xmax ||
		    id < last || (i < len && (s[i++] != ',' || i == len)))
			return 0;
		last = id;
	}
	return 1;
}

/* One of the leaderboards' names, exactly (no folding). */
static int
board_ok(const char *s, size_t len)
{
	static const char *const boards[] = {
		"posts", "followers", "following", "likes", "rating",
	};
	size_t i;

	for (i = 0; i < sizeof(boards) / sizeof(boards[0]); i++)
		if (strlen(boards[i]) == len && memcmp(boards[i], s, len) == 0)
			return 1;
	return 0;
}

int
valid_check(enum valid kind, const char *s, size_t len, char **norm)
{
	char *n = NULL;
	size_t chars;
	int ok = 0;

	if (s == NULL)
		return -1;
	switch (kind) {
	case VALID_LOGIN:
		ok = slug_ok(s, len, 3, 32, '_', &n);
		break;
	case VALID_NAME:	/* no invisible format characters either */
		ok = text_ok(s, len, 1, 64, 0) && !ucd_has_format(s, len);
		break;
	case VALID_PASSWORD:
		ok = len >= 8 && len <= 128 && valid_utf8(s, len, NULL) == 0 &&
		    !has_control(s, len, 0);
		break;
	case VALID_BODY:	/* a line break is one character, as the
				 * page's counter has it: a form sends CRLF */
		n = crlf_to_lf(s, len, &chars);
		ok = text_ok(n, chars, 1, 2000, 1);
		break;
	case VALID_TOPIC:
		if (len == 0) {
			n = xstrdup("general");
			ok = 1;
		} else
			ok = slug_ok(s, len, 1, 32, '-', &n);
		break;
	case VALID_TITLE:
		ok = text_ok(s, len, 1, 120, 0);
		break;
	case VALID_BOOL:
		ok = len == 1 && (s[0] == '0' || s[0] == '1');
		break;
	case VALID_PAGE:
		ok = int_ok(s, len, 1, 1000);
		break;
	case VALID_ID:
		ok = int_ok(s, len, 1, 9007199254740992LL);
		break;
	case VALID_SECRET:	/* the hash decides; a NUL would cut it, and
				 * what a form sends is UTF-8 */
		ok = len <= 1024 && memchr(s, '\0', len) == NULL &&
		    valid_utf8(s, len, &chars) == 0;
		break;
	case VALID_BOARD:
		ok = board_ok(s, len);
		break;
	case VALID_TOP_N:
		ok = int_ok(s, len, 1, 100);
		break;
	case VALID_SNAPSHOT:
		ok = snapshot_ok(s, len);
		break;
	case VALID__MAX:
		break;
	}
	if (!ok) {
		free(n);
		return -1;
	}
	if (norm != NULL)
		*norm = n != NULL ? n : xstrndup(s, len);
	else
		free(n);
	return 0;
}

const char *
valid_hint(enum valid kind, int missing)
{
	if (missing)
		return "This field is required.";
	switch (kind) {
	case VALID_LOGIN:
		return "3 to 32 letters, digits or _.";
	case VALID_NAME:
		return "1 to 64 characters, no control or invisible "
		    "formatting characters.";
	case VALID_PASSWORD:
		return "8 to 128 bytes, no control characters.";
	case VALID_BODY:
		return "1 to 2000 characters, not only spaces, no control "
		    "characters.";
	case VALID_TOPIC:
		return "Up to 32 letters, digits or -, like cats or "
		    "open-source.";
	case VALID_TITLE:
		return "1 to 120 characters, no control characters.";
	case VALID_BOOL:
		return "0 or 1.";
	case VALID_PAGE:
		return "A page number from 1 to 1000.";
	case VALID_ID:
		return "A number.";
	case VALID_SECRET:
		return "At most 1024 bytes.";
	case VALID_BOARD:
		return "One of posts, followers, following, likes or rating.";
	case VALID_TOP_N:
		return "A number from 1 to 100.";
	case VALID_SNAPSHOT:
		return "As the page gave it: XMIN:XMAX:IDS.";
	case VALID__MAX:
		break;
	}
	return "Not valid.";
}

const char *
valid_must(enum valid kind)
{
	switch (kind) {
	case VALID_BOARD:
		return "posts, followers, following, likes or rating";
	case VALID_TOP_N:
		return "a number from 1 to 100";
	default:
		return NULL;
	}
}
