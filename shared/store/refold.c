/* refold.c -- the people search's words folded again; see refold.h. */
#include <stdio.h>
#include <string.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "base/words.h"
#include "store/refold.h"

static void
fold_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *in;
	char out[WORD_MAX];

	(void)argc;
	if ((in = (const char *)sqlite3_value_text(argv[0])) == NULL) {
		sqlite3_result_null(ctx);
		return;
	}
	words_fold(in, out);
	sqlite3_result_text(ctx, out, -1, SQLITE_TRANSIENT);
}

int
refold_sqlite_function(sqlite3 *h)
{
	return sqlite3_create_function_v2(h, "tally_fold", 1, SQLITE_UTF8 |
	    SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, NULL, fold_fn, NULL,
	    NULL, NULL) == SQLITE_OK ? 0 : -1;
}

/* A row whose word the new fold changes: deleted, and its folded word
 * put unless the user has it already. */
#define REFOLD_ROW \
	"WITH d AS (DELETE FROM name_words WHERE word = $1 AND " \
	"user_id = $2::bigint) INSERT INTO name_words(word, user_id) " \
	"VALUES($3, $2::bigint) ON CONFLICT DO NOTHING"

int
refold_pg_on(PGconn *c, char *err, size_t errsz)
{
	/* ASCII words fold as before: only the others are read */
	PGresult *all = PQexec(c, "SELECT word, user_id FROM name_words "
	    "WHERE octet_length(word) <> char_length(word)"), *r;
	char out[WORD_MAX];
	const char *v[3];
	int i, n, rc = 0;

	if (PQresultStatus(all) != PGRES_TUPLES_OK) {
		snprintf(err, errsz, "%s", PQresultErrorMessage(all));
		PQclear(all);
		return -1;
	}
	n = PQntuples(all);
	for (i = 0; i < n && rc == 0; i++) {
		v[0] = PQgetvalue(all, i, 0);
		v[1] = PQgetvalue(all, i, 1);
		if (words_fold(v[0], out) == 0 || strcmp(out, v[0]) == 0)
			continue;
		v[2] = out;
		r = PQexecParams(c, REFOLD_ROW, 3, NULL, v, NULL, NULL, 0);
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			snprintf(err, errsz, "%s", PQresultErrorMessage(r));
			rc = -1;
		}
		PQclear(r);
	}
	PQclear(all);
	return rc;
}
