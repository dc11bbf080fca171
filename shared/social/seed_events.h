/* seed_events.h -- the reactions of seeded data, in time order.
 *
 * Follows, likes, comments and reposts are drawn first, then sorted by
 * time and written one after the other with the rows an action writes:
 * the like, comment, repost or follow, its notification for the
 * recipient (never for one's own action) and a like's note_id -- the
 * rows posting.c and follow.c write, so the catalog's recount gives the
 * counters the live actions would have.  Nothing happens before what it
 * reacts to: reactions come after their post's publication, only
 * published posts get them.  Notifications older than read_before are
 * read, the newer ones unread.
 */
#ifndef TALLY_SEED_EVENTS_H
#define TALLY_SEED_EVENTS_H

#include "store/db.h"

enum seed_ev { SEED_FOLLOW, SEED_LIKE, SEED_COMMENT, SEED_REPOST };

struct seed_event {
	long long	t;		/* ms */
	long long	actor;		/* user id */
	long long	target;		/* followee id, or post id */
	long long	owner;		/* followee, or the post's author */
	enum seed_ev	kind;
	int		made;		/* set by seed_events_write(): 1 when
					   its row was new */
};

/* Writes n events (sorted here) inside the caller's transaction;
 * comment bodies are drawn from rs.  *made: rows that were new per kind
 * (a repeated pair adds nothing).  0 or -1 (logged). */
int	seed_events_write(struct db *, struct seed_event *, long n,
	    long long read_before, unsigned long long *rs, long made[4]);

#endif
