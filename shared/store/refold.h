/* refold.h -- the people search's words folded again when the fold
 * changed (base/words.h): from ASCII letters alone to every letter.
 *
 * The rows of name_words were written with the old fold: "Émile" stayed
 * "Émile", and a search for "émile" (or "ÉMILE", folded now) missed it.
 * A migration step folds every stored word again, as words_fold() does
 * now (a word folded twice is folded once; a word and the whole name
 * are folded alike), and drops a row the new fold makes the same as
 * another of the same user ("Émile émile").  SQLite runs it as SQL with
 * the function tally_fold(text), which every connection has; PostgreSQL
 * cannot call the process's C, so its step is REFOLD_STEP, which the
 * migration runs here, in its transaction.
 */
#ifndef TALLY_REFOLD_H
#define TALLY_REFOLD_H

#include <stddef.h>

struct sqlite3;
struct pg_conn;

/* The text of a PostgreSQL migration step run by refold_pg_on(). */
#define REFOLD_STEP	"-- name_words folded again (store/refold.c)"

/* Gives the SQLite connection the function tally_fold(text): 0, -1. */
int	refold_sqlite_function(struct sqlite3 *);
/* Folds every non-ASCII word of name_words again, on a PostgreSQL
 * connection inside the migration's transaction: 0, or -1 with the
 * error in err. */
int	refold_pg_on(struct pg_conn *, char *err, size_t errsz);

#endif
