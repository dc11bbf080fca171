/* sql.h -- every SQL statement tally runs, by number.
 *
 * The text lives in sql.c's table and nowhere else; values are only ever
 * bound (sqlite3_bind_*), never pasted.  db_stmt() prepares a statement on
 * first use and keeps it for the life of the process.
 */
#ifndef TALLY_SQL_H
#define TALLY_SQL_H

enum stmt {
	STMT_PING,
	STMT_USER_INSERT,
	STMT_USER_BY_LOGIN,
	STMT_USER_BY_ID,
	STMT_USER_SET_PASSWORD,
	STMT_SESSION_INSERT,
	STMT_SESSION_GET,
	STMT_SESSION_DELETE,
	STMT_SESSION_EXPIRE,
	STMT_SETTING_GET,
	STMT_SETTING_PUT,
	STMT__MAX
};

extern const char *const sql_text[STMT__MAX];

#endif
