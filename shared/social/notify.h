/* notify.h -- notifications: rows in SQLite, unread count by the formula.
 *
 * A like, comment, repost or follow notifies the recipient (never for
 * one's own action), in the same transaction as the action's row.  An
 * unlike, unfollow or comment deletion withdraws its notification in the
 * same transaction, so no stale unread is left behind; a notification
 * about a post deleted later stays (it says so when opened).
 * The unread count is the counter family user_unread: +1 on a new unread
 * notification, -1 when one is read (a conditional UPDATE ... AND
 * is_read = 0: of two concurrent reads one changes a row), -1 when an
 * unread one is deleted; read-all subtracts exactly the rows it changed.
 *
 * Groups (what /notifications lists): likes of one post, reposts of one
 * post, and follows, made within NOTE_GROUP_MS of the group's first, are
 * one group (note_groups; notifications.group_id); a comment is a group
 * of its own.  A group keeps its size and its unread count, moved in the
 * same transaction as the rows they count, by the same rule as any
 * counter (each row change's before and after: created +1/+1, read 0/-1,
 * withdrawn or deleted -1/-(was unread)), so the list never counts rows
 * (a user with 100,000 notifications costs what one with 10 does), and
 * reconciliation recounts them (reconcile.h).  A group whose last member
 * is withdrawn goes.  Read and delete act on the whole group of the id
 * named; a read group that gets a new member is unread again.  The
 * list's order is the newest member's time (last_at); a group that loses
 * members takes its first and last times from those left, so that it
 * goes back to its place, and stays open 12 hours from its first left.
 */
#ifndef TALLY_NOTIFY_H
#define TALLY_NOTIFY_H

#include "count/counters.h"
#include "count/outbox.h"
#include "store/app.h"

/* Inside the caller's open transaction.  notify_add: 1 created (unread;
 * its id in *id when id is not NULL), 0 none (own action; *id 0), -1
 * error.  notify_withdraw: 1 an unread one was removed, 0 none or a read
 * one, -1 error; notify_withdraw_id the same for the one notification id
 * (a like's: likes never go through notify_withdraw).  post/comment 0 =
 * none. */
#define NOTE_GROUP_MS	(12LL * 3600 * 1000)
int	notify_add(struct db *, long long recipient, long long actor,
	    const char *kind, long long post, long long comment,
	    long long *id);
/* The same, made at ms (the demo's past events). */
int	notify_add_at(struct db *, long long recipient, long long actor,
	    const char *kind, long long post, long long comment, long long at,
	    long long *id);
int	notify_withdraw(struct db *, long long recipient, long long actor,
	    const char *kind, long long post, long long comment);
int	notify_withdraw_id(struct db *, long long id, long long recipient,
	    long long actor, const char *kind, long long post,
	    long long comment);

/* The unread counter deltas of n notifications of user (+ created,
 * - read or gone), written to out (at most DELTA_MAX); how many. */
int	notify_deltas(long long user, long long n, struct delta *out);
/* The same deltas appended to an action's outbox (outbox.h). */
void	notify_outbox(struct outbox *, long long user, long long n);

/* The owner's actions, on the whole group of notification id.  Return
 * the number of notifications that went from unread to read (or unread
 * ones deleted), 0 when nothing changed (already read, not the owner's,
 * absent), -1 on error. */
int	notify_read(struct app *, long long id, long long uid);
int	notify_delete(struct app *, long long id, long long uid);
/* notify_read_all: every unread one with an id up to upto and a time up
 * to upto_at (NOTE_ALL: all), and, when snap is not NULL, that the
 * database's snapshot snap saw (a page's: struct notes, noteview.h);
 * opening the list marks what it showed, never one that arrived after
 * the page was built -- not even one that took a shown id again (SQLite
 * gives a deleted newest id to the next row: its time is after the
 * newest shown), nor one whose writer took an id below the newest shown
 * and committed after the page (PostgreSQL: its snapshot did not see
 * it). */
#define NOTE_ALL	9007199254740991LL
int	notify_read_all(struct app *, long long uid, long long upto,
	    long long upto_at, const char *snap);

/* Markers only move forward (max merge).  kind: "notices" (last notice
 * id seen), "news" (ms of the last visit), "author" (key = author id,
 * ms of the last visit to the author's profile).  notify_marker_put() also
 * tells the badge cache (bcache_forget) once SQLite has the marker. */
int	notify_marker_put(struct app *, long long uid, const char *kind, long long key,
	    long long value);

#endif
