/* tallyctl_args.h -- the operator CLI's words with its operator, apart
 * from its commands (tallyctl.c): its usage, a command line refused,
 * where the site's database is, a password from standard input. */
#ifndef TALLY_TALLYCTL_ARGS_H
#define TALLY_TALLYCTL_ARGS_H

#include <stddef.h>

/* The whole usage (tallyctl help prints it on standard output). */
extern const char tallyctl_usage_text[];
/* A command line refused: one line on stderr, what was wrong (the whole
 * usage is tallyctl help's).  Returns 2, the exit status. */
int	tallyctl_usage(const char *fmt, ...)
	    __attribute__((format(printf, 1, 2)));
/* Whether the site's database is where RUN_DIR (or TALLY_DB) says, as
 * cfg.c finds it: a PostgreSQL URL, a SQLite file that exists, or a run
 * directory of tally-run's PostgreSQL (its database-url).  Nothing is
 * made here (cfg_load() would make RUN_DIR, and SQLite the file: a
 * mistyped RUN_DIR became a new, empty site).  0, or -1 after the one
 * line saying where it looked. */
int	tallyctl_site_found(void);
/* A password from standard input: one line, its newline dropped; on a
 * terminal, asked for without echo.  0, or -1 with nothing read. */
int	tallyctl_read_password(char *buf, size_t sz);

#endif
