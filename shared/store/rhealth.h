/* rhealth.h -- what a host's processes know together about each Redis
 * server: that it stopped answering, and when the next try is due.
 *
 * A process that finds a Redis server down (a command timed out, a
 * connect failed) leaves it alone for a backoff (rconn.h).  Alone, each
 * process learns that for itself, with one timeout of its own: a host
 * runs a dozen handler processes, and while Redis hangs a request that
 * lands on a process which has not yet paid its timeout, or whose
 * backoff just ended, waits 250 ms for nothing.  With three readers a
 * pool, about half the pages served during an outage waited so.
 *
 * So the backoff is the host's: a table of one slot per server address,
 * in a small file of the run directory that every process maps
 * (MAP_SHARED).  The first failure marks the server down and starts the
 * backoff (250 ms, doubling at each failed try, at most 4 s); while it
 * runs, every process that has not had a reply since the mark skips the
 * server and falls back as it would on its own failure.  When the
 * backoff ends, one process (the one whose compare-and-swap claims the
 * try) sends the next command; the others keep skipping while it is in
 * flight, and a reply clears the mark for all.  A try that is claimed
 * and never made (its process killed) holds the others back for one
 * command timeout and a little more, then the next one claims it.  A
 * mark says how long the failed wait was: a process whose commands wait
 * longer (the worker's 5 s, made for an AOF rewrite, beside a request's
 * 250 ms) is not held back by it, since for it the server may only be
 * slow; a connect that failed holds everyone back.
 *
 * The slots are read and written with atomic loads, stores and one
 * compare-and-swap; a slot's fields are not updated together, and two
 * failures at once may both take the backoff a step further: harmless,
 * it is bounded.  Times are CLOCK_MONOTONIC milliseconds (one clock for
 * the whole machine); a time further ahead than any backoff can reach
 * (a file kept across a reboot) is taken as passed.  Without the table
 * (the file could not be made or mapped) a process keeps its own
 * backoff only, as it always does besides.
 */
#ifndef TALLY_RHEALTH_H
#define TALLY_RHEALTH_H

struct rhealth;

/* Maps the host's table at path (made if missing): 0, or -1 (logged;
 * the process goes on with its own backoffs). */
int		 rhealth_open(const char *path);
/* The slot of a server's address, taken if new; NULL without a table,
 * for "" or when the table is full. */
struct rhealth	*rhealth_slot(const char *addr);

/* 1 when the caller should leave the server alone now: it was marked
 * down after the caller's last reply (answered_ms, monotonic) by a wait
 * no shorter than the caller's (timeout_ms), and its backoff runs or
 * another process's try is in flight.  0 to go on: up, or this caller
 * has just claimed the try (it will last timeout_ms at most), and then
 * *try_until is when the claim ends: until then the caller goes on
 * without asking again (its connect and its command are the one try).
 * try_until NULL: a question only, claiming nothing (0 when a try may
 * be made).  h may be NULL (0). */
int		 rhealth_skip(struct rhealth *h, long long answered_ms,
		    int timeout_ms, long long *try_until);
/* A command that waited timeout_ms failed (RHEALTH_ANY: a connect):
 * mark the server down. */
#define RHEALTH_ANY	0x7fffffff
void		 rhealth_failed(struct rhealth *h, int timeout_ms);
/* The server answered: clear the mark, if there is one. */
void		 rhealth_answered(struct rhealth *h);
/* 1 while the server is marked down: a failure, and no reply since
 * (backoff over or not).  h NULL: 0. */
int		 rhealth_marked(const struct rhealth *h);
/* When the server last answered after being marked down (monotonic
 * ms; 0 never): a process whose own backoff began before it may end
 * that backoff early. */
long long	 rhealth_up_ms(const struct rhealth *h);

/* The server answers, and refuses writes: out of memory under the
 * noeviction policy (OOM), a replica (READONLY), a failed save or AOF
 * write (MISCONF).  Its live counter values then fall behind what SQLite
 * holds (the deltas it refused wait in the backlog: count/cstore.h), so
 * a host's processes read counters another way while a write was refused
 * within RHEALTH_REFUSED_MS (renewed by each refusal, and by the worker
 * every 2 s while the deltas refused wait in the backlog, so that it
 * lasts until they are settled; NOREPLICAS, too few replicas to write
 * to, is a refusal as well).  h may be NULL (nothing; 0). */
#define RHEALTH_REFUSED_MS	5000
void		 rhealth_refused(struct rhealth *h);
int		 rhealth_refusing(const struct rhealth *h);

#endif
