/* upsert_pg.c -- the baseline of the PostgreSQL flush benchmark: raw
 * batched UPSERTs into a table identical to tally's counters, on the same
 * server.
 *
 *   upsert_pg CONNINFO NOBJ VALUE
 *
 * Creates the table counters_raw (dropped first) like schema_pg.c's
 * counters, then in ONE transaction adds VALUE to the 2*NOBJ counters
 * ("post_likes" and "post_views" of keys 1..NOBJ as text, the keys cload.c
 * dirties) in a shuffled order, 64 rows a statement (one prepared
 * INSERT ... VALUES (...), ... ON CONFLICT DO UPDATE, the flusher's own
 * batching: count/taken.c).  Prints "<rows> <seconds>" for BEGIN .. COMMIT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#define BATCH	64

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
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
ok(PGconn *c, PGresult *r, const char *what)
{
	ExecStatusType st = PQresultStatus(r);

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
		PQclear(r);
		return 0;
	}
	fprintf(stderr, "upsert_pg: %s: %s", what, PQerrorMessage(c));
	PQclear(r);
	return -1;
}

int
main(int argc, char *argv[])
{
	unsigned long long seed = 0x9E3779B97F4A7C15ULL;
	static char sql[BATCH * 40 + 256], keys[BATCH][24];
	const char *vals[BATCH * 3];
	long long nobj, value, rows, i, j, k, *order;
	char vbuf[24];
	size_t at;
	PGconn *c;
	double t0, t1;

	if (argc != 4) {
		fprintf(stderr, "usage: upsert_pg CONNINFO NOBJ VALUE\n");
		return 2;
	}
	nobj = strtoll(argv[2], NULL, 10);
	value = strtoll(argv[3], NULL, 10);
	if (nobj < BATCH || nobj > 100000000) {
		fprintf(stderr, "upsert_pg: NOBJ %d..100000000\n", BATCH);
		return 2;
	}
	rows = 2 * nobj;
	if ((order = calloc((size_t)rows, sizeof(*order))) == NULL)
		return 1;
	for (i = 0; i < rows; i++)
		order[i] = i;
	for (i = rows - 1; i > 0; i--) {
		j = (long long)(rnd(&seed) % (unsigned long long)(i + 1));
		k = order[i];
		order[i] = order[j];
		order[j] = k;
	}
	c = PQconnectdb(argv[1]);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "upsert_pg: %s", PQerrorMessage(c));
		return 1;
	}
	if (ok(c, PQexec(c, "DROP TABLE IF EXISTS counters_raw; "
	    "CREATE TABLE counters_raw (name TEXT COLLATE \"C\" NOT NULL, "
	    "key TEXT COLLATE \"C\" NOT NULL, value BIGINT NOT NULL, "
	    "PRIMARY KEY (name, key))"), "create") == -1)
		return 1;
	at = (size_t)snprintf(sql, sizeof(sql),
	    "INSERT INTO counters_raw(name, key, value) VALUES ");
	for (i = 0; i < BATCH; i++)
		at += (size_t)snprintf(sql + at, sizeof(sql) - at,
		    "%s($%lld, $%lld, $%lld::bigint)", i ? ", " : "", 3 * i + 1,
		    3 * i + 2, 3 * i + 3);
	snprintf(sql + at, sizeof(sql) - at, " ON CONFLICT(name, key) DO "
	    "UPDATE SET value = counters_raw.value + excluded.value");
	if (ok(c, PQprepare(c, "up", sql, BATCH * 3, NULL), "prepare") == -1)
		return 1;
	snprintf(vbuf, sizeof(vbuf), "%lld", value);
	t0 = now_s();
	if (ok(c, PQexec(c, "BEGIN"), "begin") == -1)
		return 1;
	/* rows is a multiple of 2 * BATCH / 2: whole batches, the rest one
	 * statement of the leftover rows padded with repeats would double
	 * count, so NOBJ is rounded down to whole batches */
	for (i = 0; i + BATCH <= rows; i += BATCH) {
		for (k = 0; k < BATCH; k++) {
			snprintf(keys[k], sizeof(keys[k]), "%lld",
			    order[i + k] / 2 + 1);
			vals[3 * k] = order[i + k] % 2 ? "post_views" :
			    "post_likes";
			vals[3 * k + 1] = keys[k];
			vals[3 * k + 2] = vbuf;
		}
		if (ok(c, PQexecPrepared(c, "up", BATCH * 3, vals, NULL, NULL,
		    0), "upsert") == -1)
			return 1;
	}
	if (ok(c, PQexec(c, "COMMIT"), "commit") == -1)
		return 1;
	t1 = now_s();
	printf("%lld %.6f\n", i, t1 - t0);
	PQfinish(c);
	free(order);
	return 0;
}
