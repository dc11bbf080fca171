/* sesscache.c -- a session's copy in Redis; see sesscache.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "count/cname.h"
#include "social/sesscache.h"
#include "store/key.h"

/* KEYS: the user's ss.  ARGV: field, value, until, now, gen, keep (ms).
 * Only when g is still gen.  Entries past their time go (a user has a
 * handful of sessions: one small hash); the key lives as long as its
 * longest entry, and at least keep. */
static struct rds_script put_lua = { .src =
	"#!lua\n"
	"if (redis.call('HGET', KEYS[1], 'g') or '0') ~= ARGV[5] then"
	" return 0 end\n"
	"local all = redis.call('HGETALL', KEYS[1])\n"
	"local t, now = tonumber(ARGV[3]), tonumber(ARGV[4])\n"
	"for i = 1, #all, 2 do\n"
	"  if all[i] ~= 'g' then\n"
	"    local u = tonumber(string.match(all[i+1], '^%d+'))\n"
	"    if u == nil or u <= now then redis.call('HDEL', KEYS[1], all[i])\n"
	"    elseif u > t then t = u end\n"
	"  end\n"
	"end\n"
	"if t < now + tonumber(ARGV[6]) then t = now + tonumber(ARGV[6]) end\n"
	"redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])\n"
	"redis.call('PEXPIREAT', KEYS[1], t)\n"
	"return 1\n" };

/* KEYS: the user's ss.  ARGV: field ("": every one), keep (ms).  The
 * generation first: a put that read the old one fails from here on. */
static struct rds_script forget_lua = { .src =
	"#!lua\n"
	"redis.call('HINCRBY', KEYS[1], 'g', 1)\n"
	"if ARGV[1] == '' then\n"
	"  local f = redis.call('HKEYS', KEYS[1])\n"
	"  for i = 1, #f do\n"
	"    if f[i] ~= 'g' then redis.call('HDEL', KEYS[1], f[i]) end\n"
	"  end\n"
	"else redis.call('HDEL', KEYS[1], ARGV[1]) end\n"
	"if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then"
	" redis.call('PEXPIRE', KEYS[1], ARGV[2]) end\n"
	"return 1\n" };

/* When a copy of s written at now stops being trusted. */
static long long
copy_until(const struct session *s, long long now)
{
	return s->expires_at < now + SESSION_CACHE_MS ? s->expires_at :
	    now + SESSION_CACHE_MS;
}

int
sesscache_format(const struct session *s, long long now, char *out,
    size_t sz)
{
	int n;

	n = snprintf(out, sz, "%lld %lld %d %s %s", copy_until(s, now), now,
	    s->is_admin ? 1 : 0, s->csrf, s->login);
	return n > 0 && (size_t)n < sz ? n : -1;
}

/* A decimal number of 1 to 18 digits at *p, then a space or the end. */
static int
number(const char **p, const char *end, long long *v)
{
	const char *q = *p;

	*v = 0;
	while (q < end && *q >= '0' && *q <= '9' && q - *p < 18)
		*v = *v * 10 + (*q++ - '0');
	if (q == *p || (q < end && *q != ' '))
		return 0;
	*p = q < end ? q + 1 : q;
	return 1;
}

/* A word of [A-Za-z0-9_-] (dash only when dash) of min..max bytes into
 * out (max + 1 bytes), then a space or the end. */
static int
word(const char **p, const char *end, size_t min, size_t max, int dash,
    char *out)
{
	const char *q = *p;
	size_t n;

	while (q < end && ((*q >= 'a' && *q <= 'z') || (*q >= 'A' &&
	    *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_' ||
	    (dash && *q == '-')))
		q++;
	n = (size_t)(q - *p);
	if (n < min || n > max || (q < end && *q != ' '))
		return 0;
	memcpy(out, *p, n);
	out[n] = '\0';
	*p = q < end ? q + 1 : q;
	return 1;
}

long long
sesscache_page_until(long long written)
{
	return written + clock_spread(SESSION_PAGE_MS, written);
}

int
sesscache_parse(const char *v, size_t len, long long now, int page,
    struct session *out)
{
	const char *p, *end;
	long long until, written, admin;

	if (v == NULL)
		return 0;
	p = v;
	end = v + len;
	if (!number(&p, end, &until) || until <= now)
		return 0;
	out->expires_at = until;
	if (!page)
		return 1;
	if (!number(&p, end, &written) ||
	    now > sesscache_page_until(written) ||
	    written - now > SESSION_PAGE_MS ||
	    !number(&p, end, &admin) || admin > 1 ||
	    !word(&p, end, TOKEN_LEN, TOKEN_LEN, 1, out->csrf) ||
	    !word(&p, end, 1, sizeof(out->login) - 1, 0, out->login) ||
	    p != end || end[-1] == ' ')
		return 0;
	out->is_admin = (int)admin;
	out->copied_at = written;
	return 1;
}

long long
sesscache_gen(struct rds *rd, long long uid)
{
	char key[KEY_MAX];
	rds_reply *rep;
	long long g = -1;

	cname_user_cache(uid, "ss", key, sizeof(key));
	if ((rep = rds_cmdv(rd, "HGET", key, "g", NULL)) == NULL)
		return -1;
	if (rds_type(rep) == RDS_NIL)
		g = 0;
	else if (rds_type(rep) == RDS_STRING)
		g = strtoll(rds_str(rep), NULL, 10);
	rds_free(rep);
	return g;
}

/* put_lua's keys and arguments for s under sid at gen, into the
 * caller's buffers: 0, or -1 when there is nothing to put. */
struct put_args {
	char	hex[SID_HEX_LEN + 1], key[KEY_MAX], val[SESSCACHE_VALUE_MAX];
	char	until[24], now[24], g[24], keep[24];
};

static int
put_args(const char *sid, const struct session *s, long long gen,
    struct put_args *p, const char **keys, const char **args)
{
	long long uid, t = clock_wall_ms();

	if (gen < 0 || session_id_parse(sid, &uid, p->hex) == -1 ||
	    uid != s->user_id || sesscache_format(s, t, p->val,
	    sizeof(p->val)) < 0)
		return -1;
	snprintf(p->until, sizeof(p->until), "%lld", copy_until(s, t));
	snprintf(p->now, sizeof(p->now), "%lld", t);
	snprintf(p->g, sizeof(p->g), "%lld", gen);
	snprintf(p->keep, sizeof(p->keep), "%lld", SESSION_CACHE_MS);
	cname_user_cache(uid, "ss", p->key, sizeof(p->key));
	keys[0] = p->key;
	args[0] = p->hex;
	args[1] = p->val;
	args[2] = p->until;
	args[3] = p->now;
	args[4] = p->g;
	args[5] = p->keep;
	return 0;
}

int
sesscache_put(struct rds *rd, const char *sid, const struct session *s,
    long long gen)
{
	struct put_args p;
	const char *keys[1], *args[6];
	rds_reply *rep;
	int rc;

	if (put_args(sid, s, gen, &p, keys, args) == -1)
		return 0;
	if ((rep = rds_eval(rd, &put_lua, 1, keys, 6, args)) == NULL)
		return -1;
	rc = rds_type(rep) == RDS_INTEGER && rds_int(rep) == 1;
	rds_free(rep);
	return rc;
}

void
sesscache_put_send(struct rds *rd, const char *sid, const struct session *s,
    long long gen, struct sesscache_q *q)
{
	struct put_args p;
	const char *keys[1], *args[6];

	q->queued = put_args(sid, s, gen, &p, keys, args) == 0 &&
	    rds_append_eval(rd, &put_lua, 1, keys, 6, args) == 0;
}

int
sesscache_put_recv(struct rds *rd, struct sesscache_q *q)
{
	rds_reply *rep;
	int rc;

	if (!q->queued)
		return 0;
	q->queued = 0;
	if (rds_get_reply(rd, &rep) == -1)
		return -1;
	rc = rds_type(rep) == RDS_INTEGER && rds_int(rep) == 1;
	rds_free(rep);
	return rc;
}

void
sesscache_forget(struct rds *rd, long long uid, const char *hex)
{
	char key[KEY_MAX], keep[24];
	const char *keys[1] = { key }, *args[2] = { hex != NULL ? hex : "",
	    keep };
	rds_reply *rep;

	snprintf(keep, sizeof(keep), "%lld", SESSION_CACHE_MS);
	cname_user_cache(uid, "ss", key, sizeof(key));
	if ((rep = rds_eval(rd, &forget_lua, 1, keys, 2, args)) != NULL)
		rds_free(rep);
}

int
sesscache_end(struct db *d, struct rds *rd, const char *sid)
{
	char hex[SID_HEX_LEN + 1];
	long long uid;
	int rc = session_delete(d, sid);

	/* SQLite first: a copy put after this is refused */
	if (session_id_parse(sid, &uid, hex) == 0)
		sesscache_forget(rd, uid, hex);
	return rc;
}

void
sesscache_send(struct rds *rd, long long uid, const char *hex,
    struct sesscache_q *q)
{
	char key[KEY_MAX];
	const char *argv[4] = { "HMGET", key, hex, "g" };

	cname_user_cache(uid, "ss", key, sizeof(key));
	q->queued = rds_append_strs(rd, 4, argv) == 0;
}

int
sesscache_recv(struct rds *rd, struct sesscache_q *q, long long now,
    struct session *out, long long *gen)
{
	rds_reply *rep, *v, *g;
	int rc = 0;

	*gen = -1;
	if (!q->queued || rds_get_reply(rd, &rep) == -1)
		return 0;
	q->queued = 0;
	if (rds_type(rep) == RDS_ARRAY && rds_n(rep) == 2) {
		v = rds_at(rep, 0);
		g = rds_at(rep, 1);
		if (rds_type(g) == RDS_NIL)
			*gen = 0;
		else if (rds_type(g) == RDS_STRING)
			*gen = strtoll(rds_str(g), NULL, 10);
		rc = rds_type(v) == RDS_STRING &&
		    sesscache_parse(rds_str(v), rds_len(v), now, 1, out);
	}
	rds_free(rep);
	return rc;
}
