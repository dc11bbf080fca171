/* fanout.c -- fan-out and the deferred job queue; see fanout.h.
 *
 * One file: why this file of over 500 lines is one concept -- a job's
 * whole life: noted by the handler that answers, its first batch run
 * there, the rest queued, run by the worker batch by batch (each
 * checking that its post is still what the job was for), reclaimed when
 * a handler or the worker died between two of those steps.  Each step
 * reads the state the others leave. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fault.h"
#include "base/log.h"
#include "social/bcache.h"
#include "social/fanout.h"
#include "social/post.h"
#include "social/timeline.h"
#include "social/tlstale.h"
#include "store/dbq.h"
#include "store/key.h"

/* KEYS: inline, queue.  ARGV: done job, next job or "".  The handler's
 * own batch is done: its note goes, its continuation (if any) queues. */
static struct rds_script inline_done_lua = { .src =
	"#!lua\n"
	"redis.call('ZREM', KEYS[1], ARGV[1])\n"
	"if ARGV[2] ~= '' then redis.call('LPUSH', KEYS[2], ARGV[2]) end\n"
	"return 1\n" };

/* KEYS: inline, queue.  ARGV: before (ms), max.  Notes older than before
 * belong to a handler that died after answering: the worker takes them. */
static struct rds_script reclaim_lua = { .src =
	"#!lua\n"
	"local js = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1],"
	" 'LIMIT', 0, tonumber(ARGV[2]))\n"
	"for _, j in ipairs(js) do\n"
	"  redis.call('LPUSH', KEYS[2], j)\n"
	"  redis.call('ZREM', KEYS[1], j)\n"
	"end\n"
	"return #js\n" };

/* KEYS: queue, processing.  ARGV: done job, next job or "". */
static struct rds_script job_done_lua = { .src =
	"#!lua\n"
	"redis.call('LREM', KEYS[2], 1, ARGV[1])\n"
	"if ARGV[2] ~= '' then redis.call('LPUSH', KEYS[1], ARGV[2]) end\n"
	"return 1\n" };

/* What a job does in the home timelines of a user's followers: add or
 * remove a post of theirs, add a post they reposted (at the repost's
 * time), or put a post they no longer repost back where it belongs. */
enum job_kind { JOB_REM, JOB_ADD, JOB_REPOST, JOB_UNREPOST };
static const char *const job_names[] = { "rem", "add", "rp", "urp" };

struct job {
	enum job_kind	kind;
	long long	post;
	long long	author;		/* or the reposter */
	long long	score;
	long long	after_t;	/* follower cursor: (created_at, id) */
	long long	after_id;
	int		bumped;		/* the followers' badges were bumped
					   before the answer (followed_first()):
					   not again by the first batch */
};

/* The job as JSON; a note's (unique: its own "n", this process's and
 * the moment's) or a queued job's (NULL).  Two notes of one job (two
 * unreposts of a post, an unpublish and a republish) were one member of
 * the inline set: the first one's end took the second one's away, and
 * its batch was not done. */
static char *
job_encode_as(const struct job *j, const char *nonce)
{
	json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:b}", "k",
	    job_names[j->kind], "p", (json_int_t)j->post, "a",
	    (json_int_t)j->author, "s", (json_int_t)j->score, "t",
	    (json_int_t)j->after_t, "i", (json_int_t)j->after_id, "b",
	    j->bumped);
	char *s;

	if (o == NULL)
		return NULL;
	if (nonce != NULL)
		json_object_set_new(o, "n", json_string(nonce));
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return s;
}

static char *
job_encode(const struct job *j)
{
	return job_encode_as(j, NULL);
}

static int
job_decode(const char *s, size_t len, struct job *j)
{
	json_error_t err;
	json_t *o = json_loadb(s, len, JSON_REJECT_DUPLICATES, &err);
	json_int_t p, a, sc, t, i;
	const char *k;
	int rc, kind = 0, b = 0;

	if (o == NULL)
		return -1;
	/* "b" is optional: jobs queued before it was written have none */
	rc = json_unpack(o, "{s:s,s:I,s:I,s:I,s:I,s:I,s?b}", "k", &k, "p", &p,
	    "a", &a, "s", &sc, "t", &t, "i", &i, "b", &b);
	while (rc == 0 && kind <= JOB_UNREPOST &&
	    strcmp(k, job_names[kind]) != 0)
		kind++;
	if (rc == 0 && kind > JOB_UNREPOST)
		rc = -1;
	if (rc == 0) {
		j->kind = (enum job_kind)kind;
		j->post = p;
		j->author = a;
		j->score = sc;
		j->after_t = t;
		j->after_id = i;
		j->bumped = b;
	}
	json_decref(o);
	return rc;
}

static int
job_push(struct app *a, const struct job *j)
{
	char *s = job_encode(j);
	rds_reply *rep;
	int rc = -1;

	if (s == NULL)
		return -1;
	if ((rep = rds_cmdv(a->rds, "LPUSH", KEY_JOBS_QUEUE, s, NULL)) != NULL) {
		rc = rds_type(rep) == RDS_INTEGER ? 0 : -1;
		rds_free(rep);
	}
	if (rc == -1) {
		log_warn("fan-out job for post %lld not queued", j->post);
		tlstale_mark(a);
	}
	free(s);
	return rc;
}

/* 1 when the add or repost job j is still current: its post visible,
 * published (an add) or reposted by the job's user (a repost) at the
 * job's score -- not unpublished, deleted, republished, unreposted or
 * reposted again since; 0 not; -1 on a SQLite error. */
static int
current(struct app *a, const struct job *j)
{
	struct post p;
	struct dbq *s;
	int rc = post_get(a->db, j->post, &p);

	if (rc != 1)
		return rc;
	rc = POST_VISIBLE(&p) && (j->kind == JOB_REPOST ||
	    p.published_at == j->score);
	post_free(&p);
	if (rc != 1 || j->kind != JOB_REPOST)
		return rc;
	if ((s = dbq_stmt(a->db, STMT_REPOST_AT)) == NULL)
		return -1;
	dbq_bind_i64(s, 1, j->post);
	dbq_bind_i64(s, 2, j->author);
	rc = dbq_step(s);
	rc = rc == DBQ_ROW ? dbq_i64(s, 0) == j->score : rc == DBQ_DONE ? 0 : -1;
	dbq_done(s);
	return rc;
}

/* post, published at `at', into the home timelines of the n users uids,
 * each at its place in that user's feed (sql.h HOME_SCORE): `at', or a
 * later repost by someone the user follows.  Only a republished post has
 * reposts (no draft can be reposted), and its publication keeps its time
 * (an unpublish took it out of the author's followers' homes): for one
 * that has any, each place is read, else it is `at' in every one.  0, or
 * -1 when Redis or SQL failed. */
static int
homes_put(struct app *a, long long post, long long at, int n,
    const long long *uids)
{
	struct dbq *s = dbq_stmt(a->db, STMT_POST_REPOSTED);
	long long *scores;
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, post);
	rc = dbq_step(s);
	dbq_done(s);
	if (rc == DBQ_DONE)
		return timeline_add_many(a, TL_HOME, n, uids, at, post);
	if (rc != DBQ_ROW)
		return -1;
	scores = xcalloc((size_t)n, sizeof(*scores));
	rc = timeline_home_scores(a, STMT_HOME_SCORES_OF_POST, post, uids, n,
	    scores);
	if (rc == 0)
		rc = timeline_add_each(a, TL_HOME, n, uids, scores, post);
	free(scores);
	return rc;
}

/* An unrepost's places of post in the homes of the n users uids, read
 * after its commit and put exactly (an entry goes down or out): 0, or -1.
 * A repost that committed between the read and the put, its add made
 * before the put, was undone by it (the home then placed the post below
 * SQL's place for good): the places are read again after the put, and
 * put again where they moved.  A repost committed after that read adds
 * after it, GT.  Three rounds at most; scores: n of room. */
static int
unrepost_put(struct app *a, long long post, int n, const long long *uids,
    long long *scores)
{
	long long *now = xcalloc((size_t)n, sizeof(*now));
	long long *moved = xcalloc((size_t)n, sizeof(*moved));
	int rc, i, k, round;

	rc = timeline_home_scores(a, STMT_HOME_SCORES_OF_POST, post, uids, n,
	    scores);
	memcpy(moved, uids, (size_t)n * sizeof(*moved));
	for (round = 0, k = n; rc == 0 && k > 0 && round < 3; round++) {
		fault_point("unrepost-scored");
		if ((rc = timeline_put_many(a, TL_HOME, k, moved, scores,
		    post)) == 0)
			rc = timeline_home_scores(a, STMT_HOME_SCORES_OF_POST,
			    post, moved, k, now);
		for (i = 0, n = k, k = 0; rc == 0 && i < n; i++)
			if (now[i] != scores[i]) {
				moved[k] = moved[i];
				scores[k++] = now[i];
			}
	}
	free(now);
	free(moved);
	return rc;
}

/* The post of the add job j in its author's own profile and home
 * timelines: 0, or < -1 when Redis failed (timeline_add()'s; a SQL
 * error is one too: the home is then put right by its rebuild). */
static int
author_adds(struct app *a, const struct job *j)
{
	long long post = j->post, at = j->score;
	int rc = timeline_add(a, TL_PROFILE, j->author, 1, &at, &post);

	if (rc < -1)
		return rc;
	return homes_put(a, post, at, 1, &j->author) == -1 ? -2 : 0;
}

/* A withdrawal's own timelines: its author's profile and home.  -1
 * when Redis failed. */
static int
author_rems(struct app *a, const struct job *j)
{
	long long post = j->post;

	return timeline_rem(a, TL_PROFILE, j->author, 1, &post) < -1 ||
	    timeline_rem(a, TL_HOME, j->author, 1, &post) < -1 ? -1 : 0;
}

/* 1 when the remove job j's post is visible again (republished since it
 * was unpublished; *score its place), 0 not, -1 on a SQLite error. */
static int
visible_again(struct app *a, const struct job *j, long long *score)
{
	struct post p;
	int rc = post_get(a->db, j->post, &p);

	if (rc != 1)
		return rc;
	rc = POST_VISIBLE(&p);
	*score = p.published_at;
	post_free(&p);
	return rc;
}

/* A withdrawn post's reposters: their followers had it from the repost
 * (JOB_REPOST), not from the author's fan-out, and the withdrawal's
 * batches walk the author's followers: in the homes of a reposter's
 * followers who do not follow the author it stayed for good (skipped by
 * readers: a page one post short, and the switch to SQLite past a set's
 * end one post off).  Each reposter's followers get the post's place
 * again as after an unrepost (JOB_UNREPOST: none for a post not
 * visible, read after the withdrawal's commit).  0, or -1. */
#define REPOSTERS_CHUNK	500
static int
reposters_rems(struct app *a, long long post)
{
	struct job u = { JOB_UNREPOST, post, 0, 0, -1, -1, 0 };
	long long ids[REPOSTERS_CHUNK], after = 0;
	struct dbq *s;
	int i, n, rc;

	do {
		if ((s = dbq_stmt(a->db, STMT_REPOSTERS_OF_POST)) == NULL)
			return -1;
		dbq_bind_i64(s, 1, post);
		dbq_bind_i64(s, 2, after);
		dbq_bind_int(s, 3, REPOSTERS_CHUNK);
		n = 0;
		while (n < REPOSTERS_CHUNK && (rc = dbq_step(s)) == DBQ_ROW)
			ids[n++] = dbq_i64(s, 0);
		dbq_done(s);
		if (rc == DBQ_ERR)
			return -1;
		for (i = 0; i < n; i++) {
			u.author = ids[i];
			if (job_push(a, &u) == -1)
				return -1;
		}
		if (n > 0)
			after = ids[n - 1];
	} while (n == REPOSTERS_CHUNK);
	return 0;
}

/* The next max followers (FANOUT_BATCH at most) of j's user after j's
 * cursor, into uids, the cursor moved to the last: how many, or -1. */
static int
followers_after(struct app *a, struct job *j, long long *uids, int max)
{
	struct dbq *s;
	int n = 0, rc = DBQ_DONE;

	if ((s = dbq_stmt(a->db, STMT_FOLLOWERS_CHUNK)) == NULL)
		return -1;
	dbq_bind_i64(s, 1, j->author);
	dbq_bind_i64(s, 2, j->after_t);
	dbq_bind_i64(s, 3, j->after_id);
	dbq_bind_int(s, 4, max);
	while (n < max && (rc = dbq_step(s)) == DBQ_ROW) {
		uids[n] = dbq_i64(s, 0);
		j->after_t = dbq_i64(s, 1);
		j->after_id = uids[n];
		n++;
	}
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : n;
}

/* A post of author's published or withdrawn, its commit done: before
 * the answer, when the author has FOLLOWED_NOW followers or fewer, their
 * followed badges turn over (bcache_readers_changed()), so that each
 * one's next poll shows it.  1 when so (the job's first batch then
 * leaves them: a second bump is a second recount), 0 when they are left
 * to their batches of the fan-out (job_batch()).  Not for more: the
 * bumps of a thousand followers, three commands each, took ~5 ms of the
 * answer, where fanout.test asks a post of 5,000 followers to cost what
 * one of 10 does. */
#define FOLLOWED_NOW	100
static int
followed_first(struct app *a, long long author)
{
	long long uids[FOLLOWED_NOW + 1];
	struct job j = { JOB_ADD, 0, author, 0, -1, -1, 0 };
	int n = followers_after(a, &j, uids, FOLLOWED_NOW + 1);

	if (n < 0 || n > FOLLOWED_NOW)
		return 0;
	if (n > 0)
		bcache_readers_changed(a, uids, n);
	return 1;
}

/* No batch will come (the job was not queued): the followers' badges,
 * unless bumped already, turn over by the journal's replay (every
 * reader's: who they are is not read again here). */
static void
followed_lost(struct app *a, const struct job *j)
{
	if (!j->bumped)
		bcache_readers_changed(a, NULL, -1);
}

/* One batch: followers after the job's cursor.  Returns how many were
 * done (the cursor moves to the last), or -1.  An add job whose post is
 * no longer current does nothing (0): a remove job was queued when it
 * stopped being so; and a remove job whose post is visible again (an
 * unpublish, then a republish, whose adds the handler made at once)
 * does nothing either, or puts back what it took when the republish
 * came between its look and its removal.  An add or a remove turns the batch's followed
 * badges over (bcache_readers_changed()) but in a first batch whose
 * followers the request turned over (followed_first()). */
static int
job_batch(struct app *a, struct job *j)
{
	long long uids[FANOUT_BATCH], scores[FANOUT_BATCH], score;
	int n, rc, bumped = 0;

	if ((j->kind == JOB_ADD || j->kind == JOB_REPOST) &&
	    (rc = current(a, j)) != 1)
		return rc;
	if (j->kind == JOB_REM && (rc = visible_again(a, j, &score)) != 0)
		return rc == 1 ? 0 : -1;
	if (j->after_id == -1 && j->bumped)
		bumped = 1;	/* this batch's badges, before the answer */
	/* a first batch the worker reclaimed may be all there is of a
	 * publication whose handler died after its commit (the note was
	 * made before it: posting.c): the author's own timelines too */
	if (j->kind == JOB_ADD && j->after_id == -1 &&
	    author_adds(a, j) < -1)
		return -1;
	/* and of a withdrawal, its handler dead after its commit: the
	 * author's own, put back should a republish have come between */
	if (j->kind == JOB_REM && j->after_id == -1) {
		if (author_rems(a, j) == -1 ||
		    (rc = visible_again(a, j, &score)) == -1)
			return -1;
		if (rc == 1) {
			struct job again = *j;

			again.score = score;
			return author_adds(a, &again) < -1 ? -1 : 0;
		}
		/* and its reposters' followers (a job redone queues them
		 * again: exact places repeat harmlessly) */
		if (reposters_rems(a, j->post) == -1)
			return -1;
	}
	if ((n = followers_after(a, j, uids, FANOUT_BATCH)) <= 0)
		return n;
	if ((j->kind == JOB_ADD || j->kind == JOB_REM) && !bumped)
		bcache_readers_changed(a, uids, n);
	switch (j->kind) {
	case JOB_ADD:
		rc = homes_put(a, j->post, j->score, n, uids);
		break;
	case JOB_REPOST:
		rc = timeline_add_many(a, TL_HOME, n, uids, j->score, j->post);
		break;
	case JOB_REM:
		rc = timeline_rem_many(a, TL_HOME, n, uids, j->post);
		if (rc != -1 && visible_again(a, j, &score) == 1)
			rc = homes_put(a, j->post, score, n, uids);
		break;
	default:	/* JOB_UNREPOST: read after the unrepost's commit */
		rc = unrepost_put(a, j->post, n, uids, scores);
		break;
	}
	return rc == -1 ? -1 : n;
}

/* After the response: the first FANOUT_BATCH followers, then the rest
 * queued for the worker, and the note dropped -- in one script. */
static void
inline_run(struct app *a, char *raw)
{
	const char *keys[2] = { KEY_JOBS_INLINE, KEY_JOBS_QUEUE }, *args[2];
	rds_reply *rep;
	struct job j, undo;
	char *next = NULL;
	int n, noted;

	if (a->fault_delay_ms > 0)	/* tests: a window to kill -9 in */
		usleep((useconds_t)a->fault_delay_ms * 1000);
	/* Not there any more: the worker took it over (we were slow). */
	if ((rep = rds_cmdv(a->rds, "ZSCORE", KEY_JOBS_INLINE, raw, NULL)) == NULL)
		return;
	noted = rds_type(rep) == RDS_STRING;
	rds_free(rep);
	if (!noted || job_decode(raw, strlen(raw), &j) == -1 ||
	    (n = job_batch(a, &j)) < 0)
		return;			/* the note stays: the worker redoes it */
	if (n == FANOUT_BATCH)
		next = job_encode(&j);
	/* Unpublished, deleted or unreposted while we wrote: its undoing
	 * job may have run before our adds, so queue one more after them
	 * (ZREMs and exact places repeat harmlessly), and no continuation. */
	if (n > 0 && (j.kind == JOB_ADD || j.kind == JOB_REPOST) &&
	    current(a, &j) == 0) {
		free(next);
		undo = j;
		undo.kind = j.kind == JOB_ADD ? JOB_REM : JOB_UNREPOST;
		undo.after_t = undo.after_id = -1;
		undo.bumped = 0;
		next = job_encode(&undo);
	}
	if (n == FANOUT_BATCH && next == NULL)
		return;
	args[0] = raw;
	args[1] = next != NULL ? next : "";
	if ((rep = rds_eval(a->rds, &inline_done_lua, 2, keys, 2, args)) != NULL)
		rds_free(rep);
	free(next);
}

/* KEYS: inline.  ARGV: the note made before the commit, now, the note.
 * The one the committed action makes replaces it (the worker may have
 * taken the first, while its post was not committed: a no-op then). */
static struct rds_script renote_lua = { .src =
	"#!lua\n"
	"redis.call('ZREM', KEYS[1], ARGV[1])\n"
	"return redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])\n" };

/* Notes j's first batch in the inline set, in place of prior (or NULL):
 * the note (malloc'd), or NULL when Redis failed (logged). */
static char *
note_add(struct app *a, const struct job *j, const char *prior)
{
	const char *keys[1] = { KEY_JOBS_INLINE }, *args[3];
	rds_reply *rep;
	char *s, now[24], nonce[48];
	int ok;

	snprintf(nonce, sizeof(nonce), "%ld.%lld", (long)getpid(),
	    clock_mono_us());
	if ((s = job_encode_as(j, nonce)) == NULL)
		return NULL;
	snprintf(now, sizeof(now), "%lld", clock_wall_ms());
	if (prior != NULL) {
		args[0] = prior;
		args[1] = now;
		args[2] = s;
		rep = rds_eval(a->rds, &renote_lua, 1, keys, 3, args);
	} else
		rep = rds_cmdv(a->rds, "ZADD", KEY_JOBS_INLINE, now, s, NULL);
	ok = rep != NULL && rds_type(rep) == RDS_INTEGER;
	if (rep != NULL)
		rds_free(rep);
	if (!ok) {
		free(s);
		log_warn("fan-out of post %lld not noted", j->post);
		return NULL;
	}
	return s;
}

/* Notes the first batch of j (in place of prior, made before the
 * commit, if not NULL: freed), to be done right after the response.
 * The note makes it durable before the response: should this process
 * die before doing it, the worker does. */
static int
note_inline(struct app *a, const struct job *j, char *prior)
{
	char *note = note_add(a, j, prior);

	free(prior);
	if (note == NULL) {
		tlstale_mark(a);
		return -1;
	}
	app_after(a, inline_run, note);
	return 0;
}

char *
fanout_publish_intent(struct app *a, long long post, long long author,
    long long published_at)
{
	struct job j = { JOB_ADD, post, author, published_at, -1, -1, 0 };

	return note_add(a, &j, NULL);
}

char *
fanout_repost_intent(struct app *a, long long post, long long reposter,
    long long at, int undo)
{
	struct job j = { undo ? JOB_UNREPOST : JOB_REPOST, post, reposter,
	    undo ? 0 : at, -1, -1, 0 };

	return note_add(a, &j, NULL);
}

void
fanout_intent_drop(struct app *a, char *note)
{
	rds_reply *rep;

	if (note == NULL)
		return;
	if ((rep = rds_cmdv(a->rds, "ZREM", KEY_JOBS_INLINE, note, NULL)) !=
	    NULL)
		rds_free(rep);
	free(note);
}

int
fanout_publish(struct app *a, long long post, long long author,
    long long published_at, char *note)
{
	struct job j = { JOB_ADD, post, author, published_at, -1, -1, 0 };
	int failed;

	failed = author_adds(a, &j) < -1;
	j.bumped = followed_first(a, author);	/* committed: done or not */
	if (failed)
		free(note);	/* a note made stays: the worker does it */
	else if (note_inline(a, &j, note) == 0)
		return 0;
	followed_lost(a, &j);
	return -1;
}

int
fanout_repost(struct app *a, long long post, long long reposter,
    long long at, char *note)
{
	struct job j = { JOB_REPOST, post, reposter, at, -1, -1, 0 };

	return note_inline(a, &j, note);
}

int
fanout_unrepost(struct app *a, long long post, long long reposter,
    char *note)
{
	struct job j = { JOB_UNREPOST, post, reposter, 0, -1, -1, 0 };

	return note_inline(a, &j, note);
}

int
fanout_reclaim(struct app *a, long long grace_ms)
{
	const char *keys[2] = { KEY_JOBS_INLINE, KEY_JOBS_QUEUE }, *args[2];
	char before[24];
	rds_reply *rep;
	int n = -1;

	snprintf(before, sizeof(before), "%lld", clock_wall_ms() - grace_ms);
	args[0] = before;
	args[1] = "100";
	if ((rep = rds_eval(a->rds, &reclaim_lua, 2, keys, 2, args)) == NULL)
		return -1;
	if (rds_type(rep) == RDS_INTEGER)
		n = (int)rds_int(rep);
	rds_free(rep);
	if (n > 0)
		log_info("took over %d fan-out batches of handlers that died "
		    "after answering", n);
	return n;
}

char *
fanout_remove_intent(struct app *a, long long post, long long author)
{
	struct job j = { JOB_REM, post, author, 0, -1, -1, 0 };

	return note_add(a, &j, NULL);
}

int
fanout_remove(struct app *a, long long post, long long author, char *note)
{
	struct job j = { JOB_REM, post, author, 0, -1, -1, 0 };
	int failed;

	failed = author_rems(a, &j) == -1;
	j.bumped = followed_first(a, author);	/* committed: done or not */
	if (failed || job_push(a, &j) == -1) {
		free(note);	/* a note made stays: the worker does it */
		followed_lost(a, &j);
		return -1;
	}
	fanout_intent_drop(a, note);	/* the job does what it said */
	return 0;
}

int
fanout_recover(struct app *a)
{
	rds_reply *rep;
	int n = 0;

	for (;;) {
		rep = rds_cmdv(a->rds, "LMOVE", KEY_JOBS_PROCESSING,
		    KEY_JOBS_QUEUE, "RIGHT", "RIGHT", NULL);
		if (rep == NULL)
			return -1;
		/* an error (Redis full, its disk failing, loading) is no
		 * empty list: the jobs stay to recover at the next round */
		if (rds_type(rep) == RDS_ERROR) {
			log_warn("jobs not recovered: %s", rds_str(rep));
			rds_free(rep);
			return -1;
		}
		if (rds_type(rep) != RDS_STRING) {
			rds_free(rep);
			break;
		}
		rds_free(rep);
		n++;
	}
	if (n > 0)
		log_info("recovered %d unfinished jobs", n);
	return n;
}

int
fanout_work(struct app *a, int max, long long slice_ms)
{
	long long until = clock_mono_ms() + slice_ms;
	const char *keys[2] = { KEY_JOBS_QUEUE, KEY_JOBS_PROCESSING };
	const char *args[2];
	rds_reply *rep, *done;
	struct job j;
	char *raw, *next;
	int ran = 0, n, failed;

	while (ran < max) {
		rep = rds_cmdv(a->rds, "LMOVE", KEY_JOBS_QUEUE,
		    KEY_JOBS_PROCESSING, "RIGHT", "LEFT", NULL);
		if (rep == NULL)
			return -1;
		if (rds_type(rep) == RDS_ERROR) {	/* not an empty queue */
			rds_free(rep);
			return -1;
		}
		if (rds_type(rep) != RDS_STRING) {
			rds_free(rep);
			break;
		}
		raw = xstrndup(rds_str(rep), rds_len(rep));
		rds_free(rep);
		next = NULL;
		if (job_decode(raw, strlen(raw), &j) == -1) {
			log_err("dropping malformed job: %.100s", raw);
		} else if ((n = job_batch(a, &j)) < 0) {
			free(raw);	/* stays in processing: redone */
			return -1;
		} else if (n == FANOUT_BATCH)
			next = job_encode(&j);
		if (a->fault_delay_ms > 0)	/* tests: a window to kill -9 in */
			usleep((useconds_t)a->fault_delay_ms * 1000);
		args[0] = raw;
		args[1] = next != NULL ? next : "";
		done = rds_eval(a->rds, &job_done_lua, 2, keys, 2, args);
		failed = done == NULL || rds_type(done) == RDS_ERROR;
		if (done != NULL)
			rds_free(done);
		free(raw);
		free(next);
		/* refused (Redis full): the job, and its continuation, stay
		 * in processing, redone once recovered */
		if (failed)
			return -1;
		ran++;
		if (clock_mono_ms() >= until)
			break;
	}
	return ran;
}

long long
fanout_pending(struct app *a)
{
	rds_reply *q = rds_cmdv(a->rds, "LLEN", KEY_JOBS_QUEUE, NULL), *p;
	long long n = -1;

	if (q == NULL)
		return -1;
	if ((p = rds_cmdv(a->rds, "LLEN", KEY_JOBS_PROCESSING, NULL)) != NULL) {
		if (rds_type(q) == RDS_INTEGER &&
		    rds_type(p) == RDS_INTEGER)
			n = rds_int(q) + rds_int(p);
		rds_free(p);
	}
	if (n >= 0 && (p = rds_cmdv(a->rds, "ZCARD", KEY_JOBS_INLINE,
	    NULL)) != NULL) {
		n = rds_type(p) == RDS_INTEGER ? n + rds_int(p) : -1;
		rds_free(p);
	}
	rds_free(q);
	return n;
}
