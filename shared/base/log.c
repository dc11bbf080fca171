/* log.c -- stderr logging.  The supervisor points stderr of every
 * process at $RUN_DIR/logs/NAME.log; under systemd it goes to the journal.
 * The program name is the only process-wide state, set once at start. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

static const char *log_prog = "tally";

void
log_init(const char *prog)
{
	log_prog = prog;
}

static void
log_v(const char *lvl, const char *fmt, va_list ap)
{
	char ts[32], msg[1024];
	struct tm tm;
	time_t now = time(NULL);

	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "%s %s[%ld] %s: %s\n", ts, log_prog, (long)getpid(),
	    lvl, msg);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_v("info", fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_v("warn", fmt, ap);
	va_end(ap);
}

void
log_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_v("error", fmt, ap);
	va_end(ap);
}
