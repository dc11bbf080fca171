/* test-cstore-backlog.c -- the SQLite backlog of counter deltas Redis did
 * not take (cstore.h), on a real database file with Redis down:
 *   - a delta Redis refused waits in the backlog under its token, and
 *     the log says so;
 *   - when the backlog cannot take it either, cstore_apply() says the
 *     delta is lost (it used to log "kept in the SQLite backlog" without
 *     looking whether the write had worked);
 *   - a settle deletes a backlog row only if nothing was added to it
 *     since it read the row (its version), not if its value looks the
 *     same: +1 then -1 leave the value as it was, and deleting by value
 *     lost a delta that arrived after the settle's snapshot. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "count/cstore.h"
#include "store/app.h"
#include "store/dbq.h"
#include "store/rds_int.h"
#include "tmpdb.h"

struct fix {
	struct app	a;
	struct db	db;
	struct rds	rds;
	struct tmpdb	t;
	char		log[320];
};

static int
setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	f->a.db = &f->db;
	f->a.rds = &f->rds;
	if (tmpdb_make_t(&f->t, "backlog") == -1 ||
	    db_open(f->a.db, f->t.path) == -1)
		return -1;
	rds_init(f->a.rds, "/nonexistent/redis.sock", 50);	/* down */
	snprintf(f->log, sizeof(f->log), "%s/stderr", f->t.dir);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fix *f = *state;

	rds_close(f->a.rds);
	db_close(f->a.db);
	unlink(f->log);
	tmpdb_remove(&f->t);
	free(f);
	return 0;
}

/* cstore_apply() of one view, its standard error into f->log. */
static int
apply_logged(struct fix *f)
{
	struct delta d = { FAM_POST_VIEWS, 5, 0, 1, 7 };
	int saved = dup(2), fd, rc;

	fflush(stderr);
	fd = open(f->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 2);
	close(fd);
	rc = cstore_apply(&f->a, "0123abcd-42", &d);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	return rc;
}

static char *
slurp(const char *path)
{
	static char buf[4096];
	FILE *fp = fopen(path, "r");
	size_t n = 0;

	if (fp != NULL) {
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
	}
	buf[n] = '\0';
	return buf;
}

static long long
one(struct db *d, const char *sql)
{
	struct dbq *s = dbq_prepare_once(d, sql);
	long long v = -1;

	if (s != NULL && dbq_step(s) == DBQ_ROW)
		v = dbq_i64(s, 0);
	dbq_finalize(s);
	return v;
}

static void
test_refused_delta_waits_in_backlog(void **state)
{
	struct fix *f = *state;

	assert_int_equal(apply_logged(f), -1);
	assert_non_null(strstr(slurp(f->log), "kept in the SQLite backlog"));
	assert_int_equal(one(f->a.db, "SELECT delta FROM counter_backlog "
	    "WHERE name = 'post_views' AND key = '5#0123abcd-42'"), 1);
}

static void
test_failed_backlog_write_is_a_loss(void **state)
{
	struct fix *f = *state;

	assert_int_equal(db_exec(f->a.db, "DROP TABLE counter_backlog"), 0);
	assert_int_equal(apply_logged(f), -1);
	assert_non_null(strstr(slurp(f->log), "counter delta lost"));
	assert_null(strstr(slurp(f->log), "kept in the SQLite backlog"));
}

/* STMT_BACKLOG_ADD then STMT_BACKLOG_DONE as a settle uses them. */
static int
add(struct db *d, long long delta)
{
	struct dbq *s = dbq_stmt(d, STMT_BACKLOG_ADD);
	int rc;

	dbq_bind_text(s, 1, "post_likes", -1);
	dbq_bind_text(s, 2, "9", -1);
	dbq_bind_i64(s, 3, delta);
	rc = dbq_step(s);
	dbq_done(s);
	return rc == DBQ_DONE ? 0 : -1;
}

static long long
done_if(struct db *d, long long ver)
{
	struct dbq *s = dbq_stmt(d, STMT_BACKLOG_DONE);

	dbq_bind_text(s, 1, "post_likes", -1);
	dbq_bind_text(s, 2, "9", -1);
	dbq_bind_i64(s, 3, ver);
	if (dbq_step(s) != DBQ_DONE) {
		dbq_done(s);
		return -1;
	}
	dbq_done(s);
	return dbq_changes(d);
}

static void
test_backlog_row_goes_by_version(void **state)
{
	struct fix *f = *state;
	long long ver;
	const char *q = "SELECT delta FROM counter_backlog WHERE key = '9'";

	assert_int_equal(add(f->a.db, 1), 0);
	ver = one(f->a.db, "SELECT ver FROM counter_backlog WHERE key = '9'");
	assert_true(ver > 0);
	/* after the settle's snapshot: +1 and -1, the value unchanged */
	assert_int_equal(add(f->a.db, 1), 0);
	assert_int_equal(add(f->a.db, -1), 0);
	assert_int_equal(one(f->a.db, q), 1);
	assert_int_equal(done_if(f->a.db, ver), 0);	/* kept */
	assert_int_equal(one(f->a.db, q), 1);
	ver = one(f->a.db, "SELECT ver FROM counter_backlog WHERE key = '9'");
	assert_int_equal(done_if(f->a.db, ver), 1);	/* nothing came */
	assert_int_equal(one(f->a.db, "SELECT COUNT(*) FROM counter_backlog"),
	    0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refused_delta_waits_in_backlog,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_backlog_write_is_a_loss,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_backlog_row_goes_by_version,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
