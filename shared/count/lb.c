/* lb.c -- leaderboards; see lb.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "base/fault.h"
#include "base/log.h"
#include "count/cstore.h"
#include "count/lb.h"
#include "store/dbq.h"
#include "store/key.h"
#include "store/rebuild.h"

static const struct {
	const char	*by;
	enum family	 fam;
} boards[] = {
	{ "posts", FAM_USER_POSTS },
	{ "followers", FAM_USER_FOLLOWERS },
	{ "following", FAM_USER_FOLLOWING },
	{ "likes", FAM_USER_LIKES },
	{ "rating", FAM_USER_LIKES },
};

enum family
lb_family(const char *by)
{
	size_t i;

	for (i = 0; i < sizeof(boards) / sizeof(boards[0]); i++)
		if (strcmp(boards[i].by, by) == 0)
			return boards[i].fam;
	return FAM__MAX;
}

static void
board_key(enum family fam, long long topic, char *out, size_t sz)
{
	key_board(out, sz, families[fam].field,
	    fam == FAM_UT_RATING ? topic : 0);
}

int
lb_ranked(enum family f)
{
	return f == FAM_USER_POSTS || f == FAM_USER_FOLLOWERS ||
	    f == FAM_USER_FOLLOWING || f == FAM_USER_LIKES || f == FAM_UT_RATING;
}

/* KEYS: board, marker, touched.  ARGV: score, member, ...  A complete
 * board ("1") takes the values; one being rebuilt ("b") also remembers
 * the members, which the rebuild sets again from SQLite once swapped in
 * (its own snapshot may predate them); no board: nothing to do. */
static struct rds_script lb_set_lua = { .src =
	"#!lua\n"
	"local m = redis.call('GET', KEYS[2])\n"
	"if m ~= '1' and m ~= 'b' then return 0 end\n"
	"for i = 1, #ARGV, 2 do\n"
	"  if tonumber(ARGV[i]) > 0 then redis.call('ZADD', KEYS[1], ARGV[i], ARGV[i+1])\n"
	"  else redis.call('ZREM', KEYS[1], ARGV[i+1]) end\n"
	"  if m == 'b' then redis.call('SADD', KEYS[3], ARGV[i+1]) end\n"
	"end\n"
	"return 1\n" };

struct lb_entry {
	enum family	fam;
	long long	topic, user, value;
};

static int
entry_cmp(const void *x, const void *y)
{
	const struct lb_entry *a = x, *b = y;

	if (a->fam != b->fam)
		return a->fam < b->fam ? -1 : 1;
	if (a->topic != b->topic)
		return a->topic < b->topic ? -1 : 1;
	return 0;
}

#define LB_PAIRS	200	/* members per script call */

int
lb_update(struct app *a, const struct delta *ds, const long long *vals, int n)
{
	char board[48], ok[56], touched[64];
	char (*num)[24] = xcalloc(2 * LB_PAIRS, sizeof(*num));
	const char *keys[3], *args[2 * LB_PAIRS];
	struct lb_entry *e = xcalloc((size_t)n + 1, sizeof(*e));
	int i, j, k, m = 0, queued = 0, rc = -1;

	for (i = 0; i < n; i++) {
		if (!lb_ranked(ds[i].fam))
			continue;
		e[m].fam = ds[i].fam;
		e[m].topic = ds[i].k2;
		e[m].user = ds[i].k1;
		/* Given values are the truth, negative ones too: the flusher
		 * calls this while its apply thread holds the connection. */
		if (vals != NULL)
			e[m].value = vals[i];
		else if (cstore_durable(a->db, &ds[i], &e[m].value) == -1)
			goto out;
		m++;
	}
	qsort(e, (size_t)m, sizeof(*e), entry_cmp);
	for (i = 0; i < m; i = j) {
		board_key(e[i].fam, e[i].topic, board, sizeof(board));
		key_sub(ok, sizeof(ok), board, "ok");
		key_sub(touched, sizeof(touched), board, "touched");
		keys[0] = board;
		keys[1] = ok;
		keys[2] = touched;
		for (j = i, k = 0; j < m && k < LB_PAIRS &&
		    entry_cmp(&e[i], &e[j]) == 0; j++, k++) {
			snprintf(num[2 * k], sizeof(num[0]), "%lld", e[j].value);
			snprintf(num[2 * k + 1], sizeof(num[0]), "%016lld",
			    e[j].user);
			args[2 * k] = num[2 * k];
			args[2 * k + 1] = num[2 * k + 1];
		}
		if (rds_append_eval(a->rds, &lb_set_lua, 3, keys, 2 * k,
		    args) == -1)
			break;
		queued++;
	}
	rc = rds_collect(a->rds, queued) == 0 && i >= m ? 0 : -1;
out:
	free(e);
	free(num);
	return rc;
}

/* KEYS: tmp, board, marker, touched, lock; ARGV: the rebuilder's token.
 * Swaps the filled board in and marks it complete in one step (all share
 * the {lb} hash tag); returns the members the flusher changed meanwhile,
 * 0 when the lock is no longer the token's (rebuild.h), or 1 when the
 * marker was dropped meanwhile (lb_invalidate(): the counters were
 * rewritten after the rows were read): the filled copy is dropped, not
 * marked whole (it was, stale, until the next invalidation). */
static struct rds_script lb_swap_lua = { .src =
	"#!lua\n"
	"if redis.call('GET', KEYS[5]) ~= ARGV[1] then\n"
	"  redis.call('DEL', KEYS[1])\n"
	"  return 0\n"
	"end\n"
	"if redis.call('GET', KEYS[3]) ~= 'b' then\n"
	"  redis.call('DEL', KEYS[1], KEYS[4])\n"
	"  return 1\n"
	"end\n"
	"if redis.call('EXISTS', KEYS[1]) == 1 then\n"
	"  redis.call('RENAME', KEYS[1], KEYS[2])\n"
	"else redis.call('DEL', KEYS[2]) end\n"
	"redis.call('SET', KEYS[3], '1')\n"
	"local t = redis.call('SMEMBERS', KEYS[4])\n"
	"redis.call('DEL', KEYS[4])\n"
	"return t\n" };

/* The counters table's rows of a board: the statement, bound (a topic's
 * rating: its authors' only). */
static struct dbq *
board_rows(struct app *a, enum family fam, long long topic)
{
	struct dbq *s = dbq_stmt(a->db, fam == FAM_UT_RATING ?
	    STMT_COUNTERS_OF_TOPIC : STMT_COUNTERS_OF_FAMILY);

	if (s != NULL) {
		dbq_bind_text(s, 1, families[fam].name, -1);
		if (fam == FAM_UT_RATING)
			dbq_bind_i64(s, 2, topic);
	}
	return s;
}

/* The user of board_rows()' row and its value: 1, or 0 when the row is
 * not the board's (another topic, nothing counted, a key unread). */
static int
board_row(struct dbq *s, enum family fam, long long topic, long long *uid,
    long long *v)
{
	long long k2 = 0;

	*v = dbq_i64(s, 1);
	return sscanf(dbq_text(s, 0), "%lld:%lld", uid, &k2) >= 1 &&
	    (fam != FAM_UT_RATING || k2 == topic) && *v > 0;
}

/* Refills a board from the counters table: into a temporary key, then
 * swapped in with its marker, so no reader sees a half-filled board.
 * The temporary key is the rebuild's own (its token in the name): a
 * rebuild whose lock lapsed mid-way (stalled past its 10 s) went on
 * filling the one key a second rebuild had begun again, and the second
 * swapped in the first's older rows beside its own (a member gone to 0
 * stood on the board, marked whole).  A key left by a rebuild that died
 * lapses after an hour. */
static int
rebuild(struct app *a, enum family fam, long long topic, const char *board)
{
	char ok[56], lock[56], tmp[56 + REBUILD_TOKEN], touched[64];
	char member[24], score[24], tok[REBUILD_TOKEN];
	const char *swap[5], *clear[1] = { touched }, *arg[1] = { tok };
	struct delta dl;
	size_t j;
	rds_reply *rep;
	struct dbq *s;
	long long k1, v;
	int got, queued = 0, k, step = DBQ_DONE, bad = 0, expires = 0;

	key_sub(ok, sizeof(ok), board, "ok");
	key_sub(lock, sizeof(lock), board, "lock");
	key_sub(touched, sizeof(touched), board, "touched");
	/* "b": readers wait, the flusher notes whom it changes meanwhile
	 * (the lock, the touched set cleared and the marker at once). */
	if ((got = rebuild_begin(a->rds, lock, 10000, ok, clear, 1, tok)) != 1)
		return got;
	snprintf(tmp, sizeof(tmp), "%s:tmp:%s", board, tok);
	/* rows read after the marker went up (db.h: a cache guarded by
	 * it), not in a snapshot the request's first read began before */
	db_reads_end(a->db);
	if ((s = board_rows(a, fam, topic)) == NULL)
		goto fail;
	while (!bad && (step = dbq_step(s)) == DBQ_ROW) {
		fault_point("lb-rows");
		if (!board_row(s, fam, topic, &k1, &v))
			continue;
		snprintf(score, sizeof(score), "%lld", v);
		snprintf(member, sizeof(member), "%016lld", k1);
		{
			const char *zargv[4] = { "ZADD", tmp, score, member };
			size_t zl[4];

			for (k = 0; k < 4; k++)
				zl[k] = strlen(zargv[k]);
			if (rds_append(a->rds, 4, zargv, zl) == -1) {
				bad = 1;
				continue;
			}
		}
		if (++queued == 1 && !expires) {
			const char *pargv[3] = { "PEXPIRE", tmp, "3600000" };
			size_t pl[3] = { 7, strlen(tmp), 7 };

			if (rds_append(a->rds, 3, pargv, pl) == -1)
				bad = 1;
			else
				queued++;
			expires = 1;
		}
		if (queued == 1000) {
			bad = rds_collect(a->rds, queued) != 0;
			queued = 0;	/* collected, failed or not */
		}
	}
	dbq_done(s);
	/* A board whose rows did not all come (SQL failed mid-way) or did
	 * not all go in is no board: swapped in, it stood complete, short of
	 * those rows, until its next invalidation. */
	if (rds_collect(a->rds, queued) != 0 || bad || step == DBQ_ERR)
		goto fail;
	swap[0] = tmp;
	swap[1] = board;
	swap[2] = ok;
	swap[3] = touched;
	swap[4] = lock;
	if ((rep = rds_eval(a->rds, &lb_swap_lua, 5, swap, 1, arg)) == NULL)
		goto fail;
	if (rds_type(rep) == RDS_INTEGER) {
		/* our lock lapsed, and another's rebuild fills the scratch
		 * copy: not ours to swap in, nor to end (0); or the board was
		 * invalidated meanwhile: our lock freed, the next reader
		 * rebuilds it (1) */
		int dropped = rds_int(rep) == 1;

		rds_free(rep);
		if (dropped)
			rebuild_done(a->rds, lock, NULL, tok);
		return -1;
	}
	/* Members the flusher changed during the build: their values from
	 * SQLite now, newer than our snapshot (its shared reads ended: the
	 * rows' snapshot would give the values before those flushes). */
	db_reads_end(a->db);
	for (j = 0; rds_type(rep) == RDS_ARRAY && j < rds_n(rep); j++) {
		memset(&dl, 0, sizeof(dl));
		dl.fam = fam;
		dl.k1 = strtoll(rds_str(rds_at(rep, j)), NULL, 10);
		dl.k2 = fam == FAM_UT_RATING ? topic : 0;
		lb_update(a, &dl, NULL, 1);
	}
	rds_free(rep);
	/* the swap set the marker to "1": only the lock is left */
	return rebuild_done(a->rds, lock, NULL, tok) == 0 ? 1 : -1;
fail:
	if ((rep = rds_cmdv(a->rds, "DEL", tmp, NULL)) != NULL)
		rds_free(rep);
	rebuild_fail(a->rds, lock, ok, tok);
	return -1;
}

/* Puts (uid, v) into the best k of at most n, best first: the board's
 * order (a higher value, then the newer account: the higher id). */
static int
best_put(long long *uids, long long *vals, int k, int n, long long uid,
    long long v)
{
	int i;

	for (i = k; i > 0 && (vals[i - 1] < v ||
	    (vals[i - 1] == v && uids[i - 1] < uid)); i--)
		if (i < n) {
			uids[i] = uids[i - 1];
			vals[i] = vals[i - 1];
		}
	if (i < n) {
		uids[i] = uid;
		vals[i] = v;
	}
	return k < n ? k + 1 : n;
}

/* The board from the counters table (SQLite's or PostgreSQL's durable
 * values, behind Redis by the flush's second), when Redis cannot give
 * it: a page with a board renders from SQL as every page does with
 * Redis down.  A user board's rows are all read (degraded mode only);
 * a topic's, its authors' only.  How many, or -1. */
static int
top_from_sql(struct app *a, enum family fam, long long topic, int n,
    long long *uids, long long *vals)
{
	struct dbq *s = board_rows(a, fam, topic);
	long long uid, v;
	int rc, k = 0;

	if (s == NULL)
		return -1;
	while ((rc = dbq_step(s)) == DBQ_ROW)
		if (board_row(s, fam, topic, &uid, &v))
			k = best_put(uids, vals, k, n, uid, v);
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : k;
}

/* The board from Redis: its marker and its top in one round trip,
 * rebuilt first when its marker is gone.  How many, or -1. */
static int
top_from_redis(struct app *a, enum family fam, long long topic, int n,
    long long *uids, long long *vals)
{
	struct timespec wait = { 0, 25 * 1000 * 1000 };
	char board[48], ok[56], stop[16];
	const char *get[2] = { "GET", ok }, *range[5] = { "ZREVRANGE", board,
	    "0", stop, "WITHSCORES" };
	rds_reply *rep, *mark;
	size_t i;
	int k = 0, tries, got, done;

	board_key(fam, topic, board, sizeof(board));
	key_sub(ok, sizeof(ok), board, "ok");
	snprintf(stop, sizeof(stop), "%d", n - 1);
	/* The mark and the board in one round trip: the board is used only
	 * when the mark says it is complete. */
	for (tries = 0; ; tries++) {
		if (rds_append_strs(a->rds, 2, get) == -1)
			return -1;
		if (rds_append_strs(a->rds, 5, range) == -1) {
			rds_collect(a->rds, 1);
			return -1;
		}
		if (rds_get_reply(a->rds, &mark) == -1)
			return -1;
		if (rds_get_reply(a->rds, &rep) == -1) {
			rds_free(mark);
			return -1;
		}
		done = rds_type(mark) == RDS_STRING && strcmp(rds_str(mark), "1") == 0;
		rds_free(mark);
		if (done)
			break;
		rds_free(rep);
		if (tries == 80)
			return -1;	/* a rebuild that never ends: 503 */
		if ((got = rebuild(a, fam, topic, board)) == -1)
			return -1;
		if (got == 0)		/* another reader rebuilds it: wait */
			nanosleep(&wait, NULL);
	}
	for (i = 0; rds_type(rep) == RDS_ARRAY && i + 1 < rds_n(rep) &&
	    k < n; i += 2) {
		uids[k] = strtoll(rds_str(rds_at(rep, i)), NULL, 10);
		vals[k] = strtoll(rds_str(rds_at(rep, i + 1)), NULL, 10);
		k++;
	}
	rds_free(rep);
	return k;
}

int
lb_top(struct app *a, enum family fam, long long topic, int n,
    long long *uids, long long *vals)
{
	int k;

	if (n > LB_MAX)
		n = LB_MAX;
	if (n <= 0)
		return 0;
	if ((k = top_from_redis(a, fam, topic, n, uids, vals)) == -1)
		k = top_from_sql(a, fam, topic, n, uids, vals);
	return k;
}

int
lb_invalidate(struct app *a)
{
	return rds_del_matching(a->rds, KEY_BOARD_MARKS) < 0 ? -1 : 0;
}
