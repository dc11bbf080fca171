/* pcache.c -- the profile cache; see pcache.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <sodium.h>

#include "base/log.h"
#include "social/pcache.h"
#include "store/key.h"
#include "store/rebuild.h"

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

static void
store(struct app *a, const char *key, int found, const struct account *u)
{
	char ttl[16], *js;
	json_t *o;
	rds_reply *rep;

	if (found) {
		o = json_pack("{s:I,s:s,s:s}", "id", (json_int_t)u->id, "login",
		    u->login, "name", u->name);
		js = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
		json_decref(o);
		snprintf(ttl, sizeof(ttl), "%u",
		    PC_TTL + randombytes_uniform(PC_JITTER + 1));
	} else {
		js = strdup("null");
		snprintf(ttl, sizeof(ttl), "%d", PC_NEG_TTL);
	}
	if (js == NULL)
		return;
	if ((rep = rds_cmdv(a->rds, "SET", key, js, "EX", ttl, NULL)) != NULL)
		rds_free(rep);
	free(js);
}

static int
from_sqlite(struct app *a, const char *login, struct account *u)
{
	count(a, "sql_reads");
	return account_by_login(a->db, login, u);
}

/* After a miss (or Redis down: down) of key: the rebuild, a wait for
 * another's, or SQLite. */
static int
missed(struct app *a, const char *login, const char *key, struct account *u,
    int down)
{
	struct timespec wait = { 0, 25 * 1000 * 1000 };
	char lock[96];
	int rc, got, i;

	if (down || app_reader(a) != a->rds)	/* no rebuild on a replica */
		return account_by_login(a->db, login, u);
	key_sub(lock, sizeof(lock), key, "lock");
	if ((got = rebuild_lock(a->rds, lock, 2000)) == -1)
		return account_by_login(a->db, login, u);
	if (got) {		/* ours to rebuild */
		/* Another may have rebuilt it between our miss and our lock. */
		if ((rc = lookup(a, key, u, &down)) >= 0 || down) {
			rebuild_done(a->rds, lock, NULL);
			return rc >= 0 ? rc : account_by_login(a->db, login, u);
		}
		count(a, "rebuilds");
		rc = from_sqlite(a, login, u);
		if (rc >= 0)
			store(a, key, rc, u);
		rebuild_done(a->rds, lock, NULL);
		return rc;
	}
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
	q->queued = rds_append_strs(app_reader(a), 2, argv) == 0;
}

int
pcache_recv(struct app *a, struct pcache_q *q, struct account *u)
{
	rds_reply *rep;
	int rc = -1, down = 1;

	if (q->queued && rds_get_reply(app_reader(a), &rep) == 0) {
		down = 0;
		rc = parse(rep, u);
		rds_free(rep);
	}
	if (rc < 0)
		rc = missed(a, q->login, q->key, u, down);
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
	char key[80];
	rds_reply *rep;

	key_login(key, sizeof(key), login);
	if ((rep = rds_cmdv(a->rds, "DEL", key, NULL)) != NULL)
		rds_free(rep);
}
