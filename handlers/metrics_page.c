/* metrics_page.c -- /metrics: loads the gauges (opsview.h), renders the
 * process's own counter mapping with them (view_metrics.c). */
#include <stdlib.h>
#include <string.h>

#include "admin_pages.h"
#include "base/buf.h"
#include "social/opsview.h"
#include "web/resp.h"
#include "web/view_admin.h"

int
page_metrics(struct req *r)
{
	const char *addr = req_param(r, "REMOTE_ADDR");
	struct ops_view *v;
	struct buf out = { 0 };

	/* nginx allows 127.0.0.1 only; the handler checks again, so a
	 * reverse proxy on the same host cannot publish it by accident */
	if (addr == NULL || (strcmp(addr, "127.0.0.1") != 0 &&
	    strcmp(addr, "::1") != 0)) {
		resp_text(r, 403, "text/plain; charset=utf-8",
		    "/metrics answers local clients only\n");
		return 0;
	}
	v = xcalloc(1, sizeof(*v));
	ops_view_load(r->app, OPS_METRICS, v);
	/* the process's own mapping (serve.c), not a new one per scrape */
	view_metrics(&out, r->app->metrics, v);
	resp_text(r, 200, "text/plain; version=0.0.4; charset=utf-8", out.p);
	buf_free(&out);
	free(v);
	return 0;
}
