/* rebuild.c -- one rebuilder at a time; see rebuild.h. */
#include <assert.h>
#include <stdio.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "base/rnd.h"
#include "store/rebuild.h"

#define REBUILD_CLEAR_MAX	6	/* keys rebuild_start() clears, at most */

/* KEYS: lock, ok, the keys to clear.  ARGV: ms, "1" when ok is set, the
 * token.  The lock if free, then the old structure cleared and ok "b". */
static struct rds_script begin_lua = { .src =
	"#!lua\n"
	"if not redis.call('SET', KEYS[1], ARGV[3], 'NX', 'PX', ARGV[1]) then"
	" return 0 end\n"
	"for i = 3, #KEYS do redis.call('DEL', KEYS[i]) end\n"
	"if ARGV[2] == '1' then redis.call('SET', KEYS[2], 'b') end\n"
	"return 1\n" };

/* KEYS: lock, ok.  ARGV: the token, then "1" to set ok, "0" to leave
 * it, "d" to drop it.  0 when the lock is no longer the token's, or when
 * ok is to be set and no longer reads "b" (the lock then freed): someone
 * dropped it meanwhile (tlstale.h: a change Redis missed), and a write
 * the rebuild's read came too early for skipped the set without it. */
static struct rds_script end_lua = { .src =
	"#!lua\n"
	"if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end\n"
	"if ARGV[2] == '1' and redis.call('GET', KEYS[2]) ~= 'b' then\n"
	"  redis.call('DEL', KEYS[1]) return 0 end\n"
	"if ARGV[2] == '1' then redis.call('SET', KEYS[2], '1')\n"
	"elseif ARGV[2] == 'd' then redis.call('DEL', KEYS[2]) end\n"
	"redis.call('DEL', KEYS[1])\n"
	"return 1\n" };

int
rebuild_begin(struct rds *r, const char *lock, int ms, const char *ok,
    const char *const *clear, int n, char tok[REBUILD_TOKEN])
{
	const char *keys[2 + REBUILD_CLEAR_MAX], *args[3];
	char px[16];
	rds_reply *rep;
	int i, got;

	assert(n >= 0 && n <= REBUILD_CLEAR_MAX);
	/* unique among rebuilders: the process, and a draw of its own */
	snprintf(tok, REBUILD_TOKEN, "%ld.%lld", (long)getpid(),
	    rnd_below(1000000000000000LL));
	snprintf(px, sizeof(px), "%d", ms);
	keys[0] = lock;
	keys[1] = ok != NULL ? ok : lock;	/* unused then */
	for (i = 0; i < n; i++)
		keys[2 + i] = clear[i];
	args[0] = px;
	args[1] = ok != NULL ? "1" : "0";
	args[2] = tok;
	if ((rep = rds_eval(r, &begin_lua, 2 + n, keys, 3, args)) == NULL)
		return -1;
	/* an error reply: nothing known held (a lock it took lapses, as a
	 * dead rebuilder's does) */
	got = rep->type == RDS_INTEGER ? (int)rep->integer : -1;
	rds_free(rep);
	return got;
}

/* end_lua with how (end_lua's ARGV[2]): 1 done, 0 not the lock's, -1. */
static int
end(struct rds *r, const char *lock, const char *ok, const char *tok,
    const char *how)
{
	const char *keys[2] = { lock, ok != NULL ? ok : lock };
	const char *args[2] = { tok, ok != NULL ? how : "0" };
	rds_reply *rep;
	int got;

	if ((rep = rds_eval(r, &end_lua, 2, keys, 2, args)) == NULL)
		return -1;
	got = rep->type == RDS_INTEGER ? (int)rep->integer : -1;
	rds_free(rep);
	return got;
}

int
rebuild_done(struct rds *r, const char *lock, const char *ok,
    const char *tok)
{
	int got = end(r, lock, ok, tok, "1");

	if (got == -1)
		rebuild_fail(r, lock, ok, tok);
	return got == 1 ? 0 : -1;
}

void
rebuild_fail(struct rds *r, const char *lock, const char *ok,
    const char *tok)
{
	end(r, lock, ok, tok, "d");
}
