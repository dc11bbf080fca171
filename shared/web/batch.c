/* batch.c -- group commit; see batch.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "base/log.h"
#include "count/outbox.h"
#include "store/app.h"
#include "web/batch.h"
#include "web/req.h"
#include "web/peer.h"
#include "web/resp.h"
#include "web/route.h"

_Static_assert(BATCH_MAX <= SESSION_MANY, "a group's sessions, one statement");

void
batch_listen_init(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl == -1 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1)
		log_warn("listening socket: %s", strerror(errno));
}

int
batch_gather(struct slot *s, const struct route *routes, size_t nroutes,
    unsigned flags, void (*open)(struct slot *, void *), void *arg,
    int *shared, unsigned *kind)
{
	unsigned flag = s[0].st != 0 ? 0 :
	    route_flags(&s[0].r, routes, nroutes) & flags;
	int n = 1, alone = 0, max;

	*shared = 1;
	flag = flag & ROUTE_GROUP ? ROUTE_GROUP : flag & ROUTE_TOGETHER;
	*kind = flag;
	if (flag == 0)
		return 1;
	max = flag == ROUTE_GROUP ? BATCH_MAX : READ_MAX;
	/* non-blocking (batch_listen_init()): fails at once when nothing
	 * more is queued, the usual case */
	while (n < max && peer_accept(&s[n].fr) >= 0) {
		open(&s[n], arg);
		if (s[n].st != 0 ||
		    !route_flagged(&s[n].r, routes, nroutes, flag)) {
			alone = 1;	/* served alone, after the group */
			break;
		}
		*shared = ++n;
	}
	return n + alone;
}

/* The order the group runs its admitted pages in (hit[i] != NULL): by
 * their route's first path argument as a number (a post's id; key[i],
 * 0 for none), arrival order among equals.  Two groups running at once
 * (PostgreSQL) then take the posts' rows in one order, and neither waits
 * for a row the other holds while holding one it wants: no deadlock
 * between them.  The number of pages ordered into ix. */
static int
order(const struct slot *s, const struct route **hit, int n, int *ix,
    long long *key)
{
	int i, j, k = 0;

	for (i = 0; i < n; i++) {
		if (hit[i] == NULL)
			continue;
		key[i] = s[i].r.nargs > 0 ? req_arg_id(&s[i].r, 0) : 0;
		/* insertion: stable, and there are BATCH_MAX at most */
		for (j = k++; j > 0 && key[ix[j - 1]] > key[i]; j--)
			ix[j] = ix[j - 1];
		ix[j] = i;
	}
	return k;
}

/* A lost group's pages (db_group_lost()), run again each alone, as if
 * they had never shared: nothing of the group was kept or sent.  Those
 * answered busy (busy[i]) stay so: nothing of them was written, and each
 * would wait for its post's row again. */
static void
run_alone(struct slot *s, const int *ix, int k, const struct route **hit,
    const int *busy)
{
	int i;

	for (i = 0; i < k; i++) {
		if (busy != NULL && busy[ix[i]])
			continue;
		resp_reset(&s[ix[i]].r);
		route_run(&s[ix[i]].r, hit[ix[i]]);
	}
}

void
batch_run(struct slot *s, int n, const struct route *routes, size_t nroutes,
    void (*answer)(struct slot *))
{
	const struct route *hit[BATCH_MAX];
	struct req *rs[BATCH_MAX];
	struct app *a = s[0].r.app;
	unsigned long long mark;
	long long key[BATCH_MAX], busy_key = 0;
	int kept[BATCH_MAX] = { 0 }, busy[BATCH_MAX] = { 0 };
	int ix[BATCH_MAX];
	int i, k, todo = 0, ok, lost;

	/* 1. the checks, before any lock, their sessions read in one
	 * statement (a round trip on PostgreSQL), the rest of them in one
	 * read transaction (SQLite); the refused are answered */
	for (i = 0; i < n; i++)
		rs[i] = &s[i].r;
	req_identify_many(rs, n);
	db_read_begin(a->db);	/* on PostgreSQL: none, each reads alone */
	for (i = 0; i < n; i++)
		if ((hit[i] = route_admit(&s[i].r, routes, nroutes)) != NULL)
			todo++;
		else
			answer(&s[i]);
	db_read_end(a->db);
	if (todo == 0)
		return;
	k = order(s, hit, n, ix, key);
	db_forget_failure(a->db);
	if (db_group_begin(a->db) == -1) {	/* each its own, as before */
		if (db_busy(a->db))	/* the lock stayed held: not k waits more */
			for (i = 0; i < k; i++)
				route_busy(&s[ix[i]].r);
		else
			run_alone(s, ix, k, hit, NULL);
		for (i = 0; i < k; i++)
			answer(&s[ix[i]]);
		return;
	}
	/* 2. the pages, each in its savepoint, in order.  One that waited
	 * in vain for its post's row (db_busy(): PostgreSQL's lock_timeout;
	 * another transaction holds it) answers busy, and so do the group's
	 * later pages on that post (next in the order), at once: each would
	 * wait as long again, and nginx gives up on the group first. */
	for (i = 0; i < k; i++) {
		if (busy_key != 0 && key[ix[i]] == busy_key) {
			route_busy(&s[ix[i]].r);
			busy[ix[i]] = 1;
			continue;
		}
		mark = db_released(a->db);
		route_run(&s[ix[i]].r, hit[ix[i]]);
		kept[ix[i]] = db_released(a->db) > mark;
		busy[ix[i]] = s[ix[i]].r.status == 503 && db_busy(a->db);
		busy_key = busy[ix[i]] ? key[ix[i]] : 0;
	}
	/* 3. one commit, on PostgreSQL with the kept actions' outbox rows
	 * in its round trip; 4. the deltas of what it made durable */
	outbox_group_end(a);	/* a failure fails the COMMIT */
	lost = db_group_lost(a->db);
	ok = db_group_end(a->db) == 0;
	app_commit_done(a, ok);
	if (lost) {
		log_info("a group of %d requests lost to another transaction: "
		    "each runs again alone", todo);
		run_alone(s, ix, k, hit, busy);
	} else if (!ok)
		log_err("group commit of %d requests failed: none is kept",
		    todo);
	for (i = 0; i < n; i++) {
		if (hit[i] == NULL)
			continue;
		if (!lost && !ok && kept[i]) {
			buf_reset(&s[i].r.head);
			resp_error(&s[i].r, 500, "The change could not be "
			    "saved.");
		} else if (s[i].r.then != NULL)	/* a script's: the counts */
			s[i].r.then(&s[i].r, s[i].r.then_arg);
		answer(&s[i]);
	}
}
