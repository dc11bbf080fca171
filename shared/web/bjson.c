/* bjson.c -- the badge poll's answer, kept per process; see bjson.h. */
#include <stdlib.h>

#include "social/badges.h"
#include "web/bjson.h"

struct slot {
	int		 used;
	struct badges	 v;
	char		*json;		/* json_dumps()'s */
	char		 etag[96];
};

static struct slot slots[BJSON_SLOTS];

json_t *
bjson_object(const struct badges *b)
{
	return json_pack("{s:I,s:I,s:I,s:b}", "notifications",
	    (json_int_t)b->notifications, "notices", (json_int_t)b->notices,
	    "followed", (json_int_t)b->followed, "red_dot", b->red_dot);
}

static int
same(const struct badges *x, const struct badges *y)
{
	return x->notifications == y->notifications &&
	    x->notices == y->notices && x->followed == y->followed &&
	    (x->red_dot != 0) == (y->red_dot != 0);
}

static unsigned
slot_of(const struct badges *b)
{
	unsigned long long h = 1469598103934665603ULL;	/* FNV-1a, by value */
	const long long v[4] = { b->notifications, b->notices, b->followed,
	    b->red_dot != 0 };
	int i;

	for (i = 0; i < 4; i++) {
		h ^= (unsigned long long)v[i];
		h *= 1099511628211ULL;
	}
	return (unsigned)(h ^ (h >> 32)) % BJSON_SLOTS;
}

int
bjson_get(const struct badges *b, const char **json, const char **etag)
{
	struct slot *s = &slots[slot_of(b)];
	json_t *o;
	char *text;

	if (!s->used || !same(&s->v, b)) {
		if ((o = bjson_object(b)) == NULL)
			return -1;
		text = json_dumps(o, JSON_COMPACT);
		json_decref(o);
		if (text == NULL)
			return -1;
		free(s->json);
		s->json = text;
		s->v = *b;
		badges_etag(b, s->etag, sizeof(s->etag));
		s->used = 1;
	}
	*json = s->json;
	*etag = s->etag;
	return 0;
}
