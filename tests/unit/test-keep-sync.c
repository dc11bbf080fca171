/* test-keep-sync.c -- a reader group's sync in two halves (web/keep.h:
 * keep_sync_send(), keep_sync_recv()), on a real redis-server: the
 * pages' first round trips go out while the sync is on its way, so a
 * change the sync reports may have come after such a read.  A page whose
 * first round trip read a key the sync forgot is never kept (its keys
 * marked over); one whose keys did not change may be; without a sync
 * none may; and the requests are marked synced only when the sync came
 * back. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "store/app.h"
#include "store/rds.h"
#include "store/rds_int.h"
#include "web/keep.h"
#include "web/req.h"
#include "tmpredis.h"

static int
setup(void **state)
{
	return tmpredis_setup(state, "keepsync");
}

static int
teardown(void **state)
{
	return tmpredis_teardown(state);
}

/* A read of key on the tracked data connection, recorded into ks. */
static void
read_recorded(struct rds *r, struct rds_keys *ks, const char *key)
{
	rds_record(r, ks);
	rds_free(rds_cmdv(r, "GET", key, NULL));
	rds_record(r, NULL);
	assert_int_equal(ks->n, 1);
	assert_int_equal(ks->over, 0);
}

static void
test_forgotten_key_not_kept(void **state)
{
	struct tmpredis_fix *f = *state;
	struct rds *r = &f->rds, other;
	struct app a = { .rds = r };
	struct req_ahead ahead[2];
	struct req q[2], *rs[2] = { &q[0], &q[1] };

	memset(ahead, 0, sizeof(ahead));
	memset(q, 0, sizeof(q));
	rds_free(rds_cmdv(r, "MSET", "changed", "1", "still", "1", NULL));
	/* tracking on (its first sync starts it) */
	assert_int_equal(keep_sync_recv(NULL, 0, keep_sync_send(&a)), 0);
	/* each page's first round trip, sent ahead of the group's sync */
	read_recorded(r, &ahead[0].keys, "changed");
	read_recorded(r, &ahead[1].keys, "still");
	q[0].ahead = &ahead[0];
	q[1].ahead = &ahead[1];
	/* another client changes what page 0 read */
	rds_init(&other, f->srv.sock, 2000);
	rds_free(rds_cmdv(&other, "SET", "changed", "2", NULL));
	rds_close(&other);
	assert_int_equal(keep_sync_recv(rs, 2, keep_sync_send(&a)), 0);
	assert_int_equal(ahead[0].keys.over, 1);	/* never kept */
	assert_int_equal(ahead[1].keys.over, 0);	/* may be */
	assert_int_equal(q[0].keep.synced, 1);
	assert_int_equal(q[1].keep.synced, 1);
}

static void
test_no_sync_none_kept(void **state)
{
	struct tmpredis_fix *f = *state;
	struct rds *r = &f->rds;
	struct req_ahead ahead;
	struct req q, *rs[1] = { &q };

	memset(&ahead, 0, sizeof(ahead));
	memset(&q, 0, sizeof(q));
	read_recorded(r, &ahead.keys, "still");
	q.ahead = &ahead;
	/* the send failed: no sync comes back */
	assert_int_equal(keep_sync_recv(rs, 1, -1), -1);
	assert_int_equal(ahead.keys.over, 1);
	assert_int_equal(q.keep.synced, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forgotten_key_not_kept),
		cmocka_unit_test(test_no_sync_none_kept),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
