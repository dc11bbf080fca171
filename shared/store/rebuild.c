/* rebuild.c -- one rebuilder at a time; see rebuild.h. */
#include <assert.h>
#include <stdio.h>

#include <hiredis/hiredis.h>

#include "store/rebuild.h"

int
rebuild_lock(struct rds *r, const char *lock, int ms)
{
	char px[16];
	rds_reply *rep;
	int got;

	snprintf(px, sizeof(px), "%d", ms);
	if ((rep = rds_cmdv(r, "SET", lock, "1", "NX", "PX", px, NULL)) == NULL)
		return -1;
	got = rep->type == RDS_STATUS;
	rds_free(rep);
	return got;
}

int
rebuild_start(struct rds *r, const char *lock, const char *ok,
    const char *const *clear, int n)
{
	const char *argv[8];
	rds_reply *rep;
	int i, argc = 0;

	assert(n >= 0 && n < (int)(sizeof(argv) / sizeof(argv[0])));
	if (n > 0) {
		argv[argc++] = "DEL";
		for (i = 0; i < n; i++)
			argv[argc++] = clear[i];
		if ((rep = rds_cmd(r, argc, argv, NULL)) == NULL ||
		    rep->type == RDS_ERROR)
			goto fail;
		rds_free(rep);
	}
	if (ok == NULL)
		return 0;
	if ((rep = rds_cmdv(r, "SET", ok, "b", NULL)) == NULL ||
	    rep->type == RDS_ERROR)
		goto fail;
	rds_free(rep);
	return 0;
fail:
	rds_free(rep);
	rebuild_fail(r, lock, ok);
	return -1;
}

int
rebuild_done(struct rds *r, const char *lock, const char *ok)
{
	rds_reply *rep = NULL;

	if (ok != NULL && ((rep = rds_cmdv(r, "SET", ok, "1", NULL)) == NULL ||
	    rep->type == RDS_ERROR)) {
		rds_free(rep);
		rebuild_fail(r, lock, ok);
		return -1;
	}
	rds_free(rep);
	if ((rep = rds_cmdv(r, "DEL", lock, NULL)) != NULL)
		rds_free(rep);
	return 0;
}

void
rebuild_fail(struct rds *r, const char *lock, const char *ok)
{
	rds_reply *rep;

	rep = ok != NULL ? rds_cmdv(r, "DEL", ok, lock, NULL) :
	    rds_cmdv(r, "DEL", lock, NULL);
	rds_free(rep);
}
