/* tallyctl_args.c -- the operator CLI's words; see tallyctl_args.h. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "base/cfg.h"
#include "store/pg.h"
#include "tallyctl_args.h"

const char tallyctl_usage_text[] =
    "usage: tallyctl useradd [--admin] LOGIN NAME [PASSWORD]\n"
    "       tallyctl passwd LOGIN\n"
    "       tallyctl seed [--users N] [--posts N] [--follows N] "
    "[--likes N] [--comments N] [--reposts N] [--seed N] [--demo]\n"
    "       tallyctl flush\n"
    "       tallyctl reconcile [--dry-run]\n"
    "       tallyctl warm [--followers-of LOGIN] [LOGIN...]\n"
    "       tallyctl help\n";

int
tallyctl_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("tallyctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (tallyctl help shows the usage)\n", stderr);
	return 2;
}

int
tallyctl_site_found(void)
{
	const char *db = getenv("TALLY_DB"), *rd = cfg_run_dir_env();
	char path[PATH_MAX], url[PATH_MAX];

	if (db != NULL && *db != '\0') {
		if (pg_is_url(db) || access(db, F_OK) == 0)
			return 0;
		fprintf(stderr, "tallyctl: no database at %s (TALLY_DB)\n", db);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/" CFG_DB_FILE, rd);
	snprintf(url, sizeof(url), "%s/" CFG_DB_URL_FILE, rd);
	if (access(path, F_OK) == 0 || access(url, F_OK) == 0)
		return 0;
	fprintf(stderr, "tallyctl: no site's database in %s (RUN_DIR: the "
	    "directory make run prints)\n", rd);
	return -1;
}

int
tallyctl_read_password(char *buf, size_t sz)
{
	struct termios old, quiet;
	int tty = isatty(STDIN_FILENO), rc = 0;
	size_t n;

	if (tty) {
		fprintf(stderr, "Password: ");
		tcgetattr(STDIN_FILENO, &old);
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
	}
	if (fgets(buf, (int)sz, stdin) == NULL)
		rc = -1;
	if (tty) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
		fprintf(stderr, "\n");
	}
	if (rc == -1)
		return -1;
	n = strcspn(buf, "\r\n");
	buf[n] = '\0';
	return 0;
}
