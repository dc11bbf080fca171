/* cstore.h -- live counter values in Redis, with their pending deltas.
 *
 * Every object has one Redis hash holding its counters:
 *   {u<ID>}:n   user:  posts followers following likes
 *   {u<ID>}:nt  user per topic:  posts:<TID> rating:<TID>
 *   {p<ID>}:n   post:  likes comments reposts views
 *   {t<ID>}:n   topic: posts
 * In that hash, field F is the live value (present once loaded), "~F"
 * the pending delta not yet in SQLite, "^B:F" the part of it that flush
 * batch B has taken, and "~v" a version that every take and ack bumps.
 * A change is one Lua script per hash (so one slot under Redis Cluster):
 * live += d if loaded, pending += d.  The hash is first added to the
 * dirty set {flush}:dirty (SADD before the script, so a crash between
 * leaves at worst a clean hash marked dirty).
 *
 * A live value that is missing is loaded as  counters row + pending +
 * in-flight batches SQLite has not applied yet, by a script that refuses
 * (and the reader retries) if a flush touched the hash meanwhile.
 */
#ifndef TALLY_CSTORE_H
#define TALLY_CSTORE_H

#include "app.h"
#include "counters.h"

/* The hash key and field of a counter. */
void	cstore_name(const struct delta *, char *hash, size_t hsz, char *field,
	    size_t fsz);
/* The counter of a hash key and field; 0, or -1 when not a counter. */
int	cstore_parse(const char *hash, const char *field, struct delta *);

/* Applies up to 2 x DELTA_MAX deltas (from counter_deltas) to Redis.  0, or -1 when Redis
 * failed: the deltas are then missing from Redis until reconciliation
 * (the truth rows are committed). */
int	cstore_apply(struct app *, const struct delta *, int n);

/* Reads n counters: each d field is replaced by the value.  Loads the
 * missing ones.  With Redis down, values come from the counters table
 * (without the unflushed part).  0, or -1 on a SQLite error. */
int	cstore_get(struct app *, struct delta *, int n);

/* The SQLite counters value (0 when absent), or -1 on error via *err. */
long long cstore_durable(struct db *, enum family, long long k1,
	    long long k2, int *err);

#endif
