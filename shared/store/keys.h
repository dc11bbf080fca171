/* keys.h -- every Redis key name, built in one place.
 *
 * Per-user keys carry the Redis Cluster hash tag {u<ID>}, so the scripts
 * that touch a user's timeline and its marker stay in one slot:
 *   {u7}:home      home timeline, post ids scored by publish time (ms)
 *   {u7}:profile   the user's own published posts
 *   {u7}:followers follower ids scored by follow time
 *   {u7}:following followee ids scored by follow time
 * Set members are ids zero-padded to 16 digits (score ties sort by id).
 *   <key>:ok       marker: "1" when <key> is complete, "b" while rebuilt
 *   <key>:lock     SET NX lock of the one request that rebuilds <key>
 *   {u7}:ss        cached sessions (session.h)
 *   {u7}:bm        cached badge inputs (bcache.h)
 * The deferred work queue is {jobs}:queue with {jobs}:processing, and
 * {jobs}:inline the batches handlers do after answering (fanout.h); the
 * badges' global part is {g}:badge (bcache.h).
 */
#ifndef TALLY_KEYS_H
#define TALLY_KEYS_H

#include <stddef.h>

#define KEY_MAX	64

/* "{u<uid>}:<what>[:<suffix>]"; suffix may be NULL. */
void	key_user(char *out, size_t sz, long long uid, const char *what,
	    const char *suffix);

#define KEY_JOBS_QUEUE		"{jobs}:queue"
#define KEY_JOBS_PROCESSING	"{jobs}:processing"
#define KEY_JOBS_INLINE		"{jobs}:inline"
#define KEY_BADGE_GLOBAL	"{g}:badge"

#endif
