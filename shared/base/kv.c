/* kv.c -- form, query and cookie decoding; see kv.h. */
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/kv.h"

static int
hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes s[0..n) into a fresh string; -1 on a bad escape. */
static int
url_decode(const char *s, size_t n, char **out, size_t *outlen)
{
	char *d = xmalloc(n + 1);
	size_t i, j = 0;
	int hi, lo;

	for (i = 0; i < n; i++) {
		if (s[i] == '+')
			d[j++] = ' ';
		else if (s[i] == '%') {
			if (i + 2 >= n ||
			    (hi = hexval((unsigned char)s[i + 1])) < 0 ||
			    (lo = hexval((unsigned char)s[i + 2])) < 0) {
				free(d);
				return -1;
			}
			d[j++] = (char)(hi << 4 | lo);
			i += 2;
		} else
			d[j++] = s[i];
	}
	d[j] = '\0';
	*out = d;
	*outlen = j;
	return 0;
}

/* The list's room doubles when n reaches a power of two (its room is
 * then full): a header of 2,048 cookies grew it one entry at a time and
 * copied it each time, n * n / 2 entries in all. */
static void
kv_add(struct kvlist *l, char *key, char *val, size_t vlen)
{
	if ((l->n & (l->n - 1)) == 0)
		l->v = xrealloc(l->v, (l->n == 0 ? 1 : 2 * l->n) *
		    sizeof(*l->v));
	l->v[l->n].key = key;
	l->v[l->n].val = val;
	l->v[l->n].vlen = vlen;
	l->n++;
}

int
kv_parse_form(struct kvlist *l, const char *s, size_t len)
{
	const char *p = s, *end = s + len, *amp, *eq;
	char *key, *val;
	size_t klen, vlen;

	while (p < end) {
		amp = memchr(p, '&', (size_t)(end - p));
		if (amp == NULL)
			amp = end;
		if (amp == p) {		/* "a=1&&b=2" */
			p++;
			continue;
		}
		if (l->n >= KV_MAX_FIELDS)
			return -1;
		eq = memchr(p, '=', (size_t)(amp - p));
		if (eq == NULL)
			eq = amp;
		if (url_decode(p, (size_t)(eq - p), &key, &klen) == -1)
			return -1;
		if (klen == 0 || klen > KV_MAX_KEY || strlen(key) != klen) {
			free(key);
			return -1;
		}
		if (eq < amp) {
			if (url_decode(eq + 1, (size_t)(amp - eq - 1), &val,
			    &vlen) == -1) {
				free(key);
				return -1;
			}
		} else {
			val = xstrdup("");
			vlen = 0;
		}
		kv_add(l, key, val, vlen);
		p = amp < end ? amp + 1 : end;
	}
	return 0;
}

void
kv_parse_cookies(struct kvlist *l, const char *s)
{
	const char *p = s, *semi, *eq, *ks, *ke, *vs, *ve;

	while (p != NULL && *p != '\0' && l->n < KV_MAX_COOKIES) {
		semi = strchr(p, ';');
		if (semi == NULL)
			semi = p + strlen(p);
		eq = memchr(p, '=', (size_t)(semi - p));
		if (eq != NULL) {
			ks = p;
			while (ks < eq && (*ks == ' ' || *ks == '\t'))
				ks++;
			ke = eq;
			while (ke > ks && (ke[-1] == ' ' || ke[-1] == '\t'))
				ke--;
			vs = eq + 1;
			while (vs < semi && (*vs == ' ' || *vs == '\t'))
				vs++;
			ve = semi;
			while (ve > vs && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			if (ve - vs >= 2 && *vs == '"' && ve[-1] == '"') {
				vs++;
				ve--;
			}
			if (ke > ks && (size_t)(ke - ks) <= KV_MAX_KEY)
				kv_add(l, xstrndup(ks, (size_t)(ke - ks)),
				    xstrndup(vs, (size_t)(ve - vs)),
				    (size_t)(ve - vs));
		}
		p = *semi ? semi + 1 : NULL;
	}
}

const struct kv *
kv_get(const struct kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].key, key) == 0)
			return &l->v[i];
	return NULL;
}

void
kv_free(struct kvlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].val);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}
