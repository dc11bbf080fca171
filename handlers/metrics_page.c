/* metrics_page.c -- /metrics: loads the gauges (opsview.h), renders the
 * process's own counter mapping with them (view_metrics.c). */
#include <stdlib.h>

#include "admin_pages.h"
#include "base/buf.h"
#include "social/opsview.h"
#include "web/resp.h"
#include "web/view_admin.h"

int
page_metrics(struct req *r)
{
	struct ops_view *v = xcalloc(1, sizeof(*v));
	struct buf out = { 0 };

	ops_view_load(r->app, OPS_METRICS, v);
	/* the process's own mapping (serve.c), not a new one per scrape */
	view_metrics(&out, r->app->metrics, v);
	resp_text(r, 200, "text/plain; version=0.0.4; charset=utf-8", out.p);
	buf_free(&out);
	free(v);
	return 0;
}
