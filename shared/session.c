/* session.c -- sessions in SQLite; see session.h. */
#include <string.h>

#include "log.h"
#include "session.h"

int
session_create(struct db *d, long long uid, long secs,
    char sid[TOKEN_LEN + 1], char csrf[TOKEN_LEN + 1])
{
	unsigned char h[TOKEN_HASH_LEN];
	sqlite3_stmt *s = db_stmt(d, STMT_SESSION_INSERT);
	long long now = db_now_ms();
	int rc;

	if (s == NULL)
		return -1;
	token_new(sid);
	token_new(csrf);
	token_hash(sid, h);
	sqlite3_bind_blob(s, 1, h, sizeof(h), SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, uid);
	sqlite3_bind_text(s, 3, csrf, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 4, now);
	sqlite3_bind_int64(s, 5, now + (long long)secs * 1000);
	rc = sqlite3_step(s);
	db_done(s);
	if (rc != SQLITE_DONE) {
		log_err("session insert: %s", sqlite3_errmsg(d->h));
		return -1;
	}
	return 0;
}

int
session_load(struct db *d, const char *sid, struct session *out)
{
	unsigned char h[TOKEN_HASH_LEN];
	sqlite3_stmt *s;
	int rc;

	memset(out, 0, sizeof(*out));
	if (sid == NULL || strlen(sid) != TOKEN_LEN)
		return 0;
	if ((s = db_stmt(d, STMT_SESSION_GET)) == NULL)
		return -1;
	token_hash(sid, h);
	sqlite3_bind_blob(s, 1, h, sizeof(h), SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, db_now_ms());
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		out->user_id = sqlite3_column_int64(s, 0);
		db_col_text(s, 1, out->csrf, sizeof(out->csrf));
		db_col_text(s, 2, out->login, sizeof(out->login));
		db_col_text(s, 3, out->name, sizeof(out->name));
		out->is_admin = sqlite3_column_int(s, 4);
	}
	db_done(s);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : -1;
}

int
session_delete(struct db *d, const char *sid)
{
	unsigned char h[TOKEN_HASH_LEN];
	sqlite3_stmt *s = db_stmt(d, STMT_SESSION_DELETE);
	int rc;

	if (s == NULL)
		return -1;
	token_hash(sid, h);
	sqlite3_bind_blob(s, 1, h, sizeof(h), SQLITE_TRANSIENT);
	rc = sqlite3_step(s);
	db_done(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

int
session_expire(struct db *d, int limit)
{
	sqlite3_stmt *s = db_stmt(d, STMT_SESSION_EXPIRE);
	int rc;

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, db_now_ms());
	sqlite3_bind_int(s, 2, limit);
	rc = sqlite3_step(s);
	db_done(s);
	return rc == SQLITE_DONE ? sqlite3_changes(d->h) : -1;
}
