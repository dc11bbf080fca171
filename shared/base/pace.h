/* pace.h -- at most one event per key in a gap of time: a table of when
 * each key was last served, open addressing on the key (a slot older
 * than its gap is free for any other key, unless its key waits).
 *
 * tally-live (handlers/live.c) publishes a user's badges at most once in
 * LIVE_GAP_MS; a change that comes sooner waits, its slot marked, until
 * the gap ends.  Pure: the unit tests drive it with their own clock.
 */
#ifndef TALLY_PACE_H
#define TALLY_PACE_H

#define PACE_SLOTS	65536	/* keys remembered (a power of 2) */
#define PACE_PROBES	64	/* slots a key may take, from its hash on */

struct pace_slot {
	long long	key;
	long long	at;		/* last served, ms; 0: never */
	int		waiting;	/* its key waits for the gap's end */
};

struct pace {
	struct pace_slot	s[PACE_SLOTS];
	long long		gap_ms;
};

/* key's slot: its own wherever it lies on the key's way, else the first
 * free one there, taken for it (at 0); NULL when every slot on its way
 * is taken (serve the key at once, unpaced). */
struct pace_slot	*pace_slot(struct pace *, long long key, long long now);

#endif
