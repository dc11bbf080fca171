/* kv.h -- decoding of query strings, url-encoded forms and Cookie headers.
 *
 * Pure functions over (pointer, length): no FastCGI, no globals, so the
 * unit tests and the fuzzers drive them directly.  A kvlist owns every
 * key and value; kv_free() releases them and accepts a zeroed list.
 * Values may contain NUL bytes (from %00); vlen is their true length and
 * the validators in valid.c reject control characters.
 */
#ifndef TALLY_KV_H
#define TALLY_KV_H

#include <stddef.h>

#define KV_MAX_FIELDS	64	/* more fields than this: malformed */
#define KV_MAX_KEY	64	/* longer key: malformed */
/* A Cookie header's pairs kept: as many as nginx's 8 KB header buffer
 * holds ("a=; " is 4 bytes), so none that a browser sent is dropped for
 * the count (a site's parent domain's cookies come too: at 64, a sid
 * sent after 64 others was not seen, and its user was signed out). */
#define KV_MAX_COOKIES	2048

struct kv {
	char	*key;
	char	*val;		/* NUL-terminated copy */
	size_t	 vlen;
};

struct kvlist {
	struct kv	*v;
	size_t		 n;
};

/* Decodes "a=1&b=x+y%21" into l (appending).  Returns 0, or -1 when the
 * input is malformed (bad %-escape, empty or long key, too many fields);
 * on -1 the list holds whatever was decoded before the error. */
int		 kv_parse_form(struct kvlist *l, const char *s, size_t len);

/* Decodes a Cookie header "a=b; c=d" (no %-decoding, RFC 6265).
 * Malformed pairs are skipped; at most KV_MAX_COOKIES are kept. */
void		 kv_parse_cookies(struct kvlist *l, const char *s);

/* First value of key, or NULL. */
const struct kv	*kv_get(const struct kvlist *l, const char *key);

void		 kv_free(struct kvlist *l);

#endif
