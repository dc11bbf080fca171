/* schema.c -- the schema, one migration per step of PRAGMA user_version.
 * Migrations are append-only: a released step is never edited, a change
 * is a new step.  db_migrate() applies them in one IMMEDIATE transaction.
 */
#include "schema.h"

const char *const schema_migrations[] = {
	/* 1: accounts */
	"CREATE TABLE users ("
	"  id INTEGER PRIMARY KEY,"
	"  login TEXT NOT NULL UNIQUE COLLATE NOCASE,"
	"  name TEXT NOT NULL,"
	"  pwhash TEXT NOT NULL,"
	"  is_admin INTEGER NOT NULL DEFAULT 0,"
	"  created_at INTEGER NOT NULL);"
	"CREATE TABLE sessions ("
	"  hash BLOB PRIMARY KEY,"
	"  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,"
	"  csrf TEXT NOT NULL,"
	"  created_at INTEGER NOT NULL,"
	"  expires_at INTEGER NOT NULL);"
	"CREATE INDEX sessions_expires ON sessions(expires_at);"
	"CREATE INDEX sessions_user ON sessions(user_id);"
	"CREATE TABLE settings ("
	"  name TEXT PRIMARY KEY,"
	"  value INTEGER NOT NULL);",
};

const int schema_version =
    (int)(sizeof(schema_migrations) / sizeof(schema_migrations[0]));
