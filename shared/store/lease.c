/* lease.c -- the workers' lease; see lease.h. */
#include "store/db.h"
#include "store/db_int.h"
#include "store/dbq.h"
#include "store/lease.h"

int
lease_hold(struct db *d, const char *owner, long long now_ms)
{
	struct dbq *s;
	int rc;

	if (d->pg == NULL)
		return 1;	/* SQLite: one machine, one worker */
	if (db_begin(d) == -1)
		return -1;
	if ((s = dbq_stmt(d, STMT_LEASE_TAKE)) == NULL) {
		db_rollback(d);
		return -1;
	}
	dbq_bind_text(s, 1, owner, -1);
	dbq_bind_i64(s, 2, now_ms);
	dbq_bind_i64(s, 3, LEASE_MS);
	rc = dbq_step(s);
	if (rc == DBQ_ROW)
		while (dbq_step(s) == DBQ_ROW)
			;
	dbq_done(s);
	if (rc == DBQ_ERR || db_commit(d) == -1) {
		db_rollback(d);
		return -1;
	}
	return rc == DBQ_ROW;
}

void
lease_drop(struct db *d, const char *owner)
{
	struct dbq *s;

	if (d->pg == NULL || (s = dbq_stmt(d, STMT_LEASE_DROP)) == NULL)
		return;
	dbq_bind_text(s, 1, owner, -1);
	dbq_step(s);
	dbq_done(s);
}
