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
