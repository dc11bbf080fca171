/* timeline.c -- timelines and follow lists in Redis; see timeline.h.
 *
 * One file: why this file of over 500 lines is one concept -- the
 * writers, the rebuild and the readers follow one protocol
 * on the same keys (the marker that says a set is whole, the lock of its
 * rebuild, the member format that breaks ties as SQLite does), and each
 * side is correct only against the other's code; split, that protocol
 * would be exported for no reader but each other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/log.h"
#include "social/timeline.h"
#include "social/tlstale.h"
#include "store/db.h"
#include "store/dbq.h"
#include "store/key.h"
#include "store/rebuild.h"

static const struct {
	const char	*name;
	int		 cap;
} tl_info[TL__MAX] = {
	{ "home", TL_CAP },		/* TL_HOME */
	{ "profile", TL_CAP },		/* TL_PROFILE */
	{ "followers", 0 },		/* TL_FOLLOWERS */
	{ "following", 0 },		/* TL_FOLLOWING */
};

/* KEYS: set, marker, cut.  ARGV: cap, mode, score, id, score, id...  A
 * score "-" removes its id; mode "gt" keeps an entry already placed later
 * (a post reposted since), "set" places each exactly.  Entries the cap
 * drops mark the set cut: SQL has posts past its end.  A cut set holds
 * SQL's newest entries and nothing past its last, whose (score, id) is
 * its floor: an entry placed below the floor is not put (and one moved
 * there goes), since SQL has entries above it that the set dropped --
 * put, it showed on a page the set served with those missing (an
 * unfollow that left 800, then a follow of someone's older posts). */
static struct rds_script tl_put_lua = { .src =
	"#!lua\n"
	"if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end\n"
	"local fs, fm\n"
	"if redis.call('GET', KEYS[3]) then\n"
	"  local low = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')\n"
	"  if #low == 2 then fm = low[1]; fs = tonumber(low[2]) end\n"
	"end\n"
	"local function below(sc, m)\n"
	"  return fs ~= nil and (sc < fs or (sc == fs and m < fm))\n"
	"end\n"
	"for i = 3, #ARGV, 2 do\n"
	"  if ARGV[i] == '-' then redis.call('ZREM', KEYS[1], ARGV[i+1])\n"
	"  elseif below(tonumber(ARGV[i]), ARGV[i+1]) then\n"
	"    if ARGV[2] ~= 'gt' then redis.call('ZREM', KEYS[1], ARGV[i+1]) end\n"
	"  elseif ARGV[2] == 'gt' then\n"
	"    redis.call('ZADD', KEYS[1], 'GT', ARGV[i], ARGV[i+1])\n"
	"  else redis.call('ZADD', KEYS[1], ARGV[i], ARGV[i+1]) end\n"
	"end\n"
	"local cap = tonumber(ARGV[1])\n"
	"if cap > 0 and\n"
	"   redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -cap - 1) > 0 then\n"
	"  redis.call('SET', KEYS[3], '1') end\n"
	"return redis.call('ZCARD', KEYS[1])\n" };

/* KEYS: set, marker, cut.  ARGV: floor.  The set, if materialised, holds
 * nothing below floor and is cut (SQL has entries there the caller did
 * not read): its size, or -1 not materialised. */
static struct rds_script tl_cut_lua = { .src =
	"#!lua\n"
	"if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end\n"
	"redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])\n"
	"redis.call('SET', KEYS[3], '1')\n"
	"return redis.call('ZCARD', KEYS[1])\n" };

/* KEYS: set, marker, cut.  ARGV: start, stop.  { { marker, cut }, the
 * page }, as one server's MULTI answers.  A Redis Cluster's page only
 * (page_send()). */
static struct rds_script tl_page_lua = { .src =
	"#!lua flags=no-writes\n"
	"return { redis.call('MGET', KEYS[2], KEYS[3]),\n"
	"  redis.call('ZREVRANGE', KEYS[1], ARGV[1], ARGV[2]) }\n" };

#define TL_BATCH	256	/* entries per Redis command */

void
timeline_keys(struct timeline_keys *k, enum tl kind, long long uid)
{
	key_user(k->set, sizeof(k->set), uid, tl_info[kind].name, NULL);
	key_user(k->ok, sizeof(k->ok), uid, tl_info[kind].name, "ok");
	key_user(k->lock, sizeof(k->lock), uid, tl_info[kind].name, "lock");
	key_user(k->cut, sizeof(k->cut), uid, tl_info[kind].name, "cut");
}

/* Number strings for script arguments, in one allocation. */
struct numargs {
	const char	**v;
	char		 *buf;
	int		  n;
};

static void
numargs_init(struct numargs *a, int max)
{
	a->v = xcalloc((size_t)max, sizeof(*a->v));
	a->buf = xmalloc((size_t)max * 24);
	a->n = 0;
}

static void
numargs_add(struct numargs *a, long long v)
{
	char *p = a->buf + (size_t)a->n * 24;

	snprintf(p, 24, "%lld", v);
	a->v[a->n++] = p;
}

/* A score, or "-" (remove) for a negative one. */
static void
numargs_add_score(struct numargs *a, long long v)
{
	char *p = a->buf + (size_t)a->n * 24;

	if (v < 0)
		snprintf(p, 24, "-");
	else
		snprintf(p, 24, "%lld", v);
	a->v[a->n++] = p;
}

/* Members are ids zero-padded to 16 digits, so Redis breaks score ties
 * (posts of the same millisecond) the way SQLite does: by id. */
#define TL_MEMBER_FMT	"%016lld"

static void
numargs_add_member(struct numargs *a, long long id)
{
	char *p = a->buf + (size_t)a->n * 24;

	snprintf(p, 24, TL_MEMBER_FMT, id);
	a->v[a->n++] = p;
}

static void
numargs_free(struct numargs *a)
{
	free(a->v);
	free(a->buf);
}

/* The script's integer, or -2 when Redis failed. */
static long long
reply_int(rds_reply *rep)
{
	long long v = -2;

	if (rep == NULL)
		return -2;
	if (rds_type(rep) == RDS_INTEGER)
		v = rds_int(rep);
	else if (rds_type(rep) == RDS_ERROR)
		log_warn("timeline script: %s", rds_str(rep));
	rds_free(rep);
	return v;
}

/* Puts n entries, TL_BATCH per script: scores NULL removes them all. */
static long long
tl_change(struct app *a, enum tl kind, long long uid, int n,
    const long long *scores, const long long *ids, const char *mode)
{
	struct timeline_keys k;
	struct numargs args;
	const char *keys[3];
	long long rc = 0;
	int i, j;

	timeline_keys(&k, kind, uid);
	keys[0] = k.set;
	keys[1] = k.ok;
	keys[2] = k.cut;
	/* A put of nothing still reports the set's size. */
	for (i = 0; i < n || (n == 0 && i == 0); i += TL_BATCH) {
		numargs_init(&args, 2 + 2 * TL_BATCH);
		numargs_add(&args, tl_info[kind].cap);
		args.v[args.n++] = mode;
		for (j = i; j < n && j < i + TL_BATCH; j++) {
			numargs_add_score(&args, scores != NULL ? scores[j] : -1);
			numargs_add_member(&args, ids[j]);
		}
		rc = reply_int(rds_eval(a->rds, &tl_put_lua, 3, keys, args.n,
		    args.v));
		numargs_free(&args);
		if (rc == -2)
			tlstale_mark(a);
		if (rc < 0)
			break;
	}
	/* (the followed badges: the fan-out bumps each follower's, fanout.c) */
	return rc;
}

long long
timeline_add(struct app *a, enum tl kind, long long uid, int n,
    const long long *scores, const long long *ids)
{
	return tl_change(a, kind, uid, n, scores, ids, "gt");
}

long long
timeline_cut_below(struct app *a, enum tl kind, long long uid,
    long long floor)
{
	struct timeline_keys k;
	const char *keys[3], *args[1];
	char f[24];
	long long rc;

	timeline_keys(&k, kind, uid);
	keys[0] = k.set;
	keys[1] = k.ok;
	keys[2] = k.cut;
	snprintf(f, sizeof(f), "%lld", floor);
	args[0] = f;
	if ((rc = reply_int(rds_eval(a->rds, &tl_cut_lua, 3, keys, 1,
	    args))) == -2)
		tlstale_mark(a);
	return rc;
}

long long
timeline_rem(struct app *a, enum tl kind, long long uid, int n, const long long *ids)
{
	return n > 0 ? tl_change(a, kind, uid, n, NULL, ids, "set") : 0;
}

long long
timeline_put(struct app *a, enum tl kind, long long uid, int n,
    const long long *scores, const long long *ids)
{
	return tl_change(a, kind, uid, n, scores, ids, "set");
}

/* One entry for many users in one pipeline: at scores[i] for uids[i], or
 * at score for all when scores is NULL (a negative one removes it). */
static int
tl_many(struct app *a, enum tl kind, int nusers, const long long *uids,
    const long long *scores, long long score, const char *mode, long long id)
{
	struct timeline_keys k;
	struct numargs args;
	const char *keys[3];
	int i, queued = 0, rc = 0;

	for (i = 0; i < nusers; i++) {
		numargs_init(&args, 4);
		numargs_add(&args, tl_info[kind].cap);
		args.v[args.n++] = mode;
		numargs_add_score(&args, scores != NULL ? scores[i] : score);
		numargs_add_member(&args, id);
		timeline_keys(&k, kind, uids[i]);
		keys[0] = k.set;
		keys[1] = k.ok;
		keys[2] = k.cut;
		rc = rds_append_eval(a->rds, &tl_put_lua, 3, keys, args.n,
		    args.v);
		numargs_free(&args);
		if (rc == -1)
			break;
		queued++;
	}
	if (queued > 0 && rds_collect(a->rds, queued) != 0)
		rc = -1;
	if (rc == -1)
		tlstale_mark(a);
	return rc;
}

int
timeline_add_many(struct app *a, enum tl kind, int nusers, const long long *uids,
    long long score, long long id)
{
	return tl_many(a, kind, nusers, uids, NULL, score, "gt", id);
}

int
timeline_add_each(struct app *a, enum tl kind, int nusers, const long long *uids,
    const long long *scores, long long id)
{
	return tl_many(a, kind, nusers, uids, scores, -1, "gt", id);
}

int
timeline_rem_many(struct app *a, enum tl kind, int nusers, const long long *uids,
    long long id)
{
	return tl_many(a, kind, nusers, uids, NULL, -1, "set", id);
}

int
timeline_put_many(struct app *a, enum tl kind, int nusers, const long long *uids,
    const long long *scores, long long id)
{
	return tl_many(a, kind, nusers, uids, scores, -1, "set", id);
}

int
timeline_home_scores(struct app *a, enum stmt st, long long one,
    const long long *many, int n, long long *scores)
{
	struct dbq *s = dbq_stmt(a->db, st);
	long long id;
	int i, rc;

	if (s == NULL)
		return -1;
	for (i = 0; i < n; i++)
		scores[i] = -1;
	dbq_bind_i64(s, 1, one);
	dbq_bind_ids(s, 2, many, n);
	while ((rc = dbq_step(s)) == DBQ_ROW) {
		id = dbq_i64(s, 0);
		for (i = 0; i < n; i++)
			if (many[i] == id)
				scores[i] = dbq_i64(s, 1);
	}
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : 0;
}

/* The SQLite source of each kind, as (id, score) rows. */
static struct dbq *
tl_source(struct app *a, enum tl kind, long long uid, long long after_s,
    long long after_id, long long offset, int limit)
{
	struct dbq *s;

	switch (kind) {
	case TL_HOME:
	case TL_PROFILE:
		s = dbq_stmt(a->db, kind == TL_HOME ? STMT_HOME_SQL :
		    STMT_PROFILE_SQL);
		if (s == NULL)
			return NULL;
		dbq_bind_i64(s, 1, uid);
		dbq_bind_int(s, 2, limit);
		dbq_bind_i64(s, 3, offset);
		return s;
	case TL_FOLLOWERS:
	case TL_FOLLOWING:
		s = dbq_stmt(a->db, kind == TL_FOLLOWERS ? STMT_FOLLOWERS_CHUNK :
		    STMT_FOLLOWING_CHUNK);
		if (s == NULL)
			return NULL;
		dbq_bind_i64(s, 1, uid);
		dbq_bind_i64(s, 2, after_s);
		dbq_bind_i64(s, 3, after_id);
		dbq_bind_int(s, 4, limit);
		return s;
	case TL__MAX:
		break;
	}
	return NULL;
}

/* Appends one ZADD NX of up to TL_BATCH rows; returns rows read, -1.
 * NX: an entry a writer put there since the marker went up ("b": its
 * change may be newer than this rebuild's read, a repost's move up) is
 * not put back where the read had it. */
static int
rebuild_chunk(struct app *a, const char *set, struct dbq *s,
    long long *last_s, long long *last_id, int *queued, int *eof)
{
	const char *argv[3 + 2 * TL_BATCH];
	size_t lens[3 + 2 * TL_BATCH];
	char nums[2 * TL_BATCH][24];
	int n = 0, rc, argc = 3;

	argv[0] = "ZADD";
	argv[1] = set;
	argv[2] = "NX";
	/* Never step a finished statement: it would start over. */
	while (!*eof && n < TL_BATCH) {
		if ((rc = dbq_step(s)) != DBQ_ROW) {
			*eof = 1;
			if (rc == DBQ_ERR)
				return -1;
			break;
		}
		*last_id = dbq_i64(s, 0);
		*last_s = dbq_i64(s, 1);
		snprintf(nums[2 * n], 24, "%lld", *last_s);
		snprintf(nums[2 * n + 1], 24, TL_MEMBER_FMT, *last_id);
		argv[argc++] = nums[2 * n];
		argv[argc++] = nums[2 * n + 1];
		n++;
	}
	if (n == 0)
		return 0;
	for (rc = 0; rc < argc; rc++)
		lens[rc] = strlen(argv[rc]);
	if (rds_append(a->rds, argc, argv, lens) == -1)
		return -1;
	(*queued)++;
	return n;
}

int
timeline_ids(struct app *a, enum tl kind, long long uid, long long page, int per,
    long long *ids)
{
	long long off = (page - 1) * per;
	int n = timeline_page(a, kind, uid, off, per, ids);

	return n >= 0 ? n : timeline_page_sql(a, kind, uid, off, per, ids);
}

int
timeline_rebuild(struct app *a, enum tl kind, long long uid)
{
	struct timeline_keys k;
	const char *clear[2] = { k.set, k.cut };
	char tok[REBUILD_TOKEN];
	struct dbq *s;
	long long last_s = -1, last_id = -1, offset = 0;
	int n, queued = 0, got, chunk, done = 0, eof;

	timeline_keys(&k, kind, uid);
	/* Marker first ("b"): writers start adding while we read SQLite,
	 * readers keep using SQLite until the set is whole.  The lock, the
	 * old set cleared and the marker: one round trip. */
	if ((got = rebuild_begin(a->rds, k.lock, 10000, k.ok, clear, 2,
	    tok)) != 1)
		return got;
	/* read after the marker (db.h db_reads_together()) */
	db_reads_end(a->db);
	chunk = tl_info[kind].cap > 0 ? tl_info[kind].cap : 5000;
	while (!done) {
		s = tl_source(a, kind, uid, last_s, last_id, offset, chunk);
		if (s == NULL)
			goto fail;
		n = 0;
		eof = 0;
		while ((got = rebuild_chunk(a, k.set, s, &last_s, &last_id,
		    &queued, &eof)) > 0)
			n += got;
		dbq_done(s);
		if (got < 0)
			goto fail;
		/* a capped set read whole may have left posts in SQL: cut,
		 * in the round trip of its last entries */
		if (n == chunk && tl_info[kind].cap > 0 &&
		    rds_append_strs(a->rds, 3, (const char *[]){ "SET", k.cut,
		    "1" }) == 0)
			queued++;
		/* every reply read, errors or not: none is left to read */
		got = rds_collect(a->rds, queued);
		queued = 0;
		if (got != 0)
			goto fail;
		offset += n;
		done = n < chunk || tl_info[kind].cap > 0;
	}
	/* (no badge moves: the followed counts are SQLite's, followed.h) */
	if (rebuild_done(a->rds, k.lock, k.ok, tok) == -1)
		return -1;
	return 1;
fail:
	if (queued > 0)
		rds_collect(a->rds, queued);
	rebuild_fail(a->rds, k.lock, k.ok, tok);
	return -1;
}

/* A page is read with its marker, as one: a rebuild that starts between
 * the two would have the page read half-built sets.  On one server a
 * MULTI of MGET (the marker, the cut) and ZREVRANGE, not a script: Redis
 * 7's EVALSHA of two such commands cost ~10 us of its CPU against ~3 for
 * the MULTI
 * (redis-benchmark), and a feed ran the script every time, the busiest
 * of Redis's commands in the mix (docs/BENCHMARKS.md).  A Redis
 * Cluster's client routes by the first key, which MULTI has not: the
 * script (tl_page_lua) there. */
#define PAGE_REPLIES	4	/* +OK, +QUEUED, +QUEUED, the EXEC's */

/* A page's ids from its reply (the last of page_send()'s): the count,
 * -1 when the set is not complete (or Redis refused), -3 when the page
 * reaches past the end of a set the cap cut (SQL has more). */
static int
page_parse(rds_reply *rep, int limit, long long *ids)
{
	rds_reply *marks;
	size_t i;
	int n = 0, cut;

	/* the marker's and the cut's, then the page's (the EXEC's, or the
	 * cluster's script's) */
	if (rds_type(rep) != RDS_ARRAY || rds_n(rep) != 2 ||
	    rds_type(marks = rds_at(rep, 0)) != RDS_ARRAY ||
	    rds_n(marks) != 2 || rds_type(rds_at(marks, 0)) != RDS_STRING ||
	    strcmp(rds_str(rds_at(marks, 0)), "1") != 0 ||
	    rds_type(rds_at(rep, 1)) != RDS_ARRAY)
		return -1;
	cut = rds_type(rds_at(marks, 1)) == RDS_STRING &&
	    strcmp(rds_str(rds_at(marks, 1)), "1") == 0;
	rep = rds_at(rep, 1);
	for (i = 0; i < rds_n(rep) && n < limit; i++)
		if (rds_type(rds_at(rep, i)) == RDS_STRING)
			ids[n++] = strtoll(rds_str(rds_at(rep, i)), NULL, 10);
	/* a page past a cut set's end: SQL has the posts it lost */
	return cut && n < limit ? -3 : n;
}

/* Queues a page's read: the number of replies it will have, or -1 when
 * Redis is down. */
static int
page_send(struct rds *rd, const struct timeline_keys *k, long long offset,
    int limit)
{
	const char *keys[3] = { k->set, k->ok, k->cut };
	struct numargs args;
	int rc;

	numargs_init(&args, 2);
	numargs_add(&args, offset);
	numargs_add(&args, offset + limit - 1);
	if (rds_is_cluster(rd))
		rc = rds_append_eval(rd, &tl_page_lua, 3, keys, 2, args.v) ==
		    -1 ? -1 : 1;
	else if (rds_append_strs(rd, 1, (const char *[]){ "MULTI" }) == -1 ||
	    rds_append_strs(rd, 3, (const char *[]){ "MGET", k->ok,
	    k->cut }) == -1 ||
	    rds_append_strs(rd, 4, (const char *[]){ "ZREVRANGE", k->set,
	    args.v[0], args.v[1] }) == -1 ||
	    rds_append_strs(rd, 1, (const char *[]){ "EXEC" }) == -1)
		rc = -1;	/* down: what was queued is dropped with it */
	else
		rc = PAGE_REPLIES;
	numargs_free(&args);
	return rc;
}

/* Reads the n replies of page_send() into *rep (the last; the caller
 * frees it): 0, or -1 when the transport failed. */
static int
page_recv(struct rds *rd, int n, rds_reply **rep)
{
	*rep = NULL;
	while (n-- > 0) {
		if (*rep != NULL)
			rds_free(*rep);
		if (rds_get_reply(rd, rep) == -1) {
			*rep = NULL;
			return -1;
		}
	}
	return 0;
}

/* One round trip: the count, -1 not complete, -2 Redis down. */
static int
page_redis(struct app *a, const struct timeline_keys *k, long long offset,
    int limit, long long *ids)
{
	struct rds *rd = app_reader(a);
	rds_reply *rep;
	int n;

	if ((n = page_send(rd, k, offset, limit)) == -1 ||
	    page_recv(rd, n, &rep) == -1)
		return -2;
	n = page_parse(rep, limit, ids);
	rds_free(rep);
	return n;
}

/* After a first answer n from Redis (page_redis): rebuild a set that is
 * not complete and ask again; -1 when SQLite must answer. */
static int
page_again(struct app *a, enum tl kind, long long uid, long long offset,
    int limit, long long *ids, int n)
{
	struct timeline_keys k;

	if (n >= 0)
		return n;
	if (n == -3 || n == -2 || app_reader(a) != a->rds)
		return -1;	/* past a cut set's end, down, a replica */
	if (timeline_rebuild(a, kind, uid) != 1)
		return -1;
	timeline_keys(&k, kind, uid);
	n = page_redis(a, &k, offset, limit, ids);
	return n >= 0 ? n : -1;
}

/* A page that reaches past a capped set's end is not all in it (the set
 * keeps the newest TL_CAP): SQL has every post.  A profile's page 35
 * read "No posts yet" from a process that knew the author, and 30 posts
 * from one that did not. */
static int
past_cap(enum tl kind, long long offset, int limit)
{
	return tl_info[kind].cap > 0 && offset + limit > tl_info[kind].cap;
}

int
timeline_page(struct app *a, enum tl kind, long long uid, long long offset,
    int limit, long long *ids)
{
	struct timeline_keys k;

	if (past_cap(kind, offset, limit))
		return -1;
	timeline_keys(&k, kind, uid);
	return page_again(a, kind, uid, offset, limit, ids,
	    page_redis(a, &k, offset, limit, ids));
}

void
timeline_ids_send(struct app *a, enum tl kind, long long uid, long long page,
    int per, struct tl_q *q)
{
	struct timeline_keys k;

	q->kind = kind;
	q->uid = uid;
	q->offset = (page - 1) * per;
	q->per = per;
	q->cached = 0;
	q->rep = NULL;
	timeline_keys(&k, kind, uid);
	q->rd = app_reader(a);
	q->queued = past_cap(kind, q->offset, per) ? 0 :
	    page_send(q->rd, &k, q->offset, per);
}

void
timeline_ids_read(struct app *a, struct tl_q *q)
{
	(void)a;
	if (q->queued > 0)
		page_recv(q->rd, q->queued, &q->rep);
}

int
timeline_ids_end(struct app *a, struct tl_q *q, long long *ids)
{
	int n = -2;

	if (q->rep != NULL) {
		n = page_parse(q->rep, q->per, ids);
		rds_free(q->rep);
		q->rep = NULL;
	}
	q->cached = n >= 0;
	n = page_again(a, q->kind, q->uid, q->offset, q->per, ids, n);
	return n >= 0 ? n : timeline_page_sql(a, q->kind, q->uid, q->offset,
	    q->per, ids);
}

int
timeline_ids_peek(const struct tl_q *q, const struct rds_stash *st,
    long long *ids)
{
	/* page_send() queued q->queued replies, the EXEC's last */
	if (q->queued <= 0 || q->queued > st->n || q->queued > RDS_STASH_MAX ||
	    st->next != 0 || st->rep[q->queued - 1] == NULL)
		return -1;
	return page_parse(st->rep[q->queued - 1], q->per, ids);
}

void
timeline_ids_drop(struct tl_q *q)
{
	if (q->rep != NULL)
		rds_free(q->rep);
	q->rep = NULL;
}

int
timeline_page_sql(struct app *a, enum tl kind, long long uid, long long offset,
    int limit, long long *ids)
{
	struct dbq *s;
	int n = 0, rc = DBQ_DONE;

	switch (kind) {
	case TL_HOME:
	case TL_PROFILE:
		s = tl_source(a, kind, uid, 0, 0, offset, limit);
		break;
	default:
		s = dbq_stmt(a->db, kind == TL_FOLLOWERS ?
		    STMT_FOLLOWERS_PAGE_SQL : STMT_FOLLOWING_PAGE_SQL);
		if (s != NULL) {
			dbq_bind_i64(s, 1, uid);
			dbq_bind_int(s, 2, limit);
			dbq_bind_i64(s, 3, offset);
		}
		break;
	}
	if (s == NULL)
		return -1;
	while (n < limit && (rc = dbq_step(s)) == DBQ_ROW)
		ids[n++] = dbq_i64(s, 0);
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : n;
}
