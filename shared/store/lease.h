/* lease.h -- which worker runs the site's jobs.
 *
 * With handler hosts every host runs a worker, and the jobs (the flush,
 * reconciliation runs and their schedule, the drift check, fan-out,
 * repairs after an outage or a new Redis topology) are the site's, not
 * the host's: one worker at a time runs them.  It holds a lease, one row
 * in the database (worker_lease), for LEASE_MS and renews it while it
 * works; the others stand by and take it once it expires (a host that
 * died) or is given back (a worker that stops).  The check is one
 * statement, atomic on SQLite and PostgreSQL alike.  A worker that
 * stalls longer than the lease (stopped, swapped out) finds it gone at
 * its next check; what it did meanwhile is what two workers may do at
 * once anyway (a flush beside tallyctl flush: batches apply once by id;
 * a run claimed by compare-and-set).  On SQLite (one machine, one
 * worker) there is no lease to take: lease_hold() answers 1 and writes
 * nothing.  Expiry is by wall clock: hosts keep their clocks in step.
 */
#ifndef TALLY_LEASE_H
#define TALLY_LEASE_H

struct db;

#define LEASE_MS	5000

/* 1 when owner holds the lease now (taken, or renewed for LEASE_MS), 0
 * when another worker does, -1 on a database error. */
int	lease_hold(struct db *, const char *owner, long long now_ms);
/* Gives the lease back (a worker that stops). */
void	lease_drop(struct db *, const char *owner);

#endif
