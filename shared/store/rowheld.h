/* rowheld.h -- the rows a host's writers waited for in vain (PostgreSQL).
 *
 * A writer of tally's stopped inside its transaction (SIGSTOP, swapped
 * out, its host cut off from the network) holds the rows it locked until
 * its session ends: the post's row of a like, for up to 30 s
 * (idle_in_transaction_session_timeout, store/sql_pg.c).  Every like,
 * unlike or repost of that post meanwhile waits lock_timeout (5 s) for
 * the row and answers busy.  Each wait holds a writer process: a few
 * actions on a popular post took every writer of the host, and the
 * actions on every other post queued behind them, past nginx's timeout.
 *
 * So a wait that ran out is the host's to know: a table of slots, one
 * per row (a post's id), in a small file of the run directory that every
 * process maps.  A row whose wait ran out is taken as held for
 * ROWHELD_MS; the actions on it meanwhile answer busy at once, as they
 * would have after their wait.  Then one process claims the next try (a
 * compare-and-swap of the slot's end) and waits for the row while the
 * others keep answering busy: a try that gets the row frees the slot for
 * all, one that waits in vain marks it held again.  A claim whose
 * process died lasts its wait and a second more.  Times are
 * CLOCK_MONOTONIC milliseconds; one further ahead than any this module
 * sets (a file kept across a reboot) is taken as passed.  Without the
 * table (not made, not mapped, or full) each process waits, as before.
 * SQLite's writers' lock has its own memory (store/db.h, DB_STUCK_MS).
 */
#ifndef TALLY_ROWHELD_H
#define TALLY_ROWHELD_H

/* A row found held is taken as held this long: as long as the busy
 * answer's Retry-After (web/route.c), so a client that waits as told
 * finds the next try claimable, and a row freed meanwhile answers busy
 * to no such client. */
#define ROWHELD_MS	2000

enum rowheld {
	ROWHELD_GO,		/* not known held: go on */
	ROWHELD_BUSY,		/* held: answer busy without waiting */
	ROWHELD_TRY		/* known held, and the caller claimed the next
				   try: rowheld_mark() or rowheld_free() after */
};

/* Maps the host's table at path (made if missing): 0, or -1 (logged). */
int		rowheld_open(const char *path);
/* What to do with an action on row (> 0). */
enum rowheld	rowheld_check(long long row);
/* A wait for row ran out: held for ROWHELD_MS from now.  1 when it was
 * not known held (the caller logs it once), else 0. */
int		rowheld_mark(long long row);
/* A claimed try got row: free for all. */
void		rowheld_free(long long row);

#endif
