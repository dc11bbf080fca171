/* rds.c -- Redis access with timeouts, backoff and reconnect; see rds.h. */
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "rds.h"

#define RDS_ARGS_MAX	32

static long long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
rds_init(struct rds *r, const char *path, int timeout_ms)
{
	memset(r, 0, sizeof(*r));
	strncpy(r->path, path, sizeof(r->path) - 1);
	r->timeout_ms = timeout_ms > 0 ? timeout_ms : 500;
}

void
rds_drop(struct rds *r)
{
	if (r->c != NULL) {
		redisFree(r->c);
		r->c = NULL;
	}
	r->backoff_ms = r->backoff_ms ? r->backoff_ms * 2 : 100;
	if (r->backoff_ms > 2000)
		r->backoff_ms = 2000;
	r->retry_at_ms = mono_ms() + r->backoff_ms;
}

void
rds_close(struct rds *r)
{
	if (r->c != NULL)
		redisFree(r->c);
	r->c = NULL;
}

static int
rds_connect(struct rds *r)
{
	struct timeval ctv = { 0, 200 * 1000 }, tv;

	if (r->c != NULL)
		return 0;
	if (mono_ms() < r->retry_at_ms)
		return -1;
	r->c = redisConnectUnixWithTimeout(r->path, ctv);
	if (r->c == NULL || r->c->err) {
		if (r->c != NULL && r->backoff_ms == 0)
			log_warn("redis %s: %s", r->path, r->c->errstr);
		rds_drop(r);
		return -1;
	}
	tv.tv_sec = r->timeout_ms / 1000;
	tv.tv_usec = (r->timeout_ms % 1000) * 1000;
	if (redisSetTimeout(r->c, tv) != REDIS_OK) {
		rds_drop(r);
		return -1;
	}
	if (r->backoff_ms != 0)
		log_info("redis %s: reconnected", r->path);
	r->backoff_ms = 0;
	return 0;
}

int
rds_up(struct rds *r)
{
	return rds_connect(r) == 0;
}

redisReply *
rds_cmd(struct rds *r, int argc, const char **argv, const size_t *lens)
{
	redisReply *rep;

	if (rds_connect(r) == -1)
		return NULL;
	rep = redisCommandArgv(r->c, argc, argv, lens);
	if (rep == NULL) {
		log_warn("redis %s: %s", argv[0],
		    r->c->errstr[0] ? r->c->errstr : "no reply");
		rds_drop(r);
	}
	return rep;
}

redisReply *
rds_cmdv(struct rds *r, const char *arg0, ...)
{
	const char *argv[RDS_ARGS_MAX];
	size_t lens[RDS_ARGS_MAX];
	const char *a;
	va_list ap;
	int n = 0;

	va_start(ap, arg0);
	for (a = arg0; a != NULL && n < RDS_ARGS_MAX; a = va_arg(ap, const char *)) {
		argv[n] = a;
		lens[n] = strlen(a);
		n++;
	}
	va_end(ap);
	return rds_cmd(r, n, argv, lens);
}
