/* bjson.h -- the badge poll's answer for one value of the badges: its
 * JSON (written by jansson) and its ETag, kept per process for the
 * values seen last.
 *
 * /badges.json is the site's most frequent request (every open page
 * polls it), and its answers repeat: a user's badges seldom change
 * between two polls, and most users show the same small numbers.
 * Building and writing the JSON object was ~10 % of tally-notify's time
 * a poll (docs/BENCHMARKS.md, "The badge poll's answer, kept"); a kept
 * answer costs a comparison.  BJSON_SLOTS answers, a value's slot chosen
 * by a hash of it; a new value evicts the slot's old one.
 */
#ifndef TALLY_BJSON_H
#define TALLY_BJSON_H

#include <jansson.h>

#include "social/bcache.h"

#define BJSON_SLOTS	64

/* {"notifications":N,"notices":N,"followed":N,"red_dot":true|false} */
json_t	*bjson_object(const struct badges *);
/* The answer for b: *json its compact JSON text, *etag its strong ETag
 * (badges.h).  Both stay valid until the next call.  0, or -1 when out
 * of memory. */
int	 bjson_get(const struct badges *b, const char **json,
	    const char **etag);

#endif
