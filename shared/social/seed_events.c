/* seed_events.c -- seeded reactions in time order; see seed_events.h. */
#include <stdlib.h>

#include "base/buf.h"
#include "base/log.h"
#include "social/notify.h"
#include "social/seed_events.h"
#include "store/dbq.h"

static const char *const kinds[] = {
	[SEED_FOLLOW] = "follow", [SEED_LIKE] = "like",
	[SEED_COMMENT] = "comment", [SEED_REPOST] = "repost",
};

static const char *const lines[] = {
	"Love this.", "So true!", "Thanks for sharing.", "Ha, same here.",
	"Where was this?", "Great point.", "Looks delicious.", "Counting on it.",
	"This made my day.", "Can't wait for the next one.",
};

static int
by_time(const void *x, const void *y)
{
	const struct seed_event *a = x, *b = y;

	return a->t < b->t ? -1 : a->t > b->t;
}

/* One statement, stepped to its end: its first row's column 0 in *out
 * (when out is not NULL), 1 when there was a row, 0 none, -1 error. */
static int
run(struct db *d, struct dbq *s, long long *out)
{
	int rc, row = 0;

	while ((rc = dbq_step(s)) == DBQ_ROW)
		if (!row++ && out != NULL)
			*out = dbq_i64(s, 0);
	dbq_done(s);
	if (rc != DBQ_DONE) {
		log_err("seed: %s", dbq_errmsg(d));
		return -1;
	}
	return row > 0;
}

/* The row of one event: 1 new, 0 it existed, -1 error; *cid: a new
 * comment's id. */
static int
event_row(struct db *d, const struct seed_event *e, unsigned long long *rs,
    long long *cid)
{
	static const enum stmt ins[] = {
		[SEED_FOLLOW] = STMT_FOLLOW_INSERT, [SEED_LIKE] = STMT_LIKE_INSERT,
		[SEED_COMMENT] = STMT_COMMENT_INSERT,
		[SEED_REPOST] = STMT_REPOST_INSERT,
	};
	struct dbq *s = dbq_stmt(d, ins[e->kind]);

	if (s == NULL)
		return -1;
	if (e->kind == SEED_FOLLOW) {
		dbq_bind_i64(s, 1, e->actor);
		dbq_bind_i64(s, 2, e->target);
		dbq_bind_i64(s, 3, e->t);
		return run(d, s, NULL);
	}
	dbq_bind_i64(s, 1, e->target);
	dbq_bind_i64(s, 2, e->actor);
	if (e->kind == SEED_COMMENT) {
		dbq_bind_text(s, 3, lines[*rs % (sizeof(lines) /
		    sizeof(lines[0]))], -1);
		*rs = *rs * 6364136223846793005ULL + 1442695040888963407ULL;
		dbq_bind_i64(s, 4, e->t);
		return run(d, s, cid);
	}
	dbq_bind_i64(s, 3, e->t);
	/* a like's or repost's insert has no result row: its changes() */
	return run(d, s, NULL) == -1 ? -1 : dbq_changes(d) > 0;
}

static int
notify(struct db *d, const struct seed_event *e, long long cid)
{
	struct dbq *s;
	long long id = 0;

	/* grouped as a live one is (social/notify.h), at the event's time */
	if (notify_add_at(d, e->owner, e->actor, kinds[e->kind],
	    e->kind == SEED_FOLLOW ? 0 : e->target,
	    e->kind == SEED_COMMENT ? cid : 0, e->t, &id) != 1) {
		log_err("seed: %s", dbq_errmsg(d));
		return -1;
	}
	if (e->kind != SEED_LIKE)
		return 0;
	/* a like remembers its notification, as posting.c does */
	if ((s = dbq_stmt(d, STMT_LIKE_NOTE)) == NULL)
		return -1;
	dbq_bind_i64(s, 1, e->target);
	dbq_bind_i64(s, 2, e->actor);
	dbq_bind_i64(s, 3, id);
	return run(d, s, NULL) == -1 ? -1 : 0;
}

int
seed_events_write(struct db *d, struct seed_event *evs, long n,
    long long read_before, unsigned long long *rs, long made[4])
{
	struct dbq *s;
	long long cid = 0, first = 0;
	long i;
	int rc;

	made[0] = made[1] = made[2] = made[3] = 0;
	qsort(evs, (size_t)n, sizeof(*evs), by_time);
	if ((s = dbq_stmt(d, STMT_SEED_NOTE_MAX)) == NULL || run(d, s, &first)
	    == -1)
		return -1;
	for (i = 0; i < n; i++) {
		struct seed_event *e = &evs[i];

		if ((rc = event_row(d, e, rs, &cid)) == -1)
			return -1;
		if ((e->made = rc) == 0)
			continue;
		made[e->kind]++;
		if (e->actor != e->owner && notify(d, e, cid) == -1)
			return -1;
	}
	/* what came before read_before was seen */
	if ((s = dbq_stmt(d, STMT_SEED_NOTES_READ)) == NULL)
		return -1;
	dbq_bind_i64(s, 1, first);
	dbq_bind_i64(s, 2, read_before);
	if (run(d, s, NULL) == -1)
		return -1;
	/* and their groups' unread counts follow */
	if ((s = dbq_stmt(d, STMT_SEED_GROUPS_UNREAD)) == NULL)
		return -1;
	dbq_bind_i64(s, 1, first);
	return run(d, s, NULL) == -1 ? -1 : 0;
}
