/* cstore.c -- live counters and pending deltas in Redis; see cstore.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstore.h"
#include "log.h"

#define KEY_DIRTY	"{flush}:dirty"

/* KEYS: hash.  ARGV: field, delta, field, delta... */
static struct rds_script apply_lua = { .src =
	"for i = 1, #ARGV, 2 do\n"
	"  local f, d = ARGV[i], tonumber(ARGV[i+1])\n"
	"  if redis.call('HEXISTS', KEYS[1], f) == 1 then\n"
	"    redis.call('HINCRBY', KEYS[1], f, d) end\n"
	"  redis.call('HINCRBY', KEYS[1], '~' .. f, d)\n"
	"end\n"
	"return 1\n" };

/* KEYS: hash.  ARGV: field.  -> { version, batch ids in flight for f } */
static struct rds_script info_lua = { .src =
	"local out = { redis.call('HGET', KEYS[1], '~v') or '0' }\n"
	"for _, k in ipairs(redis.call('HKEYS', KEYS[1])) do\n"
	"  local b, f = string.match(k, '^%^(%d+):(.+)$')\n"
	"  if b and f == ARGV[1] then table.insert(out, b) end\n"
	"end\n"
	"return out\n" };

/* KEYS: hash.  ARGV: field, version, durable, applied batch ids...
 * -> the live value, or nil when a flush touched the hash meanwhile. */
static struct rds_script load_lua = { .src =
	"if (redis.call('HGET', KEYS[1], '~v') or '0') ~= ARGV[2] then\n"
	"  return false end\n"
	"local live = redis.call('HGET', KEYS[1], ARGV[1])\n"
	"if live then return tonumber(live) end\n"
	"local applied = {}\n"
	"for i = 4, #ARGV do applied[ARGV[i]] = true end\n"
	"local v = tonumber(ARGV[3]) + tonumber(redis.call('HGET', KEYS[1],\n"
	"  '~' .. ARGV[1]) or '0')\n"
	"for _, k in ipairs(redis.call('HKEYS', KEYS[1])) do\n"
	"  local b, f = string.match(k, '^%^(%d+):(.+)$')\n"
	"  if b and f == ARGV[1] and not applied[b] then\n"
	"    v = v + tonumber(redis.call('HGET', KEYS[1], k)) end\n"
	"end\n"
	"redis.call('HSET', KEYS[1], ARGV[1], v)\n"
	"return v\n" };

void
cstore_name(const struct delta *d, char *hash, size_t hsz, char *field,
    size_t fsz)
{
	const struct family_info *f = &families[d->fam];

	switch (f->obj) {
	case OBJ_USER:
		snprintf(hash, hsz, "{u%lld}:n", d->k1);
		snprintf(field, fsz, "%s", f->field);
		break;
	case OBJ_POST:
		snprintf(hash, hsz, "{p%lld}:n", d->k1);
		snprintf(field, fsz, "%s", f->field);
		break;
	case OBJ_TOPIC:
		snprintf(hash, hsz, "{t%lld}:n", d->k1);
		snprintf(field, fsz, "%s", f->field);
		break;
	case OBJ_USER_TOPIC:
		snprintf(hash, hsz, "{u%lld}:nt", d->k1);
		snprintf(field, fsz, "%s:%lld", f->field, d->k2);
		break;
	}
}

/* Only what cstore_name() writes: a canonical decimal (no sign, no
 * space, no leading zero, no overflow) followed by one of ends. */
static int
canonical_id(const char *s, const char *ends, long long *out, size_t *len)
{
	size_t n = 0;

	while (s[n] >= '0' && s[n] <= '9')
		n++;
	if (n == 0 || n > 19 || (n > 1 && s[0] == '0') ||
	    strchr(ends, s[n]) == NULL)
		return -1;
	errno = 0;
	*out = strtoll(s, NULL, 10);
	if (errno == ERANGE)
		return -1;
	*len = n;
	return 0;
}

int
cstore_parse(const char *hash, const char *field, struct delta *d)
{
	size_t n0;
	long long chk;
	const char *colon;

	char tag, kind[4] = "";
	long long id, topic = 0;
	char fname[32];
	int i, n = 0;
	enum obj obj;

	memset(d, 0, sizeof(*d));
	if (hash[0] != '{' || hash[1] == '\0' ||
	    canonical_id(hash + 2, "}", &chk, &n0) == -1)
		return -1;
	if (sscanf(hash, "{%c%lld}:%3s%n", &tag, &id, kind, &n) != 3 ||
	    hash[n] != '\0' || id != chk)
		return -1;
	if (tag == 'u' && strcmp(kind, "n") == 0)
		obj = OBJ_USER;
	else if (tag == 'u' && strcmp(kind, "nt") == 0)
		obj = OBJ_USER_TOPIC;
	else if (tag == 'p' && strcmp(kind, "n") == 0)
		obj = OBJ_POST;
	else if (tag == 't' && strcmp(kind, "n") == 0)
		obj = OBJ_TOPIC;
	else
		return -1;
	if (obj == OBJ_USER_TOPIC) {
		if ((colon = strchr(field, ':')) == NULL ||
		    canonical_id(colon + 1, "", &chk, &n0) == -1)
			return -1;
		if (sscanf(field, "%31[a-z]:%lld%n", fname, &topic, &n) != 2 ||
		    field[n] != '\0' || topic != chk)
			return -1;
	} else if (snprintf(fname, sizeof(fname), "%s", field) >=
	    (int)sizeof(fname))
		return -1;
	for (i = 0; i < FAM__MAX; i++)
		if (families[i].obj == obj && strcmp(families[i].field, fname) == 0) {
			d->fam = (enum family)i;
			d->k1 = id;
			d->k2 = topic;
			return 0;
		}
	return -1;
}

/* Redis did not take these deltas: keep them in SQLite's backlog, shown
 * on top of the durable values meanwhile and settled exactly (recounted)
 * by the worker when Redis answers again. */
static void
backlog(struct app *a, const struct delta *ds, int n)
{
	sqlite3_stmt *s;
	char key[48];
	int i;

	for (i = 0; i < n; i++) {
		if ((s = db_stmt(&a->db, STMT_BACKLOG_ADD)) == NULL)
			return;
		counter_key(&ds[i], key, sizeof(key));
		sqlite3_bind_text(s, 1, families[ds[i].fam].name, -1,
		    SQLITE_STATIC);
		sqlite3_bind_text(s, 2, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(s, 3, ds[i].d);
		if (sqlite3_step(s) != SQLITE_DONE)
			log_err("counter backlog: %s", sqlite3_errmsg(a->db.h));
		db_done(s);
	}
}

int
cstore_apply(struct app *a, const struct delta *ds, int n)
{
	char hashes[2 * DELTA_MAX][48], fields[2 * DELTA_MAX][48];
	char nums[2 * DELTA_MAX][24];
	const char *args[4 * DELTA_MAX], *keys[1], *sadd[3];
	size_t lens[3];
	int i, j, nh = 0, queued = 0, nargs;
	int done[2 * DELTA_MAX] = { 0 };

	if (n > 2 * DELTA_MAX)
		n = 2 * DELTA_MAX;
	for (i = 0; i < n; i++) {
		cstore_name(&ds[i], hashes[i], sizeof(hashes[i]), fields[i],
		    sizeof(fields[i]));
		snprintf(nums[i], sizeof(nums[i]), "%lld", ds[i].d);
	}
	for (i = 0; i < n; i++) {
		if (done[i])
			continue;
		nargs = 0;
		for (j = i; j < n; j++)
			if (!done[j] && strcmp(hashes[j], hashes[i]) == 0) {
				args[nargs++] = fields[j];
				args[nargs++] = nums[j];
				done[j] = 1;
			}
		sadd[0] = "SADD";
		sadd[1] = KEY_DIRTY;
		sadd[2] = hashes[i];
		for (j = 0; j < 3; j++)
			lens[j] = strlen(sadd[j]);
		keys[0] = hashes[i];
		if (rds_append(&a->rds, 3, sadd, lens) == -1)
			goto fail;
		queued++;
		if (rds_append_eval(&a->rds, &apply_lua, 1, keys, nargs, args)
		    == -1)
			goto fail;
		queued++;
		nh++;
	}
	if (queued > 0 && rds_collect(&a->rds, queued) != 0)
		goto lost;
	return 0;
fail:
	if (queued > 0)
		rds_collect(&a->rds, queued);
lost:
	log_warn("counter deltas kept in the SQLite backlog: Redis did not "
	    "take them (%d objects)", nh + 1);
	backlog(a, ds, n);
	return -1;
}

/* What the backlog holds for a counter (Redis was down). */
static long long
backlog_of(struct db *db, const struct delta *d)
{
	sqlite3_stmt *s = db_stmt(db, STMT_BACKLOG_GET);
	char key[48];
	long long v = 0;

	if (s == NULL)
		return 0;
	counter_key(d, key, sizeof(key));
	sqlite3_bind_text(s, 1, families[d->fam].name, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, key, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	db_done(s);
	return v;
}

long long
cstore_durable(struct db *db, enum family fam, long long k1, long long k2,
    int *err)
{
	struct delta d = { fam, k1, k2, 0 };
	sqlite3_stmt *s = db_stmt(db, STMT_COUNTER_GET);
	char key[48];
	long long v = 0;
	int rc;

	if (s == NULL) {
		*err = 1;
		return 0;
	}
	counter_key(&d, key, sizeof(key));
	sqlite3_bind_text(s, 1, families[fam].name, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, key, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	else if (rc != SQLITE_DONE)
		*err = 1;
	db_done(s);
	return v;
}

/* Loads one missing live value; -2 when Redis failed. */
static long long
load_one(struct app *a, struct delta *d, const char *hash, const char *field)
{
	const char *keys[1] = { hash }, *args[3 + 32];
	char durable[24], ver[24];
	redisReply *info, *rep;
	long long v;
	size_t i;
	int tries, nargs, err = 0;

	for (tries = 0; tries < 5; tries++) {
		args[0] = field;
		info = rds_eval(&a->rds, &info_lua, 1, keys, 1, args);
		if (info == NULL)
			return -2;
		if (info->type != REDIS_REPLY_ARRAY || info->elements < 1) {
			freeReplyObject(info);
			return -2;
		}
		snprintf(ver, sizeof(ver), "%s", info->element[0]->str);
		/* durable + what waited in the backlog while Redis was down
		 * (the worker settles it exactly soon after) */
		v = cstore_durable(&a->db, d->fam, d->k1, d->k2, &err) +
		    backlog_of(&a->db, d);
		if (err) {
			freeReplyObject(info);
			return -2;
		}
		snprintf(durable, sizeof(durable), "%lld", v);
		args[1] = ver;
		args[2] = durable;
		nargs = 3;
		for (i = 1; i < info->elements && nargs < 35; i++)
			if (db_batch_applied(&a->db, info->element[i]->str) == 1)
				args[nargs++] = info->element[i]->str;
		rep = rds_eval(&a->rds, &load_lua, 1, keys, nargs, args);
		freeReplyObject(info);
		if (rep == NULL)
			return -2;
		if (rep->type == REDIS_REPLY_INTEGER) {
			v = rep->integer;
			freeReplyObject(rep);
			return v;
		}
		freeReplyObject(rep);	/* a flush touched it: again */
	}
	return -2;
}

int
cstore_get(struct app *a, struct delta *ds, int n)
{
	char hash[48], field[48];
	const char *argv[3];
	size_t lens[3];
	redisReply *rep;
	struct rds *rd = app_reader(a);
	int i, queued = 0, down = 0, err = 0;
	long long val;

	for (i = 0; i < n; i++) {
		cstore_name(&ds[i], hash, sizeof(hash), field, sizeof(field));
		argv[0] = "HGET";
		argv[1] = hash;
		argv[2] = field;
		lens[0] = 4;
		lens[1] = strlen(hash);
		lens[2] = strlen(field);
		if (rds_append(rd, 3, argv, lens) == -1) {
			down = 1;
			break;
		}
		queued++;
	}
	for (i = 0; i < n; i++)
		ds[i].d = -1;		/* -1: not known yet */
	for (i = 0; i < queued; i++) {
		if (rds_get_reply(rd, &rep) == -1) {
			down = 1;
			break;
		}
		if (rep->type == REDIS_REPLY_STRING)
			ds[i].d = strtoll(rep->str, NULL, 10);
		freeReplyObject(rep);
	}
	for (i = 0; i < n; i++) {
		if (ds[i].d >= 0)
			continue;
		if (!down && rd == &a->rds) {	/* loading writes: master only */
			cstore_name(&ds[i], hash, sizeof(hash), field,
			    sizeof(field));
			val = load_one(a, &ds[i], hash, field);
			if (val != -2) {
				ds[i].d = val;
				continue;
			}
			down = 1;
		}
		ds[i].d = cstore_durable(&a->db, ds[i].fam, ds[i].k1, ds[i].k2,
		    &err) + backlog_of(&a->db, &ds[i]);
	}
	for (i = 0; i < n; i++)
		if (ds[i].d < 0)	/* never show a negative count */
			ds[i].d = 0;
	return err ? -1 : 0;
}
