/* sql.c -- the statement table; see sql.h. */
#include "sql.h"

const char *const sql_text[STMT__MAX] = {
	/* STMT_PING */
	"SELECT 1",
	/* STMT_USER_INSERT: login, name, pwhash, is_admin, now */
	"INSERT INTO users(login, name, pwhash, is_admin, created_at) "
	"VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(login) DO NOTHING RETURNING id",
	/* STMT_USER_BY_LOGIN: login */
	"SELECT id, login, name, pwhash, is_admin FROM users WHERE login = ?1",
	/* STMT_USER_BY_ID: id */
	"SELECT id, login, name, pwhash, is_admin FROM users WHERE id = ?1",
	/* STMT_USER_SET_PASSWORD: id, pwhash */
	"UPDATE users SET pwhash = ?2 WHERE id = ?1",
	/* STMT_SESSION_INSERT: hash, user_id, csrf, now, expires */
	"INSERT INTO sessions(hash, user_id, csrf, created_at, expires_at) "
	"VALUES(?1, ?2, ?3, ?4, ?5)",
	/* STMT_SESSION_GET: hash, now */
	"SELECT s.user_id, s.csrf, u.login, u.name, u.is_admin "
	"FROM sessions s JOIN users u ON u.id = s.user_id "
	"WHERE s.hash = ?1 AND s.expires_at > ?2",
	/* STMT_SESSION_DELETE: hash */
	"DELETE FROM sessions WHERE hash = ?1",
	/* STMT_SESSION_EXPIRE: now, limit -- bounded batches */
	"DELETE FROM sessions WHERE rowid IN "
	"(SELECT rowid FROM sessions WHERE expires_at <= ?1 LIMIT ?2)",
	/* STMT_SETTING_GET: name */
	"SELECT value FROM settings WHERE name = ?1",
	/* STMT_SETTING_PUT: name, value */
	"INSERT INTO settings(name, value) VALUES(?1, ?2) "
	"ON CONFLICT(name) DO UPDATE SET value = excluded.value",
};
