/* rebuild.c -- one rebuilder at a time; see rebuild.h. */
#include <assert.h>
#include <stdio.h>

#include <hiredis/hiredis.h>

#include "store/rebuild.h"

#define REBUILD_CLEAR_MAX	6	/* keys rebuild_start() clears, at most */

/* KEYS: lock, ok, the keys to clear.  ARGV: ms, "1" when ok is set.  The
 * lock if free, then the old structure cleared and ok "b". */
static struct rds_script begin_lua = { .src =
	"#!lua\n"
	"if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then"
	" return 0 end\n"
	"for i = 3, #KEYS do redis.call('DEL', KEYS[i]) end\n"
	"if ARGV[2] == '1' then redis.call('SET', KEYS[2], 'b') end\n"
	"return 1\n" };

int
rebuild_lock(struct rds *r, const char *lock, int ms)
{
	char px[16];
	rds_reply *rep;
	int got;

	snprintf(px, sizeof(px), "%d", ms);
	if ((rep = rds_cmdv(r, "SET", lock, "1", "NX", "PX", px, NULL)) == NULL)
		return -1;
	got = rep->type == RDS_STATUS;
	rds_free(rep);
	return got;
}

int
rebuild_begin(struct rds *r, const char *lock, int ms, const char *ok,
    const char *const *clear, int n)
{
	const char *keys[2 + REBUILD_CLEAR_MAX], *args[2];
	char px[16];
	rds_reply *rep;
	int i, got;

	assert(n >= 0 && n <= REBUILD_CLEAR_MAX);
	snprintf(px, sizeof(px), "%d", ms);
	keys[0] = lock;
	keys[1] = ok != NULL ? ok : lock;	/* unused then */
	for (i = 0; i < n; i++)
		keys[2 + i] = clear[i];
	args[0] = px;
	args[1] = ok != NULL ? "1" : "0";
	if ((rep = rds_eval(r, &begin_lua, 2 + n, keys, 2, args)) == NULL)
		return -1;
	/* an error reply: nothing known held (a lock it took lapses, as a
	 * dead rebuilder's does) */
	got = rep->type == RDS_INTEGER ? (int)rep->integer : -1;
	rds_free(rep);
	return got;
}

int
rebuild_done(struct rds *r, const char *lock, const char *ok)
{
	const char *set[3] = { "SET", ok, "1" }, *del[2] = { "DEL", lock };
	rds_reply *rep;
	int qset = 0, qdel, ok_set = 1;

	/* one round trip: the marker first, then the lock */
	if (ok != NULL && !(qset = rds_append_strs(r, 3, set) == 0))
		ok_set = 0;
	qdel = rds_append_strs(r, 2, del) == 0;
	if (qset) {
		if (rds_get_reply(r, &rep) == -1)
			ok_set = 0;
		else {
			ok_set = rep->type != RDS_ERROR;
			rds_free(rep);
		}
	}
	if (qdel)
		rds_collect(r, 1);
	if (!ok_set) {
		rebuild_fail(r, lock, ok);
		return -1;
	}
	return 0;
}

void
rebuild_fail(struct rds *r, const char *lock, const char *ok)
{
	rds_reply *rep;

	rep = ok != NULL ? rds_cmdv(r, "DEL", ok, lock, NULL) :
	    rds_cmdv(r, "DEL", lock, NULL);
	rds_free(rep);
}
