/* dver.c -- SQLite's data version: whether anything was committed to
 * the file since a page was read (web/fcache.h); see db.h. */
#include <sqlite3.h>

#include "store/db.h"

int
db_data_version_seen(struct db *d, unsigned int *v)
{
	if (d->pg != NULL || d->h == NULL || !sqlite3_get_autocommit(d->h))
		return -1;
	return sqlite3_file_control(d->h, "main", SQLITE_FCNTL_DATA_VERSION,
	    v) == SQLITE_OK ? 0 : -1;
}

int
db_data_version(struct db *d, unsigned int *v)
{
	int rc;

	if (db_data_version_seen(d, v) == -1 || (d->dv == NULL &&
	    sqlite3_prepare_v3(d->h, "PRAGMA data_version", -1,
	    SQLITE_PREPARE_PERSISTENT, &d->dv, NULL) != SQLITE_OK))
		return -1;
	/* The pager learns of other connections' commits when a read
	 * transaction begins: read the version inside the pragma's. */
	rc = sqlite3_step(d->dv) == SQLITE_ROW ?
	    db_data_version_seen(d, v) : -1;
	sqlite3_reset(d->dv);
	return rc;
}
