/* hashgate.h -- at most a fixed number of password hashes at a time
 * across every process of a machine.
 *
 * argon2id is made to be dear: a login or signup flood would otherwise
 * keep every process of the tally-web pool hashing, and /healthz and the
 * pages behind it would wait.  A hash first takes one of TALLY_HASH_SLOTS
 * slots (default 1: a two-process pool keeps one process for everything
 * else), each an flock(2) on $RUN_DIR/hash-slot.<i>; with every slot taken
 * the request is answered 503 with Retry-After at once, without hashing.
 * A process that dies drops its lock with its descriptor.
 */
#ifndef TALLY_HASHGATE_H
#define TALLY_HASHGATE_H

#include "base/cfg.h"

/* A slot: its descriptor (>= 0), or -1 when every slot is taken (or the
 * slot files cannot be opened: then nothing is held back, -2). */
int	hashgate_enter(const struct cfg *);
/* The owners' lane: one slot more (hash-slot.owner), for a login from a
 * browser that logged in to the account before (its device cookie) when
 * every slot is taken.  A flood of logins for names that need no cookie
 * (made up, or anyone's) filled the slots, and every login of the site
 * answered 503, its owners' too: a lockout for the price of a few
 * addresses.  Its caller bounds each account's use of it (a flood of
 * one's own account's logins with its own cookie would fill it too).
 * As hashgate_enter(). */
int	hashgate_enter_owner(const struct cfg *);
/* Gives the slot back (fd < 0: nothing to give). */
void	hashgate_leave(int fd);

#endif
