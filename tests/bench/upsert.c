/* upsert.c -- the baseline of the flush benchmark: raw SQLite batched
 * UPSERTs into a table identical to tally's counters.
 *
 *   upsert DBFILE NOBJ VALUE
 *
 * Creates DBFILE (it must not exist) with tally's pragmas (WAL,
 * synchronous NORMAL, 8 MB cache) and the counters table of
 * shared/store/schema.c, then in ONE transaction adds VALUE to the 2*NOBJ
 * counters ("post_likes" and "post_views" of keys 1..NOBJ as text, the
 * keys cload.c dirties) with the flusher's own statement
 *     INSERT ... ON CONFLICT(name, key) DO UPDATE SET value = value + excluded.value
 * in a shuffled order (the flusher's SPOP hands out hashes at random).
 * Prints "<rows> <seconds> <CPU seconds>" for BEGIN .. COMMIT (the CPU:
 * the flush's SQLite threads are compared with it per row).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

static double
clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned long long
rnd(unsigned long long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static int
exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "upsert: %s: %s\n", sql, err ? err : "?");
		sqlite3_free(err);
		return -1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	unsigned long long seed = 0x9E3779B97F4A7C15ULL;
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	long long nobj, value, rows, i, j, *order;
	char key[24];
	double t0, t1, c0, c1;

	if (argc != 4) {
		fprintf(stderr, "usage: upsert DBFILE NOBJ VALUE\n");
		return 2;
	}
	nobj = strtoll(argv[2], NULL, 10);
	value = strtoll(argv[3], NULL, 10);
	if (nobj < 1 || nobj > 100000000) {
		fprintf(stderr, "upsert: NOBJ 1..100000000\n");
		return 2;
	}
	rows = 2 * nobj;
	if ((order = calloc((size_t)rows, sizeof(*order))) == NULL)
		return 1;
	for (i = 0; i < rows; i++)
		order[i] = i;
	for (i = rows - 1; i > 0; i--) {
		j = (long long)(rnd(&seed) % (unsigned long long)(i + 1));
		long long t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		goto fail;
	if (exec(db, "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL;"
	    "PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY;"
	    "PRAGMA cache_size = -8000;") == -1 ||
	    exec(db, "CREATE TABLE counters (name TEXT NOT NULL, "
	    "key TEXT NOT NULL, value INTEGER NOT NULL, "
	    "PRIMARY KEY (name, key)) WITHOUT ROWID;") == -1)
		goto fail;
	if (sqlite3_prepare_v2(db, "INSERT INTO counters(name, key, value) "
	    "VALUES(?1, ?2, ?3) ON CONFLICT(name, key) DO UPDATE SET "
	    "value = value + excluded.value", -1, &s, NULL) != SQLITE_OK)
		goto fail;
	t0 = clock_s(CLOCK_MONOTONIC);
	c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	if (exec(db, "BEGIN IMMEDIATE") == -1)
		goto fail;
	for (i = 0; i < rows; i++) {
		snprintf(key, sizeof(key), "%lld", order[i] / 2 + 1);
		sqlite3_bind_text(s, 1, order[i] % 2 ? "post_views" :
		    "post_likes", -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(s, 3, value);
		if (sqlite3_step(s) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(s);
		sqlite3_clear_bindings(s);
	}
	if (exec(db, "COMMIT") == -1)
		goto fail;
	t1 = clock_s(CLOCK_MONOTONIC);
	c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	printf("%lld %.6f %.6f\n", rows, t1 - t0, c1 - c0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	free(order);
	return 0;
fail:
	fprintf(stderr, "upsert: %s\n", db ? sqlite3_errmsg(db) : "open failed");
	sqlite3_finalize(s);
	sqlite3_close(db);
	free(order);
	return 1;
}
