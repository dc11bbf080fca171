/* rds.c -- the Redis of one process: one server or a cluster, the Lua
 * scripts and the replies' parts; see rds.h.
 *
 * One file: why this file of over 500 lines is one concept -- every call
 * takes the same turn (one server or the cluster, a reply or a dropped
 * connection), and the pipelines, scripts and keys recorded share it.
 */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "base/log.h"
#include "store/rds.h"
#include "store/rds_int.h"

#define RDS_ARGS_MAX	32
#define RDS_EVAL_MAX	(RDS_ARGS_MAX * 32)

void
rds_init(struct rds *r, const char *path, int timeout_ms)
{
	memset(r, 0, sizeof(*r));
	rconn_init(&r->one, path, timeout_ms);
}

int
rds_init_cluster(struct rds *r, const char *seeds, int timeout_ms,
    const char *auth, const char *sockdir)
{
	memset(r, 0, sizeof(*r));
	rconn_init(&r->one, "", timeout_ms);
	r->cl = rcl_open(seeds, timeout_ms > 0 ? timeout_ms : 500, auth,
	    sockdir);
	return r->cl != NULL ? 0 : -1;
}

void
rds_set_auth(struct rds *r, const char *auth)
{
	r->one.auth = auth;
}

void
rds_close(struct rds *r)
{
	rconn_close(&r->one);
	rcl_close(r->cl);
	r->cl = NULL;
}

int
rds_is_cluster(const struct rds *r)
{
	return r->cl != NULL;
}

int
rds_is_local(const struct rds *r)
{
	/* a unix socket is this machine's (rconn.c dials "/..." so) */
	return r->cl == NULL && r->one.addr[0] == '/';
}

unsigned
rds_gen(const struct rds *r)
{
	return r->cl != NULL ? 0 : r->one.gen;
}

int
rds_refusing(const struct rds *r)
{
	int i;

	if (r->cl == NULL)
		return rconn_refusing(&r->one);
	for (i = 0; i < r->cl->nnodes; i++)
		if (rconn_refusing(&r->cl->nodes[i]))
			return 1;
	return 0;
}

void
rds_refusing_renew(struct rds *r)
{
	int i;

	if (r->cl == NULL) {
		if (rconn_refusing(&r->one))
			rconn_refused(&r->one);
		return;
	}
	for (i = 0; i < r->cl->nnodes; i++)
		if (rconn_refusing(&r->cl->nodes[i]))
			rconn_refused(&r->cl->nodes[i]);
}

/* The RDS_* types are hiredis's. */
_Static_assert(RDS_STRING == REDIS_REPLY_STRING &&
    RDS_ARRAY == REDIS_REPLY_ARRAY && RDS_INTEGER == REDIS_REPLY_INTEGER &&
    RDS_NIL == REDIS_REPLY_NIL && RDS_STATUS == REDIS_REPLY_STATUS &&
    RDS_ERROR == REDIS_REPLY_ERROR, "rds.h's RDS_* are hiredis's");

int
rds_type(const rds_reply *rep)
{
	return rep->type;
}

long long
rds_int(const rds_reply *rep)
{
	return rep->integer;
}

const char *
rds_str(const rds_reply *rep)
{
	return rep->str;
}

size_t
rds_len(const rds_reply *rep)
{
	return rep->len;
}

size_t
rds_n(const rds_reply *rep)
{
	return rep->type == RDS_ARRAY ? rep->elements : 0;
}

rds_reply *
rds_at(const rds_reply *rep, size_t i)
{
	return rep->element[i];
}

void
rds_wait_budget(struct rds *r, int waits)
{
	if (r->cl != NULL)
		rcl_budget(r->cl, waits);
}

int
rds_same_node(const struct rds *r, const char *a, const char *b)
{
	return r->cl == NULL || rcl_same_node(r->cl, a, b);
}

unsigned long long
rds_ncmds(const struct rds *r)
{
	return r->one.ncmds + (r->cl != NULL ? r->cl->ncmds : 0);
}

unsigned long long
rds_ntrips(const struct rds *r)
{
	return r->one.ntrips + (r->cl != NULL ? r->cl->ntrips : 0);
}

int
rds_up(struct rds *r)
{
	return r->cl != NULL ? rcl_up(r->cl) : rconn_up(&r->one);
}

void
rds_drop(struct rds *r)
{
	if (r->cl != NULL)
		rcl_settle(r->cl);
	else
		rconn_drop(&r->one);
}

unsigned long long
rds_key_hash(const char *key, size_t len)
{
	return rds_key_hash_more(14695981039346656037ULL, key, len);
}

unsigned long long
rds_key_hash_more(unsigned long long h, const char *key, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)key[i]) * 1099511628211ULL;
	return h;
}

void
rds_record(struct rds *r, struct rds_keys *k)
{
	if (k != NULL)
		k->n = k->over = 0;
	r->rec = k;
}

static void
record_hash(struct rds *r, unsigned long long h)
{
	struct rds_keys *k = r->rec;

	if (k->n == RDS_KEYS_MAX)
		k->over = 1;
	else
		k->h[k->n++] = h;
}

static void
record(struct rds *r, const char *key, size_t len)
{
	record_hash(r, rds_key_hash(key, len));
}

void
rds_note(struct rds *r, unsigned long long h)
{
	if (r->rec != NULL)
		record_hash(r, h);
}

static void
record_keys(struct rds *r, int nkeys, const char **keys)
{
	int i;

	for (i = 0; r->rec != NULL && i < nkeys; i++)
		record(r, keys[i], strlen(keys[i]));
}

redisReply *
rds_cmd(struct rds *r, int argc, const char **argv, const size_t *lens)
{
	if (r->rec != NULL && argc > 1)
		record(r, argv[1], lens != NULL ? lens[1] : strlen(argv[1]));
	if (r->cl != NULL)
		return rcl_cmd(r->cl, argc, argv, lens);
	return rconn_cmd(&r->one, argc, argv, lens);
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
	for (a = arg0; a != NULL; a = va_arg(ap, const char *)) {
		if (n == RDS_ARGS_MAX) {	/* an error, never a cut */
			va_end(ap);
			log_err("redis: a command of more than %d arguments (%s)",
			    RDS_ARGS_MAX, arg0);
			return NULL;
		}
		argv[n] = a;
		lens[n] = strlen(a);
		n++;
	}
	va_end(ap);
	return rds_cmd(r, n, argv, lens);
}

/* A command sent where keys[0] lives (a cluster), or to the server. */
static redisReply *
cmd_at(struct rds *r, int nkeys, const char **keys, int argc,
    const char **argv, const size_t *lens)
{
	if (r->cl == NULL)
		return rconn_cmd(&r->one, argc, argv, lens);
	return rcl_cmd_slot(r->cl, nkeys > 0 ? rcl_keyslot(keys[0],
	    strlen(keys[0])) : -1, argc, argv, lens);
}

static int
script_cached(const struct rds *r, const struct rds_script *s)
{
	/* A cluster has no per-connection record: EVALSHA once the SHA1 is
	 * known, and a node that lacks the script answers NOSCRIPT. */
	if (r->cl != NULL)
		return s->sha[0] != '\0';
	return s->sha[0] != '\0' && s->loaded_on == &r->one &&
	    s->gen == r->one.gen;
}

/* A SCRIPT LOAD's reply: s's SHA1, loaded on the one server's
 * connection as it is now.  0, or -1 when the reply is not a SHA1. */
static int
script_learned(struct rds *r, struct rds_script *s, const redisReply *rep)
{
	if (rep->type != REDIS_REPLY_STRING || rep->len != 40)
		return -1;
	memcpy(s->sha, rep->str, 40);
	s->sha[40] = '\0';
	s->loaded_on = &r->one;
	s->gen = r->one.gen;
	return 0;
}

static int
rds_script_load(struct rds *r, struct rds_script *s, int nkeys,
    const char **keys)
{
	const char *argv[] = { "SCRIPT", "LOAD", s->src };
	const size_t lens[] = { 6, 4, strlen(s->src) };
	redisReply *rep;

	if (script_cached(r, s))
		return 0;
	if ((rep = cmd_at(r, nkeys, keys, 3, argv, lens)) == NULL)
		return -1;
	if (script_learned(r, s, rep) == -1) {
		log_err("SCRIPT LOAD: %s", rep->type == REDIS_REPLY_ERROR ?
		    rep->str : "unexpected reply");
		freeReplyObject(rep);
		return -1;
	}
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

/* Replies queued and not read (on a cluster, not those a failed read
 * left: rcl_drop_failed()). */
static int
pending(struct rds *r)
{
	if (r->cl == NULL)
		return r->one.pending;
	rcl_drop_failed(r->cl);
	return rcl_pending(r->cl);
}

/* A script the one server's connection has not loaded (a process's
 * first use, or the first since it reconnected): SCRIPT LOAD, for the
 * SHA1 later calls send, and an EVAL of the source (argv) go together,
 * one round trip where the load and an EVALSHA took two. */
static redisReply *
eval_loading(struct rds *r, struct rds_script *s, int n, const char **argv,
    const size_t *lens)
{
	const char *la[] = { "SCRIPT", "LOAD", s->src };
	const size_t ll[] = { 6, 4, strlen(s->src) };
	redisReply *sha, *rep;

	if (rconn_append(&r->one, 3, la, ll) == -1 ||
	    rconn_append(&r->one, n, argv, lens) == -1)
		return NULL;	/* dropped: nothing stays queued */
	if (rconn_get_reply(&r->one, &sha) == -1)
		return NULL;
	if (rconn_get_reply(&r->one, &rep) == -1) {
		freeReplyObject(sha);
		return NULL;
	}
	(void)script_learned(r, s, sha);	/* else loaded at the next use */
	freeReplyObject(sha);
	return rep;
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

	if (pending(r) > 0)	/* never inside a pipeline */
		return NULL;
	record_keys(r, nkeys, keys);
	if (r->cl == NULL && !script_cached(r, s)) {
		n = eval_argv("EVAL", s->src, nkeys, keys, nargs, args, argv,
		    lens, nk, sizeof(nk));
		return n < 0 ? NULL : eval_loading(r, s, n, argv, lens);
	}
	if (rds_script_load(r, s, nkeys, keys) == -1)
		return NULL;
	n = eval_argv("EVALSHA", s->sha, nkeys, keys, nargs, args, argv, lens,
	    nk, sizeof(nk));
	if (n < 0)
		return NULL;
	rep = cmd_at(r, nkeys, keys, n, argv, lens);
	if (rep != NULL && rep->type == REDIS_REPLY_ERROR &&
	    strncmp(rep->str, "NOSCRIPT", 8) == 0) {
		freeReplyObject(rep);
		argv[0] = "EVAL";
		argv[1] = s->src;
		lens[0] = 4;
		lens[1] = strlen(s->src);
		rep = cmd_at(r, nkeys, keys, n, argv, lens);
	}
	return rep;
}

int
rds_script_ready(struct rds *r, struct rds_script *s, int nkeys,
    const char **keys)
{
	if (r->cl == NULL && rconn_connect(&r->one) == -1)
		return -1;
	if (script_cached(r, s) || pending(r) != 0)
		return 0;
	return rds_script_load(r, s, nkeys, keys);
}

int
rds_append_eval(struct rds *r, struct rds_script *s, int nkeys,
    const char **keys, int nargs, const char **args)
{
	const char *argv[RDS_EVAL_MAX];
	size_t lens[RDS_EVAL_MAX];
	char nk[16];
	int n, cached;

	record_keys(r, nkeys, keys);
	if (r->cl == NULL && rconn_connect(&r->one) == -1)
		return -1;
	/* SCRIPT LOAD only while no reply is pending (it reads its own
	 * reply); until then the source goes with each call. */
	if (!script_cached(r, s) && pending(r) == 0 &&
	    rds_script_load(r, s, nkeys, keys) == -1)
		return -1;
	cached = script_cached(r, s);
	n = eval_argv(cached ? "EVALSHA" : "EVAL", cached ? s->sha : s->src,
	    nkeys, keys, nargs, args, argv, lens, nk, sizeof(nk));
	if (n < 0)
		return -1;
	if (r->cl != NULL)
		return rcl_append(r->cl, n, argv, lens, s->src);
	return rconn_append(&r->one, n, argv, lens);
}

int
rds_get_reply(struct rds *r, redisReply **out)
{
	struct rds_stash *st = r->stash;

	if (st != NULL && st->next < st->n) {
		int i = st->next++;

		*out = i < RDS_STASH_MAX ? st->rep[i] : NULL;
		if (i < RDS_STASH_MAX)
			st->rep[i] = NULL;
		return *out != NULL ? 0 : -1;
	}
	if (r->cl != NULL)
		return rcl_get_reply(r->cl, out);
	return rconn_get_reply(&r->one, out);
}

int
rds_queued(const struct rds *r)
{
	return r->cl != NULL ? 0 : r->one.pending;
}

int
rds_send_queued(struct rds *r)
{
	if (r->cl != NULL || r->one.pending == 0)
		return 0;
	return rconn_flush(&r->one);
}

void
rds_stash_fill(struct rds *r, struct rds_stash *st, int n)
{
	int i;

	st->n = n;	/* past RDS_STASH_MAX: handed out as failed */
	st->next = 0;
	for (i = 0; i < n; i++) {
		redisReply *rep = NULL;

		if (rconn_get_reply(&r->one, &rep) == -1)
			rep = NULL;
		if (i < RDS_STASH_MAX)
			st->rep[i] = rep;
		else if (rep != NULL)	/* more than a page sends: never */
			freeReplyObject(rep);
	}
}

void
rds_stash_use(struct rds *r, struct rds_stash *st)
{
	r->stash = st;
	if (st != NULL)
		r->nstashes++;
}

unsigned long long
rds_nstashes(const struct rds *r)
{
	return r != NULL ? r->nstashes : 0;
}

void
rds_stash_free(struct rds_stash *st)
{
	int i;

	for (i = st->next; i < st->n && i < RDS_STASH_MAX; i++)
		if (st->rep[i] != NULL)
			freeReplyObject(st->rep[i]);
	st->n = st->next = 0;
}

int
rds_collect(struct rds *r, int n)
{
	redisReply *rep;
	int i, errs = 0, failed = 0;

	if (r->cl == NULL)
		return rconn_collect(&r->one, n);
	/* all n, a failed one among them: none left for the next reader */
	for (i = 0; i < n; i++) {
		if (rcl_get_reply(r->cl, &rep) == -1) {
			failed = 1;
			continue;
		}
		if (rep->type == REDIS_REPLY_ERROR && errs++ == 0)
			log_warn("redis pipeline: %s", rep->str);
		freeReplyObject(rep);
	}
	return failed ? -1 : errs;
}

int
rds_settle(struct rds *r)
{
	if (r->cl != NULL)
		return rcl_settle(r->cl);
	return rconn_settle(&r->one);
}

int
rds_append(struct rds *r, int argc, const char **argv, const size_t *lens)
{
	if (r->rec != NULL && argc > 1)
		record(r, argv[1], lens != NULL ? lens[1] : strlen(argv[1]));
	if (r->cl != NULL)
		return rcl_append(r->cl, argc, argv, lens, NULL);
	return rconn_append(&r->one, argc, argv, lens);
}

/* One SCAN step on node (a cluster's master; -1: the one server). */
static redisReply *
scan_step(struct rds *r, int node, const char *cursor, const char *pattern)
{
	const char *argv[] = { "SCAN", cursor, "MATCH", pattern, "COUNT",
	    "1000" };
	size_t lens[6];
	int i;

	for (i = 0; i < 6; i++)
		lens[i] = strlen(argv[i]);
	if (node < 0)
		return rconn_cmd(&r->one, 6, argv, lens);
	return rcl_node_cmd(r->cl, node, 6, argv, lens);
}

/* Calls fn on every key matching pattern on one node, SCAN 1000 keys a
 * step.  Keys seen, or -1 (Redis failed, a reply of the wrong shape, or
 * fn said -1). */
static long long
scan_on(struct rds *r, int node, const char *pattern,
    int (*fn)(struct rds *, const char *, void *), void *arg)
{
	redisReply *rep, *keys;
	char cursor[32] = "0";
	long long n = 0;
	size_t i;

	do {
		if ((rep = scan_step(r, node, cursor, pattern)) == NULL)
			return -1;
		if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
		    rep->element[0]->type != REDIS_REPLY_STRING ||
		    rep->element[1]->type != REDIS_REPLY_ARRAY) {
			freeReplyObject(rep);
			return -1;
		}
		snprintf(cursor, sizeof(cursor), "%s", rep->element[0]->str);
		keys = rep->element[1];
		for (i = 0; i < keys->elements; i++, n++) {
			if (keys->element[i]->type != REDIS_REPLY_STRING ||
			    fn(r, keys->element[i]->str, arg) == -1) {
				freeReplyObject(rep);
				return -1;
			}
		}
		freeReplyObject(rep);
	} while (strcmp(cursor, "0") != 0);
	return n;
}

long long
rds_scan(struct rds *r, const char *pattern,
    int (*fn)(struct rds *, const char *key, void *arg), void *arg)
{
	int masters[RCL_NODES], n, i;
	long long total = 0, k;

	if (r->cl == NULL)
		return scan_on(r, -1, pattern, fn, arg);
	if ((n = rcl_masters(r->cl, masters, RCL_NODES)) == 0)
		return -1;
	for (i = 0; i < n; i++) {
		if ((k = scan_on(r, masters[i], pattern, fn, arg)) < 0)
			return -1;
		total += k;
	}
	return total;
}

static int
del_one(struct rds *r, const char *key, void *arg)
{
	redisReply *del = rds_cmdv(r, "DEL", key, NULL);

	(void)arg;
	if (del == NULL)
		return -1;
	freeReplyObject(del);
	return 0;
}

long long
rds_del_matching(struct rds *r, const char *pattern)
{
	return rds_scan(r, pattern, del_one, NULL);
}

int
rds_signature(struct rds *r, char *out, size_t sz, unsigned long long *hash)
{
	rds_reply *rep;
	const char *p;
	int n;

	if (r->cl != NULL)
		return rcl_signature(r->cl, out, sz, hash);
	/* One server: all lost shows as the missing generation key; a
	 * restart from its append-only file after the machine went down
	 * may still miss the last second it acknowledged, which its new run
	 * id tells (the worker asks whether the machine booted since) */
	rep = rds_cmdv(r, "INFO", "server", NULL);
	if (rep == NULL || rds_type(rep) != RDS_STRING ||
	    (p = strstr(rds_str(rep), "run_id:")) == NULL) {
		rds_free(rep);
		return -1;
	}
	p += 7;
	n = (int)strcspn(p, "\r\n");
	n = n > 40 ? 40 : n;
	*hash = rds_key_hash(p, (size_t)n) & 0x7fffffffffffffffULL;
	snprintf(out, sz, "run_id %.*s", n, p);
	rds_free(rep);
	return 0;
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
