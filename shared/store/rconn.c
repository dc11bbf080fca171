/* rconn.c -- one connection to one Redis server, with timeouts, backoff
 * and reconnect; see rconn.h. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "base/clock.h"
#include "base/log.h"
#include "store/rcmd.h"
#include "store/rconn.h"
#include "store/rhealth.h"

#define RDS_FRESH_MS	1000	/* no liveness poll after a recent reply */
#define RCONN_CMD_STACK	4096	/* a command longer than this: on the heap */

void
rconn_init(struct rconn *r, const char *addr, int timeout_ms)
{
	memset(r, 0, sizeof(*r));
	strncpy(r->addr, addr, sizeof(r->addr) - 1);
	r->timeout_ms = timeout_ms > 0 ? timeout_ms : 500;
	r->health = rhealth_slot(addr);
}

/* The server answered: no backoff, here or on the host; a try this
 * process claimed is over. */
static void
answered(struct rconn *r)
{
	r->backoff_ms = 0;
	r->answered_ms = clock_mono_ms();
	rhealth_answered(r->health);
	r->try_until_ms = 0;
}

/* A reply: one that says the server refuses writes is told to the host
 * (rhealth_refused()). */
static void
replied(struct rconn *r, const redisReply *rep)
{
	static const char *const refusals[] = { "OOM ", "READONLY ",
	    "MISCONF ", "NOREPLICAS " };
	size_t i;

	if (rep->type != REDIS_REPLY_ERROR || rep->str == NULL)
		return;
	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
		if (strncmp(rep->str, refusals[i], strlen(refusals[i])) == 0) {
			if (!rconn_refusing(r))
				log_warn("redis %s refuses writes: %.80s",
				    r->addr, rep->str);
			rconn_refused(r);
			return;
		}
}

void
rconn_refused(struct rconn *r)
{
	r->refused_ms = clock_mono_ms();
	rhealth_refused(r->health);
}

int
rconn_refusing(const struct rconn *r)
{
	return rhealth_refusing(r->health) || (r->refused_ms != 0 &&
	    clock_mono_ms() - r->refused_ms < RHEALTH_REFUSED_MS);
}

/* Right after a failed hiredis call (errno still its): did the server
 * close the connection (end of file, broken pipe, reset)? */
static void
note_closed(struct rconn *r)
{
	r->peer_closed = r->c->err == REDIS_ERR_EOF ||
	    (r->c->err == REDIS_ERR_IO && (errno == EPIPE ||
	    errno == ECONNRESET));
}

/* rconn_drop() for a wait of tmo_ms that failed (RHEALTH_ANY: the
 * connect). */
static void
drop_after(struct rconn *r, int tmo_ms)
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
	/* A Redis that does not answer costs one timeout, then nothing
	 * until the backoff ends: 250 ms, doubling, at most 4 s.  The
	 * host's processes share it (rhealth.h); this process's own is
	 * kept too, for a host without the shared table. */
	rhealth_failed(r->health, tmo_ms);
	r->try_until_ms = 0;		/* the try is over */
	r->failed_ms = clock_mono_ms();
	r->backoff_ms = r->backoff_ms ? r->backoff_ms * 2 : 250;
	if (r->backoff_ms > 4000)
		r->backoff_ms = 4000;
	r->retry_at_ms = clock_mono_ms() + r->backoff_ms;
}

void
rconn_drop(struct rconn *r)
{
	drop_after(r, r->timeout_ms);
}

void
rconn_close(struct rconn *r)
{
	if (r->c != NULL)
		redisFree(r->c);
	r->c = NULL;
}

void
rconn_abandon(struct rconn *r)
{
	rconn_close(r);
	r->pending = 0;
	r->unsent = 0;
	r->peer_closed = 0;
}

/* A new connection c to r's server made ready: r's command timeout,
 * then AUTH when r has a password.  -1 when either failed (a refused
 * AUTH is logged unless quiet: once per outage). */
static int
ready(const struct rconn *r, redisContext *c, int quiet)
{
	struct timeval tv;
	redisReply *rep;
	int ok;

	tv.tv_sec = r->timeout_ms / 1000;
	tv.tv_usec = (r->timeout_ms % 1000) * 1000;
	if (redisSetTimeout(c, tv) != REDIS_OK)
		return -1;
	if (r->auth == NULL)
		return 0;
	rep = redisCommand(c, "AUTH %s", r->auth);
	ok = rep != NULL && rep->type == REDIS_REPLY_STATUS;
	if (!ok && !quiet)
		log_warn("redis %s: AUTH: %s", r->addr, rep != NULL &&
		    rep->type == REDIS_REPLY_ERROR ? rep->str : c->errstr);
	if (rep != NULL)
		freeReplyObject(rep);
	return ok ? 0 : -1;
}

/* A new hiredis context for addr: a unix socket path, or host:port. */
static redisContext *
dial(const char *addr, struct timeval ctv)
{
	char host[CFG_SOCK_MAX + 1];
	const char *colon;
	size_t n;

	if (addr[0] == '/' || (colon = strrchr(addr, ':')) == NULL)
		return redisConnectUnixWithTimeout(addr, ctv);
	n = (size_t)(colon - addr);
	memcpy(host, addr, n);
	host[n] = '\0';
	return redisConnectWithTimeout(host, (int)strtol(colon + 1, NULL, 10),
	    ctv);
}

/* rconn_connect(), and rconn_up() with claim 0: a question, which does
 * not claim the host's try (it sends nothing that would make it). */
static int
connect_for(struct rconn *r, int claim)
{
	struct timeval ctv = { 0, 200 * 1000 };
	long long now = clock_mono_ms();

	/* In this process's backoff, unless another process has had an
	 * answer since it began. */
	if (r->c == NULL && now < r->retry_at_ms &&
	    rhealth_up_ms(r->health) <= r->failed_ms)
		return -1;
	/* Another process found the server down since this one's last
	 * reply (not in the middle of a pipeline: that is finished; nor
	 * while this process holds the host's try). */
	if (r->pending == 0 && (r->c == NULL || r->c->obuf[0] == '\0') &&
	    now >= r->try_until_ms && rhealth_skip(r->health, r->answered_ms,
	    r->timeout_ms, claim ? &r->try_until_ms : NULL))
		return -1;
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
		 * abandoned are read by rconn_settle() at the next synchronous
		 * command and at every request's end, never left here. */
		if (r->pending > 0 || r->c->obuf[0] != '\0' ||
		    now - r->answered_ms < RDS_FRESH_MS ||
		    poll(&pfd, 1, 0) != 1)
			return 0;
		redisFree(r->c);
		r->c = NULL;
	}
	r->c = dial(r->local[0] != '\0' ? r->local : r->addr, ctv);
	if (r->c == NULL || r->c->err) {
		if (r->c != NULL && r->backoff_ms == 0)
			log_warn("redis %s: %s", r->addr, r->c->errstr);
		drop_after(r, RHEALTH_ANY);
		return -1;
	}
	if (ready(r, r->c, r->backoff_ms != 0) == -1) {
		rconn_drop(r);
		return -1;
	}
	r->gen++;
	r->pending = 0;
	r->connected_ms = clock_mono_ms();
	if (r->backoff_ms != 0)
		log_info("redis %s: reconnected", r->addr);
	/* backoff_ms is reset by the first reply, not by the connect: a hung
	 * Redis still accepts connections. */
	return 0;
}

int
rconn_connect(struct rconn *r)
{
	return connect_for(r, 1);
}

redisContext *
rconn_dial_another(const struct rconn *r)
{
	struct timeval ctv = { 0, 200 * 1000 };
	redisContext *c = dial(r->local[0] != '\0' ? r->local : r->addr, ctv);

	if (c != NULL && (c->err || ready(r, c, 1) == -1)) {
		redisFree(c);
		c = NULL;
	}
	return c;
}

int
rconn_up(struct rconn *r)
{
	return connect_for(r, 0) == 0;
}

redisReply *
rconn_cmd(struct rconn *r, int argc, const char **argv, const size_t *lens)
{
	redisReply *rep;

	/* A reply left queued would be read as this command's. */
	if (r->pending > 0 && rconn_settle(r) == -1)
		return NULL;
	if (rconn_connect(r) == -1)
		return NULL;
	r->ncmds++;
	r->ntrips++;
	rep = redisCommandArgv(r->c, argc, argv, lens);
	if (rep != NULL) {
		answered(r);
		replied(r, rep);
	}
	if (rep == NULL) {
		note_closed(r);
		log_warn("redis %s: %s", argv[0],
		    r->c->errstr[0] ? r->c->errstr : "no reply");
		rconn_drop(r);
	}
	return rep;
}

/* After hiredis queued (rc REDIS_OK) or failed to queue a command on
 * r: 0, or -1 (dropped). */
static int
queued(struct rconn *r, int rc)
{
	if (rc != REDIS_OK) {
		rconn_drop(r);
		return -1;
	}
	r->ncmds++;
	r->unsent = 1;
	r->pending++;
	return 0;
}

/* Queues one command on the connected r: 0, or -1 (dropped).  Its
 * bytes are written here, on the stack unless they are long (rcmd.h). */
static int
queue(struct rconn *r, int argc, const char **argv, const size_t *lens)
{
	char stack[RCONN_CMD_STACK], *cmd = stack;
	size_t len = rcmd_format(stack, sizeof(stack), argc, argv, lens);
	int rc;

	if (len > sizeof(stack))
		cmd = rcmd_alloc(argc, argv, lens, &len);
	rc = queued(r, redisAppendFormattedCommand(r->c, cmd, len));
	if (cmd != stack)
		free(cmd);
	return rc;
}

int
rconn_get_reply(struct rconn *r, redisReply **out)
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
		rconn_drop(r);
		return -1;
	}
	if (r->pending > 0)
		r->pending--;
	answered(r);
	*out = v;
	replied(r, *out);
	/* Scripts flushed under us: load them again before the next use. */
	if ((*out)->type == REDIS_REPLY_ERROR &&
	    strncmp((*out)->str, "NOSCRIPT", 8) == 0)
		r->gen++;
	return 0;
}

int
rconn_collect(struct rconn *r, int n)
{
	redisReply *rep;
	int i, errs = 0;

	for (i = 0; i < n; i++) {
		if (rconn_get_reply(r, &rep) == -1)
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
rconn_settle(struct rconn *r)
{
	int n = r->pending, rc;

	if (n == 0)
		return 0;
	/* A caller stopped reading its pipeline on an error path. */
	rc = rconn_collect(r, n);
	log_warn("redis: %d queued repl%s read and dropped (left unread by "
	    "the code that queued them)", n, n == 1 ? "y" : "ies");
	return rc == -1 ? -1 : 0;
}

int
rconn_append(struct rconn *r, int argc, const char **argv, const size_t *lens)
{
	if (rconn_connect(r) == -1)
		return -1;
	return queue(r, argc, argv, lens);
}

int
rconn_flush(struct rconn *r)
{
	int done = 0;

	if (r->c == NULL)
		return -1;
	while (!done)
		if (redisBufferWrite(r->c, &done) != REDIS_OK) {
			note_closed(r);
			log_warn("redis %s: %s", r->addr, r->c->errstr);
			rconn_drop(r);
			return -1;
		}
	return 0;
}

int
rconn_append_raw(struct rconn *r, const char *cmd, size_t len)
{
	if (rconn_connect(r) == -1)
		return -1;
	return queued(r, redisAppendFormattedCommand(r->c, cmd, len));
}
