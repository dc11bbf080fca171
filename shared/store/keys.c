/* keys.c -- Redis key names; see keys.h. */
#include <stdio.h>

#include "store/keys.h"

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
key_counters(char *out, size_t sz, int bucket, const char *tag, long long id)
{
	snprintf(out, sz, "{c%d}:%s%lld", bucket, tag, id);
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
key_view(char *out, size_t sz, long long post, long long uid,
    const char *addr)
{
	if (uid != 0)
		snprintf(out, sz, "{v%lld}:u%lld", post, uid);
	else
		snprintf(out, sz, "{v%lld}:a%s", post, addr);
}
