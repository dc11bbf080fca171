/* tlcount.c -- authors' posts after a time, from their profile
 * timelines; see tlcount.h. */
#include <stdio.h>

#include "social/timeline.h"
#include "social/tlcount.h"
#include "store/query.h"

/* KEYS: set, marker.  ARGV: after.  -1 unless complete. */
static struct rds_script tl_count_lua = { .src =
	"#!lua flags=no-writes\n"
	"if redis.call('GET', KEYS[2]) ~= '1' then return -1 end\n"
	"return redis.call('ZCOUNT', KEYS[1], '(' .. ARGV[1], '+inf')\n" };

int
tl_count_after(struct app *a, int n, const long long *authors,
    const long long *after, long long *out)
{
	struct tl_keys k;
	const char *keys[2], *args[1];
	char num[24];
	rds_reply *rep;
	struct dbq *s;
	struct rds *rd = app_reader(a);
	int i, queued = 0;

	for (i = 0; i < n; i++)
		out[i] = -1;
	for (i = 0; i < n; i++) {
		tl_keys(&k, TL_PROFILE, authors[i]);
		keys[0] = k.set;
		keys[1] = k.ok;
		snprintf(num, sizeof(num), "%lld", after[i]);
		args[0] = num;
		if (rds_append_eval(rd, &tl_count_lua, 2, keys, 1, args) == -1)
			break;
		queued++;
	}
	for (i = 0; i < queued; i++) {
		if (rds_get_reply(rd, &rep) == -1) {
			break;
		}
		if (rep->type == RDS_INTEGER)
			out[i] = rep->integer;
		rds_free(rep);
	}
	for (i = 0; i < n; i++) {
		if (out[i] >= 0)
			continue;
		if ((s = db_stmt(&a->db, STMT_AUTHOR_UNREAD_SQL)) == NULL)
			return -1;
		dbq_bind_i64(s, 1, authors[i]);
		dbq_bind_i64(s, 2, after[i]);
		out[i] = dbq_step(s) == DBQ_ROW ?
		    dbq_i64(s, 0) : 0;
		db_done(s);
	}
	return 0;
}
