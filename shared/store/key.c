/* key.c -- Redis key names; see key.h. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "store/key.h"

void
key_user(char *out, size_t sz, long long uid, const char *what,
    const char *suffix)
{
	if (suffix != NULL)
		snprintf(out, sz, "{u%lld}:%s:%s", uid, what, suffix);
	else
		snprintf(out, sz, "{u%lld}:%s", uid, what);
}

void
key_sub(char *out, size_t sz, const char *key, const char *suffix)
{
	snprintf(out, sz, "%s:%s", key, suffix);
}

void
key_bucket(char *out, size_t sz, int bucket, const char *what)
{
	snprintf(out, sz, "{c%d}:%s", bucket, what);
}

void
key_counters_pattern(char *out, size_t sz, const char *tag)
{
	snprintf(out, sz, "{c*}:%s*", tag);
}

/* Digits at *p (at least one, no sign, no overflow) into *v. */
static int
digits(const char **p, long long *v)
{
	const char *s = *p;

	*v = 0;
	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (*v > (LLONG_MAX - (*s - '0')) / 10)
			return -1;
		*v = *v * 10 + (*s - '0');
	}
	*p = s;
	return 0;
}

int
key_counters_parse(const char *key, const char *tag, long long *id)
{
	const char *p = key;
	size_t nt = strlen(tag);
	long long b;

	if (p[0] != '{' || p[1] != 'c')
		return -1;
	p += 2;
	if (digits(&p, &b) == -1 || p[0] != '}' || p[1] != ':')
		return -1;
	p += 2;
	if (strncmp(p, tag, nt) != 0)
		return -1;
	p += nt;
	if (digits(&p, id) == -1 || *p != '\0')
		return -1;
	return 0;
}

void
key_counters(char *out, size_t sz, int bucket, const char *tag, long long id)
{
	char b[LL_CHARS], i[LL_CHARS];
	size_t nb = buf_fmt_ll(b, bucket), nt = strlen(tag), ni = buf_fmt_ll(i, id);

	/* "{c<B>}:<tag><id>", built by hand: a page names ~30 of these */
	if (nb + nt + ni + 5 > sz) {
		snprintf(out, sz, "{c%d}:%s%lld", bucket, tag, id);
		return;
	}
	memcpy(out, "{c", 2);
	memcpy(out + 2, b, nb);
	memcpy(out + 2 + nb, "}:", 2);
	memcpy(out + 4 + nb, tag, nt);
	memcpy(out + 4 + nb + nt, i, ni + 1);
}

void
key_user_cache(char *out, size_t sz, int bucket, long long uid,
    const char *what)
{
	snprintf(out, sz, "{c%d}:u%lld:%s", bucket, uid, what);
}

/* The smallest "g<n>" whose CRC16 slot falls in each sixteenth of the
 * 16384 slots (test-keys checks it): a cluster that gives each master a
 * range of at least 1024 slots has a copy on every master. */
static const char *const badge_tags[KEY_BADGE_COPIES] = {
	"g42", "g2", "g20", "g11", "g43", "g3", "g21", "g10",
	"g40", "g0", "g22", "g13", "g41", "g1", "g23", "g12"
};

void
key_badge_copy(char *out, size_t sz, int k)
{
	snprintf(out, sz, "{%s}:badge", badge_tags[k % KEY_BADGE_COPIES]);
}

void
key_flush_lock(char *out, size_t sz, long long batch)
{
	snprintf(out, sz, "{flush}:lock:%lld", batch);
}

void
key_board(char *out, size_t sz, const char *field, long long topic)
{
	if (topic > 0)
		snprintf(out, sz, "{lb}:rating:%lld", topic);
	else
		snprintf(out, sz, "{lb}:%s", field);
}

void
key_login(char *out, size_t sz, const char *login)
{
	snprintf(out, sz, "{login:%s}", login);
}

void
key_view_addr(char *out, size_t sz, const char *addr)
{
	snprintf(out, sz, "{va%s}", addr);
}

