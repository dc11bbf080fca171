/* tlstale.c -- timelines Redis missed changes of; see tlstale.h. */
#include "base/clock.h"
#include "base/log.h"
#include "social/tlstale.h"
#include "store/dbq.h"
#include "store/key.h"

void
tlstale_mark(struct app *a)
{
	if (dbq_setting(a->db, "timelines_stale", 0) == 0)
		log_warn("Redis missed timeline changes; timelines will be "
		    "rebuilt from SQLite when it is back");
	dbq_setting_put(a->db, "timelines_stale", clock_wall_ms());
}

int
tlstale_refresh(struct app *a)
{
	long long since = dbq_setting(a->db, "timelines_stale", 0);

	if (since == 0)
		return 0;
	if (rds_del_matching(a->rds, KEY_TIMELINE_MARKS) < 0)
		return -1;
	/* Clear only if no new miss happened meanwhile. */
	if (dbq_setting(a->db, "timelines_stale", 0) == since)
		dbq_setting_put(a->db, "timelines_stale", 0);
	log_info("timelines marked for rebuild after Redis missed changes");
	return 1;
}
