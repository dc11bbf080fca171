/* metrics_page.c -- /metrics: the gauges (opsview.h) with the
 * process's own counter mapping, rendered by view_metrics_page(). */
#include <string.h>

#include "admin_pages.h"
#include "social/opsview.h"
#include "web/resp.h"
#include "web/view_admin.h"

static enum page_load
metrics_load(struct req *r, void *vm)
{
	struct metrics_model *m = vm;
	const char *addr = req_param(r, "REMOTE_ADDR");

	/* nginx allows 127.0.0.1 only; the handler checks again, so a
	 * reverse proxy on the same host cannot publish it by accident */
	if (addr == NULL || (strcmp(addr, "127.0.0.1") != 0 &&
	    strcmp(addr, "::1") != 0)) {
		resp_text(r, 403, "text/plain; charset=utf-8",
		    "/metrics answers local clients only\n");
		return PAGE_ANSWERED;
	}
	opsview_load(r->app, OPS_METRICS, &m->v);
	m->m = r->app->metrics;	/* the process's own mapping (serve.c) */
	return PAGE_RENDER;
}

const struct page page_metrics = {
	sizeof(struct metrics_model), metrics_load, view_metrics_page, NULL
};
