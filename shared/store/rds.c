/* rds.c -- Redis access with timeouts, backoff and reconnect; see rds.h. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "store/rds.h"

#define RDS_ARGS_MAX	32
#define RDS_FRESH_MS	1000	/* no liveness poll after a recent reply */

void
rds_init(struct rds *r, const char *path, int timeout_ms)
{
	memset(r, 0, sizeof(*r));
	strncpy(r->path, path, sizeof(r->path) - 1);
	r->timeout_ms = timeout_ms > 0 ? timeout_ms : 500;
}

/* Right after a failed hiredis call (errno still its): did the server
 * close the connection (end of file, broken pipe, reset)? */
static void
note_closed(struct rds *r)
{
	r->peer_closed = r->c->err == REDIS_ERR_EOF ||
	    (r->c->err == REDIS_ERR_IO && (errno == EPIPE ||
	    errno == ECONNRESET));
}

void
rds_drop(struct rds *r)
{
	/* The server closed a connection that had been answering (Redis
	 * restarted; the liveness poll is skipped on busy connections):
	 * the next call reconnects at once, no backoff. */
	int closed = r->c != NULL && r->peer_closed && r->backoff_ms == 0 &&
	    r->answered_ms > r->connected_ms;

	r->unsent = 0;
	r->pending = 0;
	r->peer_closed = 0;
	if (r->c != NULL) {
		redisFree(r->c);
		r->c = NULL;
	}
	if (closed) {
		r->retry_at_ms = 0;
		return;
	}
	/* A Redis that does not answer costs one timeout per process, then
	 * nothing until the backoff ends: 250 ms, doubling, at most 4 s. */
	r->backoff_ms = r->backoff_ms ? r->backoff_ms * 2 : 250;
	if (r->backoff_ms > 4000)
		r->backoff_ms = 4000;
	r->retry_at_ms = clock_mono_ms() + r->backoff_ms;
}

void
rds_close(struct rds *r)
{
	if (r->c != NULL)
		redisFree(r->c);
	r->c = NULL;
}

/* AUTH on a new connection; -1 (logged once per outage) when refused. */
static int
rds_auth(struct rds *r)
{
	redisReply *rep = redisCommand(r->c, "AUTH %s", r->auth);
	int ok = rep != NULL && rep->type == REDIS_REPLY_STATUS;

	if (!ok && r->backoff_ms == 0)
		log_warn("redis %s: AUTH: %s", r->path, rep != NULL &&
		    rep->type == REDIS_REPLY_ERROR ? rep->str : r->c->errstr);
	if (rep != NULL)
		freeReplyObject(rep);
	return ok ? 0 : -1;
}

static int
rds_connect(struct rds *r)
{
	struct timeval ctv = { 0, 200 * 1000 }, tv;

	if (r->c != NULL) {
		struct pollfd pfd = { r->c->fd, POLLIN, 0 };

		/* Nothing is expected on an idle connection: readable means
		 * the server closed it (restarted).  Replace it now.  A
		 * connection that answered less than RDS_FRESH_MS ago is
		 * taken as alive without the poll (one syscall fewer per
		 * request under load, where a restart shows as failed
		 * commands anyway).  One with replies still to read is not
		 * idle: readable is those replies (a caller that stalled
		 * mid-pipeline, such as a flusher between two rounds of a
		 * take), and replacing it would lose them.  Replies a caller
		 * abandoned are read by rds_settle() at the next synchronous
		 * command and at every request's end, never left here. */
		if (r->pending > 0 || r->c->obuf[0] != '\0' ||
		    clock_mono_ms() - r->answered_ms < RDS_FRESH_MS ||
		    poll(&pfd, 1, 0) != 1)
			return 0;
		redisFree(r->c);
		r->c = NULL;
	}
	if (clock_mono_ms() < r->retry_at_ms)
		return -1;
	r->c = redisConnectUnixWithTimeout(r->path, ctv);
	if (r->c == NULL || r->c->err) {
		if (r->c != NULL && r->backoff_ms == 0)
			log_warn("redis %s: %s", r->path, r->c->errstr);
		rds_drop(r);
		return -1;
	}
	tv.tv_sec = r->timeout_ms / 1000;
	tv.tv_usec = (r->timeout_ms % 1000) * 1000;
	if (redisSetTimeout(r->c, tv) != REDIS_OK) {
		rds_drop(r);
		return -1;
	}
	if (r->auth != NULL && rds_auth(r) == -1) {
		rds_drop(r);
		return -1;
	}
	r->gen++;
	r->pending = 0;
	r->connected_ms = clock_mono_ms();
	if (r->backoff_ms != 0)
		log_info("redis %s: reconnected", r->path);
	/* backoff_ms is reset by the first reply, not by the connect: a hung
	 * Redis still accepts connections. */
	return 0;
}

int
rds_up(struct rds *r)
{
	return rds_connect(r) == 0;
}

redisReply *
rds_cmd(struct rds *r, int argc, const char **argv, const size_t *lens)
{
	redisReply *rep;

	/* A reply left queued would be read as this command's. */
	if (r->pending > 0 && rds_settle(r) == -1)
		return NULL;
	if (rds_connect(r) == -1)
		return NULL;
	r->ncmds++;
	r->ntrips++;
	rep = redisCommandArgv(r->c, argc, argv, lens);
	if (rep != NULL) {
		r->backoff_ms = 0;
		r->answered_ms = clock_mono_ms();
	}
	if (rep == NULL) {
		note_closed(r);
		log_warn("redis %s: %s", argv[0],
		    r->c->errstr[0] ? r->c->errstr : "no reply");
		rds_drop(r);
	}
	return rep;
}

redisReply *
rds_cmdv(struct rds *r, const char *arg0, ...)
{
	const char *argv[RDS_ARGS_MAX];
	size_t lens[RDS_ARGS_MAX];
	const char *a;
	va_list ap;
	int n = 0;

	va_start(ap, arg0);
	for (a = arg0; a != NULL && n < RDS_ARGS_MAX; a = va_arg(ap, const char *)) {
		argv[n] = a;
		lens[n] = strlen(a);
		n++;
	}
	va_end(ap);
	return rds_cmd(r, n, argv, lens);
}

#define RDS_EVAL_MAX	(RDS_ARGS_MAX * 32)

static int
script_cached(const struct rds *r, const struct rds_script *s)
{
	return s->sha[0] != '\0' && s->loaded_on == r && s->gen == r->gen;
}

static int
rds_script_load(struct rds *r, struct rds_script *s)
{
	redisReply *rep;

	if (script_cached(r, s))
		return 0;
	rep = rds_cmdv(r, "SCRIPT", "LOAD", s->src, NULL);
	if (rep == NULL)
		return -1;
	if (rep->type != REDIS_REPLY_STRING || rep->len != 40) {
		log_err("SCRIPT LOAD: %s", rep->type == REDIS_REPLY_ERROR ?
		    rep->str : "unexpected reply");
		freeReplyObject(rep);
		return -1;
	}
	memcpy(s->sha, rep->str, 40);
	s->sha[40] = '\0';
	s->loaded_on = r;
	s->gen = r->gen;
	freeReplyObject(rep);
	return 0;
}

/* argv of EVALSHA/EVAL: cmd, script, numkeys, keys..., args... */
static int
eval_argv(const char *cmd, const char *script, int nkeys, const char **keys,
    int nargs, const char **args, const char **argv, size_t *lens,
    char *nk, size_t nksz)
{
	int i, n = 0;

	if (3 + nkeys + nargs > RDS_EVAL_MAX)
		return -1;
	snprintf(nk, nksz, "%d", nkeys);
	argv[n++] = cmd;
	argv[n++] = script;
	argv[n++] = nk;
	for (i = 0; i < nkeys; i++)
		argv[n++] = keys[i];
	for (i = 0; i < nargs; i++)
		argv[n++] = args[i];
	for (i = 0; i < n; i++)
		lens[i] = strlen(argv[i]);
	return n;
}

redisReply *
rds_eval(struct rds *r, struct rds_script *s, int nkeys, const char **keys,
    int nargs, const char **args)
{
	const char *argv[RDS_EVAL_MAX];
	size_t lens[RDS_EVAL_MAX];
	redisReply *rep;
	char nk[16];
	int n;

	if (r->pending > 0)	/* never inside a pipeline */
		return NULL;
	if (rds_script_load(r, s) == -1)
		return NULL;
	n = eval_argv("EVALSHA", s->sha, nkeys, keys, nargs, args, argv, lens,
	    nk, sizeof(nk));
	if (n < 0)
		return NULL;
	rep = rds_cmd(r, n, argv, lens);
	if (rep != NULL && rep->type == REDIS_REPLY_ERROR &&
	    strncmp(rep->str, "NOSCRIPT", 8) == 0) {
		freeReplyObject(rep);
		argv[0] = "EVAL";
		argv[1] = s->src;
		lens[0] = 4;
		lens[1] = strlen(s->src);
		rep = rds_cmd(r, n, argv, lens);
	}
	return rep;
}

/* Queues one command on the connected r: 0, or -1 (dropped). */
static int
queue(struct rds *r, int argc, const char **argv, const size_t *lens)
{
	if (redisAppendCommandArgv(r->c, argc, argv, lens) != REDIS_OK) {
		rds_drop(r);
		return -1;
	}
	r->ncmds++;
	r->unsent = 1;
	r->pending++;
	return 0;
}

int
rds_append_eval(struct rds *r, struct rds_script *s, int nkeys,
    const char **keys, int nargs, const char **args)
{
	const char *argv[RDS_EVAL_MAX];
	size_t lens[RDS_EVAL_MAX];
	char nk[16];
	int n;

	if (rds_connect(r) == -1)
		return -1;
	/* SCRIPT LOAD only while no reply is pending (it reads its own
	 * reply); until then the source goes with each call. */
	if (!script_cached(r, s) && r->pending == 0 &&
	    rds_script_load(r, s) == -1)
		return -1;
	if (script_cached(r, s))
		n = eval_argv("EVALSHA", s->sha, nkeys, keys, nargs, args, argv,
		    lens, nk, sizeof(nk));
	else
		n = eval_argv("EVAL", s->src, nkeys, keys, nargs, args, argv,
		    lens, nk, sizeof(nk));
	if (n < 0)
		return -1;
	return queue(r, n, argv, lens);
}

int
rds_get_reply(struct rds *r, redisReply **out)
{
	void *v;

	if (r->unsent) {
		r->ntrips++;
		r->unsent = 0;
	}
	if (r->c == NULL)		/* dropped already: nothing to read */
		return -1;
	if (redisGetReply(r->c, &v) != REDIS_OK) {
		note_closed(r);
		log_warn("redis pipeline: %s", r->c->errstr);
		rds_drop(r);
		return -1;
	}
	if (r->pending > 0)
		r->pending--;
	r->backoff_ms = 0;
	r->answered_ms = clock_mono_ms();
	*out = v;
	/* Scripts flushed under us: load them again before the next use. */
	if ((*out)->type == REDIS_REPLY_ERROR &&
	    strncmp((*out)->str, "NOSCRIPT", 8) == 0)
		r->gen++;
	return 0;
}

int
rds_collect(struct rds *r, int n)
{
	redisReply *rep;
	int i, errs = 0;

	for (i = 0; i < n; i++) {
		if (rds_get_reply(r, &rep) == -1)
			return -1;
		if (rep->type == REDIS_REPLY_ERROR) {
			if (errs++ == 0)
				log_warn("redis pipeline: %s", rep->str);
		}
		freeReplyObject(rep);
	}
	return errs;
}

int
rds_settle(struct rds *r)
{
	int n = r->pending, rc;

	if (n == 0)
		return 0;
	/* A caller stopped reading its pipeline on an error path. */
	rc = rds_collect(r, n);
	log_warn("redis: %d queued repl%s read and dropped (left unread by "
	    "the code that queued them)", n, n == 1 ? "y" : "ies");
	return rc == -1 ? -1 : 0;
}

int
rds_append(struct rds *r, int argc, const char **argv, const size_t *lens)
{
	if (rds_connect(r) == -1)
		return -1;
	return queue(r, argc, argv, lens);
}

/* Calls fn(key, arg) for every key matching pattern (SCAN, 1000 keys a
 * step); fn returns 0 to go on, -1 to stop.  Keys visited, or -1. */
static long long
scan_each(struct rds *r, const char *pattern,
    int (*fn)(const char *key, void *arg), void *arg)
{
	redisReply *rep;
	char cursor[32] = "0";
	long long n = 0;
	size_t i;

	do {
		rep = rds_cmdv(r, "SCAN", cursor, "MATCH", pattern, "COUNT",
		    "1000", NULL);
		if (rep == NULL)
			return -1;
		if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2) {
			freeReplyObject(rep);
			return -1;
		}
		snprintf(cursor, sizeof(cursor), "%s", rep->element[0]->str);
		for (i = 0; i < rep->element[1]->elements; i++, n++)
			if (fn(rep->element[1]->element[i]->str, arg) == -1) {
				freeReplyObject(rep);
				return -1;
			}
		freeReplyObject(rep);
	} while (strcmp(cursor, "0") != 0);
	return n;
}

static int
del_one(const char *key, void *arg)
{
	redisReply *del = rds_cmdv(arg, "DEL", key, NULL);

	if (del == NULL)
		return -1;
	freeReplyObject(del);
	return 0;
}

long long
rds_del_matching(struct rds *r, const char *pattern)
{
	return scan_each(r, pattern, del_one, r);
}

int
rds_append_strs(struct rds *r, int argc, const char **argv)
{
	size_t lens[RDS_ARGS_MAX * 4];
	int i;

	if (argc > (int)(sizeof(lens) / sizeof(lens[0])))
		return -1;
	for (i = 0; i < argc; i++)
		lens[i] = strlen(argv[i]);
	return rds_append(r, argc, argv, lens);
}

void
rds_free(rds_reply *r)
{
	if (r != NULL)
		freeReplyObject(r);
}
