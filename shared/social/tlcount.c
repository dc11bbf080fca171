/* tlcount.c -- authors' posts after a time, from their profile
 * timelines; see tlcount.h. */
#include <stdio.h>

#include "social/timeline.h"
#include "social/tlcount.h"
#include "store/dbq.h"

/* KEYS: set, marker.  ARGV: after.  -1 unless complete. */
static struct rds_script tl_count_lua = { .src =
	"#!lua flags=no-writes\n"
	"if redis.call('GET', KEYS[2]) ~= '1' then return -1 end\n"
	"return redis.call('ZCOUNT', KEYS[1], '(' .. ARGV[1], '+inf')\n" };

/* KEYS: set, marker, set, marker...  ARGV: after, after...  Each
 * author's count, -1 unless complete: one script for many authors on one
 * Redis, where a script costs about ten plain commands and the followed
 * badge's cold path asked for one an author. */
static struct rds_script tl_count_many_lua = { .src =
	"#!lua flags=no-writes\n"
	"local out = {}\n"
	"for i = 1, #ARGV do\n"
	"  if redis.call('GET', KEYS[2 * i]) ~= '1' then out[i] = -1 else\n"
	"  out[i] = redis.call('ZCOUNT', KEYS[2 * i - 1], '(' .. ARGV[i], '+inf')"
	" end\n"
	"end\n"
	"return out\n" };

#define TL_COUNT_MANY	128	/* authors a script, well inside its arguments */

/* Queues the counts of authors [from, from + n): one script on one Redis,
 * a script each on a cluster (their timelines are in many slots).  How
 * many replies to read, or -1. */
static int
send_counts(struct rds *rd, int many, int n, const long long *authors,
    const long long *after)
{
	struct timeline_keys k[TL_COUNT_MANY];
	const char *keys[2 * TL_COUNT_MANY], *args[TL_COUNT_MANY];
	char num[TL_COUNT_MANY][24];
	int i;

	for (i = 0; i < n; i++) {
		timeline_keys(&k[i], TL_PROFILE, authors[i]);
		keys[2 * i] = k[i].set;
		keys[2 * i + 1] = k[i].ok;
		snprintf(num[i], sizeof(num[i]), "%lld", after[i]);
		args[i] = num[i];
	}
	if (many)
		return rds_append_eval(rd, &tl_count_many_lua, 2 * n, keys, n,
		    args) == -1 ? -1 : 1;
	for (i = 0; i < n; i++)
		if (rds_append_eval(rd, &tl_count_lua, 2, keys + 2 * i, 1,
		    args + i) == -1)
			return i;
	return n;
}

/* Reads what send_counts() queued into out[0..n). */
static void
read_counts(struct rds *rd, int many, int replies, int n, long long *out)
{
	rds_reply *rep;
	size_t j;
	int i;

	for (i = 0; i < replies; i++) {
		if (rds_get_reply(rd, &rep) == -1)
			return;
		if (!many && rds_type(rep) == RDS_INTEGER)
			out[i] = rds_int(rep);
		for (j = 0; many && rds_type(rep) == RDS_ARRAY &&
		    rds_n(rep) == (size_t)n && j < rds_n(rep); j++)
			if (rds_type(rds_at(rep, j)) == RDS_INTEGER)
				out[j] = rds_int(rds_at(rep, j));
		rds_free(rep);
	}
}

int
tlcount_after(struct app *a, int n, const long long *authors,
    const long long *after, long long *out)
{
	struct dbq *s;
	struct rds *rd = app_reader(a);
	int i, m, sent, from, many = !rds_is_cluster(rd);

	for (i = 0; i < n; i++)
		out[i] = -1;
	for (from = 0; from < n; from += TL_COUNT_MANY) {
		m = n - from < TL_COUNT_MANY ? n - from : TL_COUNT_MANY;
		if ((sent = send_counts(rd, many, m, authors + from,
		    after + from)) == -1)
			break;
		read_counts(rd, many, sent, m, out + from);
	}
	for (i = 0; i < n; i++) {
		if (out[i] >= 0)
			continue;
		if ((s = dbq_stmt(a->db, STMT_AUTHOR_UNREAD_SQL)) == NULL)
			return -1;
		dbq_bind_i64(s, 1, authors[i]);
		dbq_bind_i64(s, 2, after[i]);
		out[i] = dbq_step(s) == DBQ_ROW ?
		    dbq_i64(s, 0) : 0;
		dbq_done(s);
	}
	return 0;
}
