/* recount.c -- recounts from the truth rows; see recount.h. */
#include <limits.h>
#include <string.h>

#include "base/log.h"
#include "count/recount.h"
#include "store/dbq.h"

long
recount_family(struct db *d, enum family fam,
    int (*fn)(const struct delta *, void *), void *arg)
{
	const struct family_info *f = &families[fam];
	struct dbq *s;
	struct delta dl;
	long n = 0;
	int rc, two = f->obj == OBJ_USER_TOPIC;

	if (f->recount == NO_RECOUNT)
		return 0;
	if ((s = dbq_stmt(d, f->recount)) == NULL)
		return -1;
	while ((rc = dbq_step(s)) == DBQ_ROW) {
		dl.fam = fam;
		dl.k1 = dbq_i64(s, 0);
		dl.k2 = two ? dbq_i64(s, 1) : 0;
		dl.d = dbq_i64(s, two ? 2 : 1);
		n++;
		if (fn(&dl, arg) == -1) {
			rc = DBQ_ERR;
			break;
		}
	}
	dbq_done(s);
	return rc == DBQ_DONE ? n : -1;
}

static int
write_one(const struct delta *dl, void *arg)
{
	struct db *d = arg;
	struct dbq *s = dbq_stmt(d, STMT_COUNTER_SET);
	char key[48];
	int rc;

	if (s == NULL)
		return -1;
	counters_key(dl, key, sizeof(key));
	dbq_bind_text(s, 1, families[dl->fam].name, -1);
	dbq_bind_text_copy(s, 2, key, -1);
	dbq_bind_i64(s, 3, dl->d);
	rc = dbq_step(s);
	dbq_done(s);
	return rc == DBQ_DONE ? 0 : -1;
}

int
recount_write_all(struct app *a)
{
	struct db *d = a->db;
	struct dbq *s;
	int i, rc;

	if (db_begin(d) == -1)
		return -1;
	/* every post's like_count (its chunk repair over all ids), then
	 * every counter but the views' */
	if ((s = dbq_stmt(d, STMT_LIKE_COUNT_FIX)) == NULL)
		goto fail;
	dbq_bind_i64(s, 1, 0);
	dbq_bind_i64(s, 2, LLONG_MAX);
	rc = dbq_step(s);
	dbq_done(s);
	if (rc != DBQ_DONE || (s = dbq_stmt(d, STMT_COUNTERS_CLEAR)) == NULL)
		goto fail;
	dbq_bind_text(s, 1, families[FAM_POST_VIEWS].name, -1);
	rc = dbq_step(s);
	dbq_done(s);
	if (rc != DBQ_DONE)
		goto fail;
	for (i = 0; i < FAM__MAX; i++)
		if (recount_family(d, (enum family)i, write_one, d) < 0)
			goto fail;
	return db_commit(d);
fail:
	db_rollback(d);
	return -1;
}
