/* chart.h -- small SVG charts drawn server-side (no script, no inline
 * style: the CSP allows neither).  Coordinates are integers. */
#ifndef TALLY_CHART_H
#define TALLY_CHART_H

#include "base/buf.h"

/* A bar chart of n values with labels (e.g. run ids), oldest first. */
void	chart_bars(struct buf *, const char *title, const long long *values,
	    const long long *labels, int n);

#endif
