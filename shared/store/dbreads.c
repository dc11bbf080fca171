/* dbreads.c -- a reader's requests in one SQLite read transaction
 * (db_reads_together(), db.h).  Its own file: db.c's transactions and
 * dbq.c's statements both open or end it, and it calls neither.
 *
 * It also runs db.c's prepared transaction control (db_run_prepared()):
 * its own BEGIN and COMMIT are that, and a call back into db.c would make
 * the two files a cycle.
 *
 * Its BEGIN and COMMIT are not counted among the statements run
 * (/metrics): they stand in for the transaction SQLite opens around each
 * statement by itself, which is not counted either. */
#include <sqlite3.h>

#include "base/log.h"
#include "store/db.h"
#include "store/db_int.h"

enum { R_BEGIN, R_COMMIT };
_Static_assert(R_COMMIT + 1 == sizeof(((struct db *)0)->rdst) /
    sizeof(((struct db *)0)->rdst[0]), "one prepared statement each");

int
db_run_prepared(struct db *d, struct sqlite3_stmt **st, const char *sql)
{
	int rc;

	db_check_owner(d);
	if (*st == NULL && sqlite3_prepare_v3(d->h, sql, -1,
	    SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK) {
		log_err("sqlite: %s: %s", sqlite3_errmsg(d->h), sql);
		return -1;
	}
	rc = sqlite3_step(*st);
	sqlite3_reset(*st);
	if (rc != SQLITE_DONE) {
		log_err("sqlite: %s: %s", sqlite3_errmsg(d->h), sql);
		return -1;
	}
	return 0;
}

/* BEGIN or COMMIT, not counted. */
static int
run(struct db *d, int i)
{
	static const char *const sql[] = { "BEGIN", "COMMIT" };
	unsigned long long n = d->nstmt;
	int rc = db_run_prepared(d, &d->rdst[i], sql[i]);

	d->nstmt = n;
	return rc;
}

void
db_reads_together(struct db *d, int on)
{
	if (d->pg != NULL)
		return;
	if (!on)
		db_reads_close(d);
	d->reads_on = on;
}

int
db_reads_is_open(struct db *d)
{
	if (d->reads_open && sqlite3_get_autocommit(d->h))
		d->reads_open = 0;
	return d->reads_open;
}

void
db_reads_open(struct db *d)
{
	if (d->reads_on && !d->reads_open && sqlite3_get_autocommit(d->h) &&
	    run(d, R_BEGIN) == 0)
		d->reads_open = 1;
}

void
db_reads_close(struct db *d)
{
	unsigned long long n = d->nstmt;

	if (d->pg != NULL || !db_reads_is_open(d))
		return;
	d->reads_open = 0;
	if (run(d, R_COMMIT) == -1 && !sqlite3_get_autocommit(d->h))
		sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
	d->nstmt = n;
}

void
db_reads_end(struct db *d)
{
	db_reads_close(d);
}
