/* throttle.c -- actions per user per minute; see throttle.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "social/throttle.h"
#include "store/key.h"
#include "store/rds.h"

/* KEYS: the minute's counter.  Returns the count after this action. */
static struct rds_script count_lua = { .src =
	"#!lua\n"
	"local n = redis.call('INCR', KEYS[1])\n"
	"if n == 1 then redis.call('EXPIRE', KEYS[1], 7200) end\n"
	"return n\n" };

long
throttle_parse_rate(const char *v, const char *unit, long dflt)
{
	char *end;
	long n;

	if (v == NULL || *v == '\0')
		return dflt;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || n < 0 || end == v ||
	    (*end != '\0' && strcmp(end, unit) != 0)) {
		log_warn("rate \"%s\": not a count of actions (\"N\" or "
		    "\"N%s\"); %ld", v, unit, dflt);
		return dflt;
	}
	return n;
}

long
throttle_rate(void)
{
	static long rate = -1;

	if (rate < 0)
		rate = throttle_parse_rate(getenv("TALLY_WRITE_RATE"), "r/m",
		    THROTTLE_DEFAULT);
	return rate;
}

/* New topics a user may make an hour: TALLY_TOPIC_RATE, else 20 (none
 * when TALLY_WRITE_RATE turns the action limit off). */
static long
topic_rate(void)
{
	static long rate = -1;

	if (rate < 0)
		rate = throttle_parse_rate(getenv("TALLY_TOPIC_RATE"), "r/h",
		    throttle_rate() == 0 ? 0 : THROTTLE_TOPICS);
	return rate;
}

/* Counts one event under key, a window of secs seconds that began at
 * now's: 0 within limit, else the seconds to the window's end. */
static int
count_at(struct app *a, const char *key, long long now, long secs,
    long limit)
{
	const char *keys[1] = { key };
	rds_reply *rep;
	int over;

	rep = rds_eval(a->rds, &count_lua, 1, keys, 0, NULL);
	over = rep != NULL && rds_type(rep) == RDS_INTEGER && rds_int(rep) > limit;
	rds_free(rep);
	if (!over)
		return 0;
	return (int)(secs - (now / 1000) % secs);
}

/* One event of uid in the current window (key {u<uid>}:<what>:<window>). */
static int
count(struct app *a, long long uid, const char *what, long secs, long limit)
{
	long long now = clock_wall_ms();
	char key[KEY_MAX], suffix[32];

	if (limit == 0)
		return 0;
	snprintf(suffix, sizeof(suffix), "%lld", now / (secs * 1000));
	key_user(key, sizeof(key), uid, what, suffix);
	return count_at(a, key, now, secs, limit);
}

/* One event of login's in the current window (key {login:<login>}:
 * <what>:<window>). */
static int
count_login(struct app *a, const char *login, const char *what, long secs,
    long limit)
{
	long long now = clock_wall_ms();
	char key[KEY_MAX + 48], suffix[48], tag[KEY_MAX];

	snprintf(suffix, sizeof(suffix), "%s:%lld", what, now / (secs * 1000));
	key_login(tag, sizeof(tag), login);
	key_sub(key, sizeof(key), tag, suffix);
	return count_at(a, key, now, secs, limit);
}

int
throttle_write(struct app *a, long long uid)
{
	return count(a, uid, "wr", 60, throttle_rate());
}

int
throttle_topic(struct app *a, long long uid)
{
	return count(a, uid, "tp", 3600, topic_rate());
}

int
throttle_owner_lane(struct app *a, const char *login)
{
	return count_login(a, login, "ol", 60, THROTTLE_OWNER_LANE);
}

int
throttle_device_tries(struct app *a, const char *login, long secs)
{
	return count_login(a, login, "dt", secs, THROTTLE_DEVICE_TRIES);
}
