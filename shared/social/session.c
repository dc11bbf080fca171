/* session.c -- sessions in SQLite, cached in Redis; see session.h. */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "base/clock.h"
#include "base/log.h"
#include "count/cname.h"
#include "social/session.h"
#include "store/keys.h"
#include "store/query.h"

int
session_id_parse(const char *sid, long long *uid, char hex[SID_HEX_LEN + 1])
{
	unsigned char h[TOKEN_HASH_LEN];
	const char *dot;
	long long v = 0;
	size_t i;

	if (sid == NULL || strlen(sid) > SID_MAX ||
	    (dot = strchr(sid, '.')) == NULL || dot == sid || dot - sid > 18 ||
	    strlen(dot + 1) != TOKEN_LEN)
		return -1;
	for (i = 0; sid + i < dot; i++) {
		if (sid[i] < '0' || sid[i] > '9' || (i == 0 && sid[i] == '0'))
			return -1;
		v = v * 10 + (sid[i] - '0');
	}
	for (i = 1; dot[i] != '\0'; i++)
		if (!((dot[i] >= 'A' && dot[i] <= 'Z') ||
		    (dot[i] >= 'a' && dot[i] <= 'z') ||
		    (dot[i] >= '0' && dot[i] <= '9') || dot[i] == '-' ||
		    dot[i] == '_'))
			return -1;
	*uid = v;
	if (hex != NULL) {
		token_hash(sid, h);
		sodium_bin2hex(hex, SID_HEX_LEN + 1, h, sizeof(h));
	}
	return 0;
}

int
session_create(struct db *d, long long uid, long secs,
    char sid[SID_MAX + 1], char csrf[TOKEN_LEN + 1])
{
	unsigned char h[TOKEN_HASH_LEN];
	char tok[TOKEN_LEN + 1];
	struct dbq *s = db_stmt(d, STMT_SESSION_INSERT);
	long long now = clock_wall_ms();
	int rc;

	if (s == NULL)
		return -1;
	token_new(tok);
	snprintf(sid, SID_MAX + 1, "%lld.%s", uid, tok);
	token_new(csrf);
	token_hash(sid, h);
	dbq_bind_blob_copy(s, 1, h, sizeof(h));
	dbq_bind_i64(s, 2, uid);
	dbq_bind_text_copy(s, 3, csrf, -1);
	dbq_bind_i64(s, 4, now);
	dbq_bind_i64(s, 5, now + (long long)secs * 1000);
	rc = dbq_step(s);
	db_done(s);
	if (rc != DBQ_DONE) {
		log_err("session insert: %s", db_errmsg(d));
		return -1;
	}
	return 0;
}

int
session_load(struct db *d, const char *sid, struct session *out)
{
	unsigned char h[TOKEN_HASH_LEN];
	struct dbq *s;
	long long uid;
	int rc;

	memset(out, 0, sizeof(*out));
	if (session_id_parse(sid, &uid, NULL) == -1)
		return 0;
	if ((s = db_stmt(d, STMT_SESSION_GET)) == NULL)
		return -1;
	token_hash(sid, h);
	dbq_bind_blob_copy(s, 1, h, sizeof(h));
	dbq_bind_i64(s, 2, clock_wall_ms());
	rc = dbq_step(s);
	if (rc == DBQ_ROW) {
		out->user_id = dbq_i64(s, 0);
		db_col_text(s, 1, out->csrf, sizeof(out->csrf));
		db_col_text(s, 2, out->login, sizeof(out->login));
		db_col_text(s, 3, out->name, sizeof(out->name));
		out->is_admin = dbq_int(s, 4);
		out->expires_at = dbq_i64(s, 5);
	}
	db_done(s);
	if (rc == DBQ_ROW && out->user_id != uid) {
		/* Cannot happen with ids this code made; refuse anyway. */
		memset(out, 0, sizeof(*out));
		return 0;
	}
	if (rc == DBQ_ROW)
		return 1;
	return rc == DBQ_DONE ? 0 : -1;
}

int
session_delete(struct db *d, struct rds *rd, const char *sid)
{
	unsigned char h[TOKEN_HASH_LEN];
	char hex[SID_HEX_LEN + 1], key[KEY_MAX];
	struct dbq *s = db_stmt(d, STMT_SESSION_DELETE);
	rds_reply *rep;
	long long uid;
	int rc;

	if (s == NULL)
		return -1;
	token_hash(sid, h);
	dbq_bind_blob_copy(s, 1, h, sizeof(h));
	rc = dbq_step(s);
	db_done(s);
	if (rd != NULL && session_id_parse(sid, &uid, hex) == 0) {
		cname_user_cache(uid, "ss", key, sizeof(key));
		if ((rep = rds_cmdv(rd, "HDEL", key, hex, NULL)) != NULL)
			rds_free(rep);
	}
	return rc == DBQ_DONE ? 0 : -1;
}

/* KEYS: the user's ss.  ARGV: field, until (ms), now (ms).  Entries past their
 * time go (a user has a handful of sessions: one small hash); the key
 * lives as long as its longest entry. */
static struct rds_script put_lua = { .src =
	"#!lua\n"
	"local all = redis.call('HGETALL', KEYS[1])\n"
	"local t = tonumber(ARGV[2])\n"
	"for i = 1, #all, 2 do\n"
	"  local u = tonumber(all[i+1])\n"
	"  if u <= tonumber(ARGV[3]) then redis.call('HDEL', KEYS[1], all[i])\n"
	"  elseif u > t then t = u end\n"
	"end\n"
	"redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])\n"
	"redis.call('PEXPIREAT', KEYS[1], t)\n"
	"return 1\n" };

int
session_cache_put(struct rds *rd, const char *sid, const struct session *s)
{
	char hex[SID_HEX_LEN + 1], key[KEY_MAX], until[24], now[24];
	const char *keys[1], *args[3];
	long long uid, u, t = clock_wall_ms();
	rds_reply *rep;

	if (session_id_parse(sid, &uid, hex) == -1 || uid != s->user_id)
		return -1;
	snprintf(now, sizeof(now), "%lld", t);
	u = t + SESSION_CACHE_MS;
	if (s->expires_at < u)
		u = s->expires_at;
	snprintf(until, sizeof(until), "%lld", u);
	cname_user_cache(uid, "ss", key, sizeof(key));
	keys[0] = key;
	args[0] = hex;
	args[1] = until;
	args[2] = now;
	if ((rep = rds_eval(rd, &put_lua, 1, keys, 3, args)) == NULL)
		return -1;
	rds_free(rep);
	return 0;
}

int
session_expire(struct db *d, int limit)
{
	struct dbq *s = db_stmt(d, STMT_SESSION_EXPIRE);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, clock_wall_ms());
	dbq_bind_int(s, 2, limit);
	rc = dbq_step(s);
	db_done(s);
	return rc == DBQ_DONE ? db_changes(d) : -1;
}
