/* fault.h -- fault points that tests aim at (TALLY_FAULT).
 *
 * A fault point is a named place in the code where a crash or a stall
 * matters to tally's promise: between a commit and what must follow it.
 * Production never sets TALLY_FAULT, and a point then costs one pointer
 * test.  Tests set
 *     TALLY_FAULT="NAME:ACTION[:TIMES],..."
 * ACTION is "kill" (SIGKILL to the process itself, as kill -9 would),
 * "stop" (SIGSTOP: the test decides when it goes on, or kills it) or
 * "sleep=MS".  TIMES (default 1) bounds how often the point fires in the
 * whole run, across every process and restart: each firing appends one
 * byte to $RUN_DIR/faults/NAME before acting, so a test reads that
 * file's size to know how many times it fired, and a supervised process
 * that restarts makes progress once TIMES is used up.
 *
 * The points:
 *   flush-taken    a flush batch took its buckets (their deltas in
 *                  flight), not yet applied to SQLite (flush.c)
 *   flush-ack      a flush batch is committed to SQLite, not yet acked
 *                  in Redis (taken.c)
 *   outbox-commit  an action took its outbox row's id and has not yet
 *                  committed: another writer's later id commits first
 *                  on PostgreSQL (outbox.c)
 *   lb-rows        a leaderboard's rebuild read a row of the counters
 *                  table, more to come (count/lb.c): its connection lost
 *                  meanwhile
 *   outbox-floor   a drain applied its rows up to its cutoff, not yet
 *                  deleted them nor raised the floor (outbox.c): another
 *                  drain, of a later cutoff, meanwhile
 *   action-delta   an action (like, follow, comment...) is committed, its
 *                  counter deltas not yet sent to Redis (outbox.c)
 *   action-backlog an action's deltas went to Redis, which did not take
 *                  them all (one node of a cluster refusing writes); the
 *                  rest not yet moved to the SQLite backlog (outbox.c)
 *   reconcile-loaded  reconciliation read a family's truth and durable
 *                  values, not yet the Redis state it compares them to
 *                  (reconcile.c)
 *   reconcile-rows reconciliation found rows that drifted (like counts,
 *                  notification groups) in a chunk, and has not yet
 *                  locked the chunk to repair it (reconcile.c)
 *   reconcile-fix  reconciliation fenced a key and read its truth, and
 *                  has not yet applied the correction (settle.c)
 *   settle-backlog a correction is in Redis, the backlog rows it settled
 *                  not yet deleted (settle.c)
 *   run-queued     tallyctl reconcile queued its run and has not yet
 *                  claimed it: the worker may take it first (tallyctl.c)
 *   view-delta     a view, its one script (the viewer's key and the
 *                  count) not yet sent; an anonymous one's budget taken
 *                  (capply.c)
 *   login-checked  a login's password matched, its session not yet
 *                  inserted (handlers/web.c): a password change meanwhile
 *   signup-session a signup's account is committed, its session not yet
 *                  inserted (handlers/web.c): a failure after it is not
 *                  "nothing was changed"
 *   live-open      a live stream's session is checked and its first
 *                  event published, the stream not yet handed to nginx
 *                  (handlers/notify.c): a logout meanwhile
 *   pcache-rebuild a cached profile's rebuild read its row, not yet put
 *                  it in Redis (social/pcache.c): a rename meanwhile
 *   unfollow-scored an unfollow is committed and its home's new places
 *                  read, not yet put (social/follow.c): a follow of the
 *                  pair on another host meanwhile
 *   seed-rows      a seed's rows are committed, their counters not yet
 *                  written (social/seed.c): a first start's demo killed
 *                  there
 *   unrepost-scored an unrepost's batch read its followers' places of the
 *                  post, not yet put (social/fanout.c): a new repost
 *                  meanwhile, its add made first
 */
#ifndef TALLY_FAULT_H
#define TALLY_FAULT_H

#include "base/cfg.h"

/* Reads TALLY_FAULT (once per process, at app_open). */
void	fault_init(const struct cfg *);
/* Fires the fault named name if TALLY_FAULT aims at it and it has
 * fired fewer than TIMES times; returns when the action is a stall. */
void	fault_point(const char *name);
/* 1 when TALLY_FAULT aims at the point name (fired or not): for a path
 * that would leave no place between the steps the point stands between
 * (outbox.c). */
int	fault_aimed(const char *name);

#endif
