/* cname.h -- where a counter lives in Redis (the layout is in cstore.h):
 * its bucket, its live hash and field, its field in the bucket's pending
 * hash, and back from a pending field to the counter.
 *
 * A counter's bucket is a multiplicative hash of its object's id, except
 * a post's: its counters follow the post's author (delta.owner), whose
 * own counters a like, a repost or a comment moves in the same change.
 * An author never changes, so neither does a post's bucket.  Every post
 * delta and every reader's counter key carries its owner (the caller has
 * the post row).  What was written before owners existed comes back in
 * two places only: an outbox row, whose post deltas the drain gives
 * their author (cname_owners()), and a pending field "p<id>:<field>",
 * which the flusher takes where it lies (taken.c).
 */
#ifndef TALLY_CNAME_H
#define TALLY_CNAME_H

#include <stddef.h>

#include "count/counters.h"
#include "store/app.h"
#include "store/db.h"

#define CSTORE_BUCKETS	1024	/* cname_bucket() gives 10 bits */

/* The bucket of a counter. */
int	cname_bucket(const struct delta *);
/* A user's cached session ("ss") or badge inputs ("bm"), in the slot of
 * the user's counters (key.h), so that a badge poll is one node's. */
void	cname_user_cache(long long uid, const char *what, char *out,
	    size_t sz);
/* A user's live badges flag, "{c<B>}:u<uid>:lv" (store/liveq.h): set while
 * a stream of theirs is open, in the slot of their counters, so that a
 * change of their counts asks it on the node it already writes. */
void	cname_live_flag(long long uid, char *out, size_t sz);
/* A bucket's own keys: what is "pending", "inflight" or "meta". */
void	cname_bucket_key(int bucket, const char *what, char *out, size_t sz);
/* The live hash key and field of a counter. */
/* The ids of every object of kind obj whose live counters Redis holds
 * (a SCAN of their hashes), unsorted, into *ids (malloc'd; *n of them).
 * 0, or -1 when Redis failed. */
int	cname_live_objects(struct app *, enum obj obj, long long **ids,
	    size_t *n);
void	cname_of(const struct delta *, char *hash, size_t hsz, char *field,
	    size_t fsz);
/* The counter's field in its bucket's pending hash. */
void	cname_pfield(const struct delta *, char *out, size_t sz);
/* Every Redis name of one counter: its live hash and field, its field
 * in the pending and inflight hashes, and its bucket's own keys. */
struct cname_keys {
	char	live[48], field[48], pfield[64];
	char	pending[32], inflight[32], meta[32], seq[32];
	char	fence[32], flog[32];	/* settle.h */
	char	settled[32];	/* settle.c: the backlog a correction holds */
};
void	cname_keys(const struct delta *, struct cname_keys *);
/* A bucket's own keys (pending, inflight, meta, seq, fence, flog,
 * settled) into k. */
void	cname_bucket_keys(int bucket, struct cname_keys *k);

/* The counter of a pending field (exactly what cname_pfield writes, of
 * len bytes, or a post's "p<id>:<field>" without its owner, which leaves
 * owner 0); d->d is 0.  0, or -1 when not a counter. */
int	cname_parse(const char *pfield, size_t len, struct delta *);

/* 1 when d is a post's counter whose owner is not known. */
int	cname_ownerless(const struct delta *);
/* Gives every ownerless post counter of ds its owner, the post's author
 * from the posts table (a post that does not exist keeps 0).  0, or -1
 * on a SQL error. */
int	cname_owners(struct db *, struct delta *ds, int n);
/* The author of post id into *owner (0 when there is no such post).
 * 0, or -1 on a SQL error. */
int	cname_post_owner(struct db *, long long id, long long *owner);

#endif
