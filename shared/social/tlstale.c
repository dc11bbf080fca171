/* tlstale.c -- what Redis missed a change of, kept in SQLite until it
 * answers again; see tlstale.h. */
#include "base/clock.h"
#include "base/log.h"
#include "social/tlstale.h"
#include "store/dbq.h"
#include "store/key.h"

void
tlstale_mark_as(struct app *a, const char *setting, const char *what)
{
	if (dbq_setting(a->db, setting, 0) == 0)
		log_warn("Redis missed %s; dropped from Redis when it is back",
		    what);
	dbq_setting_put(a->db, setting, clock_wall_ms());
}

int
tlstale_drop_as(struct app *a, const char *setting, const char *pattern,
    const char *what)
{
	long long since = dbq_setting(a->db, setting, 0);

	if (since == 0)
		return 0;
	if (rds_del_matching(a->rds, pattern) < 0)
		return -1;
	/* Clear only if no new miss happened meanwhile. */
	if (dbq_setting(a->db, setting, 0) == since)
		dbq_setting_put(a->db, setting, 0);
	log_info("%s dropped from Redis after it missed changes", what);
	return 1;
}

void
tlstale_mark(struct app *a)
{
	tlstale_mark_as(a, "timelines_stale", "timeline changes (timelines "
	    "are rebuilt from SQLite)");
}

int
tlstale_refresh(struct app *a)
{
	return tlstale_drop_as(a, "timelines_stale", KEY_TIMELINE_MARKS,
	    "timelines' markers");
}
