/* pace.c -- one event per key in a gap; see pace.h. */
#include <stddef.h>

#include "base/pace.h"

struct pace_slot *
pace_slot(struct pace *p, long long key, long long now)
{
	unsigned long long h = (unsigned long long)key * 0x9E3779B97F4A7C15ULL;
	struct pace_slot *e, *free_one = NULL;
	int i;

	/* Its own is looked for all along the way first: a free slot
	 * before it (an earlier key's gap over) once gave a waiting key a
	 * second slot, the first left waiting for good, and a change that
	 * met that one within its gap was never served. */
	for (i = 0; i < PACE_PROBES; i++) {
		e = &p->s[(h + (unsigned long long)i) & (PACE_SLOTS - 1)];
		if (e->key == key)
			return e;
		if (free_one == NULL && !e->waiting && now - e->at >= p->gap_ms)
			free_one = e;
	}
	if (free_one != NULL) {
		free_one->key = key;
		free_one->at = 0;
	}
	return free_one;
}
