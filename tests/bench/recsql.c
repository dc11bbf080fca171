/* recsql.c -- the baseline of the reconciliation benchmark: prints the
 * statement table's recount query of every counter family that has truth rows
 * (shared/count/counters.c, linked from build/libtally.a), one statement a
 * line, so run.sh can time the bare GROUP BYs in the sqlite3 shell with
 * exactly the SQL that tallyctl reconcile runs.
 *
 *   recsql            every family
 *   recsql NAME...    only the named families (e.g. post_likes)
 */
#include <stdio.h>
#include <string.h>

#include "count/counters.h"
#include "store/sql.h"

int
main(int argc, char *argv[])
{
	int i, j, want, n = 0;

	for (i = 0; i < FAM__MAX; i++) {
		if (families[i].recount == NO_RECOUNT)
			continue;
		want = argc == 1;
		for (j = 1; j < argc; j++)
			if (strcmp(argv[j], families[i].name) == 0)
				want = 1;
		if (!want)
			continue;
		printf("%s;\n", sql_text[families[i].recount]);
		n++;
	}
	return n > 0 ? 0 : 1;
}
