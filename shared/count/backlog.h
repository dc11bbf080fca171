/* backlog.h -- the counters whose deltas wait in SQLite's counter_backlog
 * (Redis did not take them, or a correction could not be made: settle.h),
 * settled by the worker's jobs process every two seconds.
 *
 * A counter with truth rows is settled as a run would (settle_keys(): a
 * fenced, exact correction that does not need the counter to be quiet);
 * its backlog row goes once settled, if nothing was added to it since
 * (its version).  A row-less counter's row (a view, "<key>#<token>") is
 * applied under its token, once whether or not the write that timed out
 * had been done.
 */
#ifndef TALLY_BACKLOG_H
#define TALLY_BACKLOG_H

#include "store/app.h"

/* Settles up to 500 backlog rows.  How many were settled (0: none could
 * be, or none waits), or -1. */
int	backlog_settle(struct app *);
/* 1 when a row waits in the backlog, 0 when none does, -1 on a SQLite
 * error. */
int	backlog_waits(struct app *);

#endif
