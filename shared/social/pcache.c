/* pcache.c -- the profile cache; see pcache.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <sodium.h>

#include "base/fault.h"
#include "base/log.h"
#include "social/pcache.h"
#include "social/tlstale.h"
#include "store/db.h"
#include "store/key.h"

#define PC_TTL		3600
#define PC_JITTER	600
#define PC_NEG_TTL	30

static void
count(struct app *a, const char *what)
{
	rds_reply *rep = rds_cmdv(a->rds, "HINCRBY", KEY_METRICS_CACHE, what,
	    "1", NULL);

	if (rep != NULL)
		rds_free(rep);
}

/* Logins never change and users are never deleted, so a login's id,
 * once read, stays true for the life of the process: a page that knows
 * it can queue the user's own keys (a profile's timeline) with the
 * profile's GET.  Direct-mapped; a collision replaces. */
#define PC_KNOWN	1024

static struct {
	char		login[40];
	long long	id;
} known[PC_KNOWN];

static unsigned
known_slot(const char *login)
{
	unsigned h = 2166136261u;

	for (; *login != '\0'; login++)
		h = (h ^ (unsigned char)*login) * 16777619u;
	return h % PC_KNOWN;
}

long long
pcache_known(const char *login)
{
	unsigned k = known_slot(login);

	return strcmp(known[k].login, login) == 0 ? known[k].id : 0;
}

static void
remember(const struct account *u)
{
	unsigned k = known_slot(u->login);

	snprintf(known[k].login, sizeof(known[k].login), "%s", u->login);
	known[k].id = u->id;
}

/* The entry in rep: 1 hit, 0 negative hit, -1 miss. */
static int
parse(const rds_reply *rep, struct account *u)
{
	json_error_t err;
	json_t *o;
	json_int_t id;
	const char *login, *name;
	int rc = -1;

	if (rds_type(rep) == RDS_STRING) {
		o = json_loadb(rds_str(rep), rds_len(rep), JSON_DECODE_ANY, &err);
		if (o != NULL && json_is_null(o))
			rc = 0;
		else if (o != NULL && json_unpack(o, "{s:I,s:s,s:s}", "id", &id,
		    "login", &login, "name", &name) == 0) {
			memset(u, 0, sizeof(*u));
			u->id = id;
			snprintf(u->login, sizeof(u->login), "%s", login);
			snprintf(u->name, sizeof(u->name), "%s", name);
			rc = 1;
		}
		json_decref(o);
	}
	return rc;
}

/* 1 hit, 0 negative hit, -1 miss (or Redis down: *down). */
static int
lookup(struct app *a, const char *key, struct account *u, int *down)
{
	rds_reply *rep = rds_cmdv(app_reader(a), "GET", key, NULL);
	int rc;

	if (rep == NULL) {
		*down = 1;
		return -1;
	}
	rc = parse(rep, u);
	rds_free(rep);
	return rc;
}

/* The rebuild's end: the entry (ARGV[2]; "" none) is set, for ARGV[3]
 * seconds, only while the rebuild's lock (KEYS[2]) still holds its token
 * (ARGV[1]), and the lock goes if it is its own.  An invalidation drops
 * entry and lock together (pcache_invalidate()): a rebuild that read the
 * row before a rename committed then puts nothing, where a plain SET
 * after the DEL kept the old name for the entry's hour. */
static struct rds_script put_lua = { .src =
	"#!lua\n"
	"if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end\n"
	"if ARGV[2] ~= '' then\n"
	"  redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3]) end\n"
	"redis.call('DEL', KEYS[2])\n"
	"return 1\n" };

/* Queues the rebuild's end under the lock's token: the entry (found: u;
 * else the negative one; put: 0, none) and the lock's release.  1
 * queued, 0 not. */
static int
store(struct app *a, const char *key, const char *lock, const char *token,
    int put, int found, const struct account *u)
{
	char ttl[16] = "0", *js = NULL;
	const char *keys[2] = { key, lock }, *args[3];
	json_t *o;
	int queued;

	if (put && found) {
		o = json_pack("{s:I,s:s,s:s}", "id", (json_int_t)u->id, "login",
		    u->login, "name", u->name);
		js = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
		json_decref(o);
		snprintf(ttl, sizeof(ttl), "%u",
		    PC_TTL + randombytes_uniform(PC_JITTER + 1));
	} else if (put) {
		js = strdup("null");
		snprintf(ttl, sizeof(ttl), "%d", PC_NEG_TTL);
	}
	args[0] = token;
	args[1] = js != NULL ? js : "";
	args[2] = ttl;
	queued = rds_append_eval(a->rds, &put_lua, 2, keys, 3, args) == 0;
	free(js);
	return queued;
}

static int
from_sqlite(struct app *a, const char *login, struct account *u)
{
	count(a, "sql_reads");
	return account_by_login(a->db, login, u);
}

/* Queues a count of what (the {metrics}:cache hash): 1 queued, 0 not. */
static int
count_later(struct app *a, const char *what)
{
	const char *argv[4] = { "HINCRBY", KEY_METRICS_CACHE, what, "1" };

	return rds_append_strs(a->rds, 4, argv) == 0;
}

/* The lock, and the entry again (another may have rebuilt it between
 * our miss and our lock), in one round trip: 1 the lock taken, 0 not,
 * -1 Redis failed; *rc what the entry holds (lookup()'s answer). */
static int
lock_and_look(struct app *a, const char *lock, const char *token,
    const char *key, struct account *u, int *rc)
{
	const char *set[6] = { "SET", lock, token, "NX", "PX", "2000" };
	const char *get[2] = { "GET", key };
	rds_reply *rep;
	int got = -1, queued;

	*rc = -1;
	queued = rds_append_strs(a->rds, 6, set) == 0;
	queued += queued && rds_append_strs(a->rds, 2, get) == 0;
	if (queued == 2 && rds_get_reply(a->rds, &rep) == 0) {
		got = rds_type(rep) == RDS_STATUS;
		rds_free(rep);
		queued--;
		if (rds_get_reply(a->rds, &rep) == 0) {
			*rc = parse(rep, u);
			rds_free(rep);
			queued--;
		} else
			got = -1;
	}
	if (queued > 0)
		rds_collect(a->rds, queued);
	return got;
}

/* After a miss (or Redis down: down) of key: the rebuild, a wait for
 * another's, or SQLite. */
static int
missed(struct app *a, const char *login, const char *key, struct account *u,
    int down)
{
	struct timespec wait = { 0, 25 * 1000 * 1000 };
	unsigned char raw[8];
	char lock[96], token[2 * sizeof(raw) + 1];
	int rc, got, i, queued;

	if (down || app_reader(a) != a->rds)	/* no rebuild on a replica */
		return account_by_login(a->db, login, u);
	key_sub(lock, sizeof(lock), key, "lock");
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(token, sizeof(token), raw, sizeof(raw));
	if ((got = lock_and_look(a, lock, token, key, u, &rc)) == -1)
		return account_by_login(a->db, login, u);
	if (got && rc >= 0) {	/* rebuilt meanwhile by another */
		rds_collect(a->rds, store(a, key, lock, token, 0, 0, NULL));
		return rc;
	}
	if (got) {		/* ours to rebuild */
		/* read now, after the lock (db.h db_reads_together()).
		 * The entry, the counts and the lock's release: one round
		 * trip */
		db_reads_end(a->db);
		rc = account_by_login(a->db, login, u);
		fault_point("pcache-rebuild");
		queued = count_later(a, "rebuilds") + count_later(a,
		    "sql_reads");
		queued += store(a, key, lock, token, rc >= 0, rc, u);
		rds_collect(a->rds, queued);
		return rc;
	}
	if (rc >= 0)		/* rebuilt by another just before */
		return rc;
	for (i = 0; i < 4; i++) {	/* someone else rebuilds: wait a bit */
		nanosleep(&wait, NULL);
		if ((rc = lookup(a, key, u, &down)) >= 0)
			return rc;
		if (down)
			break;
	}
	return from_sqlite(a, login, u);
}

void
pcache_send(struct app *a, const char *login, struct pcache_q *q)
{
	const char *argv[2] = { "GET", q->key };

	snprintf(q->login, sizeof(q->login), "%s", login);
	key_login(q->key, sizeof(q->key), login);
	q->read = 0;
	q->rep = NULL;
	q->rd = app_reader(a);
	q->queued = rds_append_strs(q->rd, 2, argv) == 0;
}

void
pcache_read(struct app *a, struct pcache_q *q)
{
	q->read = 1;
	(void)a;
	q->down = !q->queued || rds_get_reply(q->rd, &q->rep) == -1;
	if (q->down)
		q->rep = NULL;
}

void
pcache_drop(struct pcache_q *q)
{
	if (q->rep != NULL)
		rds_free(q->rep);
	q->rep = NULL;
}

int
pcache_recv(struct app *a, struct pcache_q *q, struct account *u)
{
	int rc = -1;

	if (!q->read)
		pcache_read(a, q);
	if (!q->down)
		rc = parse(q->rep, u);
	pcache_drop(q);
	if (rc < 0)
		rc = missed(a, q->login, q->key, u, q->down);
	if (rc == 1)
		remember(u);
	return rc;
}

int
pcache_get(struct app *a, const char *login, struct account *u)
{
	struct pcache_q q;

	pcache_send(a, login, &q);
	return pcache_recv(a, &q, u);
}

void
pcache_invalidate(struct app *a, const char *login)
{
	char key[80], lock[96];
	rds_reply *rep;
	int ok;

	key_login(key, sizeof(key), login);
	key_sub(lock, sizeof(lock), key, "lock");	/* one slot */
	rep = rds_cmdv(a->rds, "DEL", key, lock, NULL);
	ok = rep != NULL && rds_type(rep) == RDS_INTEGER;
	if (rep != NULL)
		rds_free(rep);
	if (ok)
		return;
	/* Redis did not take it: every entry goes once Redis answers */
	tlstale_mark_as(a, "profiles_stale", "a profile's change");
}

int
pcache_stale_refresh(struct app *a)
{
	return tlstale_drop_as(a, "profiles_stale", KEY_LOGIN_ALL,
	    "the profile cache");
}
