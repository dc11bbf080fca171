/* key.h -- every Redis key name, built in one place.
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
 * The deferred work queue is {jobs}:queue with {jobs}:processing, and
 * {jobs}:inline the batches handlers do after answering (fanout.h); the
 * badges' global part is {g}:badge on one Redis, and on a cluster one
 * copy in each sixteenth of the slot space, {g42}:badge ... {g12}:badge,
 * so that every node holds one (bcache.h); {g}:live:q and {g}:live, what
 * the live badges tell and to whom (liveq.h).
 * Counters live in 1024 buckets, each its own hash tag (cstore.h):
 *   {c<B>}:<what>      a bucket's pending, inflight, meta, outbox
 *   {c<B>}:<tag><id>   the live values of one object ("p42", "u7")
 * What a badge poll reads of user 7 shares the slot of 7's counters, B
 * the bucket of user 7 (cname.h), so that a poll is one node's work:
 *   {c<B>}:u7:ss   cached sessions (session.h)
 *   {c<B>}:u7:bm   cached badge inputs (bcache.h)
 *   {c<B>}:u7:lv   user 7 has a live badges stream open (liveq.h)
 * Flush batches: {flush}:seq (ids), {flush}:lock:<batch> (fbatch.h).
 * Views seen in the last 30 minutes: {c<B>}:v<post>:u<uid> and
 * {c<B>}:v<post>:a<addr>, B the bucket of the post's views counter; an
 * anonymous address's budget {va<addr>}.
 * Leaderboards: {lb}:<field>, {lb}:rating:<topic>, each with :ok,
 * :lock, :tmp and :touched (lb.h).  Profiles: {login:<login>} and its
 * :lock (pcache.h).  Totals for /metrics: {metrics}:drift and
 * {metrics}:cache.  {tally}:gen: this Redis has been filled (worker).
 */
#ifndef TALLY_KEY_H
#define TALLY_KEY_H

#include <stddef.h>

#define KEY_MAX	64

/* "{u<uid>}:<what>[:<suffix>]"; suffix may be NULL. */
void	key_user(char *out, size_t sz, long long uid, const char *what,
	    const char *suffix);

/* "<key>:<suffix>": a marker, lock or scratch key of key. */
void	key_sub(char *out, size_t sz, const char *key, const char *suffix);
/* "{c<bucket>}:<what>": a counter bucket's own keys. */
void	key_bucket(char *out, size_t sz, int bucket, const char *what);
/* The SCAN pattern of every object's counters of one kind: "{c*}:<tag>*"
 * (it matches more than them: key_counters_parse() tells). */
void	key_counters_pattern(char *out, size_t sz, const char *tag);
/* The object id of key when it is exactly "{c<B>}:<tag><id>": 0, or -1. */
int	key_counters_parse(const char *key, const char *tag, long long *id);
/* "{c<bucket>}:<tag><id>": an object's live counters. */
void	key_counters(char *out, size_t sz, int bucket, const char *tag,
	    long long id);
/* "{c<bucket>}:u<uid>:<what>": a user's cached session or badge
 * inputs, in the slot of the user's counters (bucket: theirs). */
void	key_user_cache(char *out, size_t sz, int bucket, long long uid,
	    const char *what);
/* "{flush}:lock:<batch>": alive while batch's flusher is. */
void	key_flush_lock(char *out, size_t sz, long long batch);
/* "{lb}:<field>", or "{lb}:rating:<topic>" when topic > 0. */
void	key_board(char *out, size_t sz, const char *field, long long topic);
/* "{login:<login>}": a cached profile. */
void	key_login(char *out, size_t sz, const char *login);

/* A view seen in the last 30 minutes is "{c<B>}:v<post>:u<uid>" or, an
 * anonymous address's, "{c<B>}:v<post>:a<address>", in the slot of the
 * view's counter (posting.h posting_view); KEY_VIEW_MAX long. */
#define KEY_VIEW_MAX	96
/* "{va<address>}": how many posts an anonymous address's views counted
 * on in the last 30 minutes (its budget, posting.h). */
void	key_view_addr(char *out, size_t sz, const char *addr);

#define KEY_JOBS_QUEUE		"{jobs}:queue"
#define KEY_JOBS_PROCESSING	"{jobs}:processing"
#define KEY_JOBS_INLINE		"{jobs}:inline"
/* Follows and unfollows whose timelines are not done yet (follow.h). */
#define KEY_FOLLOW_NOTES	"{jobs}:follows"
#define KEY_BADGE_GLOBAL	"{g}:badge"
/* The live badges' queue and open streams (liveq.h). */
#define KEY_LIVE_QUEUE		"{g}:live:q"
#define KEY_LIVE_SET		"{g}:live"
/* On a cluster: copy k (0 <= k < KEY_BADGE_COPIES) of the badges' global
 * part, whose slot lies in the k-th sixteenth of the slot space. */
#define KEY_BADGE_COPIES	16
void	key_badge_copy(char *out, size_t sz, int k);
#define KEY_METRICS_DRIFT	"{metrics}:drift"
#define KEY_METRICS_CACHE	"{metrics}:cache"
#define KEY_GEN			"{tally}:gen"
/* Patterns (SCAN) of every timeline's and every board's marker. */
#define KEY_TIMELINE_MARKS	"{u*}:*:ok"
/* Every cached profile and its rebuild's lock (social/pcache.h). */
#define KEY_LOGIN_ALL		"{login:*"
#define KEY_BOARD_MARKS		"{lb}:*:ok"

#endif
