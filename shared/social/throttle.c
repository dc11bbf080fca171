/* throttle.c -- actions per user per minute; see throttle.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "social/throttle.h"
#include "store/keys.h"
#include "store/rds.h"

/* KEYS: the minute's counter.  Returns the count after this action. */
static struct rds_script count_lua = { .src =
	"local n = redis.call('INCR', KEYS[1])\n"
	"if n == 1 then redis.call('EXPIRE', KEYS[1], 120) end\n"
	"return n\n" };

long
throttle_rate(void)
{
	static long rate = -1;
	const char *v;
	char *end;
	long n;

	if (rate >= 0)
		return rate;
	rate = THROTTLE_DEFAULT;
	if ((v = getenv("TALLY_WRITE_RATE")) != NULL && *v != '\0') {
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno == 0 && n >= 0 && (*end == '\0' ||
		    strcmp(end, "r/m") == 0))
			rate = n;
	}
	return rate;
}

int
throttle_write(struct app *a, long long uid)
{
	long long now = clock_wall_ms(), minute = now / 60000;
	long rate = throttle_rate();
	char key[KEY_MAX], suffix[32];
	const char *keys[1] = { key };
	rds_reply *rep;
	int over;

	if (rate == 0)
		return 0;
	snprintf(suffix, sizeof(suffix), "%lld", minute);
	key_user(key, sizeof(key), uid, "wr", suffix);
	rep = rds_eval(&a->rds, &count_lua, 1, keys, 0, NULL);
	over = rep != NULL && rep->type == RDS_INTEGER && rep->integer > rate;
	rds_free(rep);
	if (!over)
		return 0;
	return (int)(60 - (now / 1000) % 60);
}
