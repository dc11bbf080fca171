/* throttle.h -- how often one user may act (TALLY_WRITE_RATE, docs/INTERFACE.md
 * §1): posts, comments, likes, reposts and follows together, counted per
 * minute in Redis ({u<ID>}:wr:<minute>, one script call).  A burst far
 * beyond a person's is refused with 429 before any lock or write.  With
 * Redis down nothing is counted and nothing refused: the writes
 * themselves are what must not be lost.
 */
#ifndef TALLY_THROTTLE_H
#define TALLY_THROTTLE_H

#include "store/app.h"

#define THROTTLE_DEFAULT	300	/* actions a minute */
#define THROTTLE_TOPICS		20	/* new topics an hour */

/* A limit as the environment gives it: "N", or "N" then unit ("r/m" for
 * TALLY_WRITE_RATE's minute, "r/h" for TALLY_TOPIC_RATE's hour); dflt
 * (logged) for anything else: "30r/h" was taken as 30 a minute. */
long	throttle_parse_rate(const char *v, const char *unit, long dflt);
/* The limit from TALLY_WRITE_RATE (0: none), read once per process. */
long	throttle_rate(void);
/* Counts one action of uid: 0 allowed, else the seconds until the
 * minute ends (the answer's Retry-After). */
int	throttle_write(struct app *, long long uid);
/* Counts one new topic of uid (TALLY_TOPIC_RATE an hour, default
 * THROTTLE_TOPICS; none when TALLY_WRITE_RATE is 0 and it is unset): as
 * throttle_write(). */
int	throttle_topic(struct app *, long long uid);
/* Counts one login of login's through the hash slots' owners' lane
 * (base/hashgate.h): THROTTLE_OWNER_LANE a minute, as throttle_write()
 * ({login:<login>}:ol:<minute>).  Redis down: nothing refused. */
#define THROTTLE_OWNER_LANE	6
int	throttle_owner_lane(struct app *, const char *login);
/* Counts one try at login's password, while its account is locked, from
 * a browser with its device cookie: THROTTLE_DEVICE_TRIES a window of
 * secs ({login:<login>}:dt:<window>).  Redis down: nothing refused. */
#define THROTTLE_DEVICE_TRIES	10
int	throttle_device_tries(struct app *, const char *login, long secs);

#endif
