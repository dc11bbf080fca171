/* tmpdb.h -- a database file in a fresh temporary directory for the unit
 * tests that need a real SQLite file (header-only: each test is one
 * program).  tmpdb_make() fills path; tmpdb_make_t() also creates the
 * database with tally's schema and a scratch table t(x INTEGER);
 * tmpdb_remove() deletes the file, its WAL, shared memory and writers'
 * lock, and the directory. */
#ifndef TALLY_TMPDB_H
#define TALLY_TMPDB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/db_int.h"

struct tmpdb {
	char	dir[256];
	char	path[300];
};

static inline int
tmpdb_make(struct tmpdb *t, const char *name)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(t->dir, sizeof(t->dir), "%s/tally-%s-XXXXXX",
	    tmp != NULL && *tmp != '\0' && strlen(tmp) < 200 ? tmp : "/tmp",
	    name);
	if (mkdtemp(t->dir) == NULL)
		return -1;
	snprintf(t->path, sizeof(t->path), "%s/t.db", t->dir);
	return 0;
}

static inline int
tmpdb_make_t(struct tmpdb *t, const char *name)
{
	struct db d;
	int rc;

	if (tmpdb_make(t, name) == -1 || db_open(&d, t->path) == -1)
		return -1;
	rc = db_exec(&d, "CREATE TABLE IF NOT EXISTS t(x INTEGER)");
	db_close(&d);
	return rc;
}

static inline int
tmpdb_remove(const struct tmpdb *t)
{
	static const char *const ext[] = { "", "-wal", "-shm", "-wlock" };
	char f[320];
	size_t i;

	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		snprintf(f, sizeof(f), "%s%s", t->path, ext[i]);
		unlink(f);
	}
	return rmdir(t->dir);
}

#endif
