/* chart.c -- SVG bar charts; see chart.h. */
#include "web/chart.h"
#include "web/html.h"

#define CH_W	600
#define CH_H	160
#define CH_PAD	24

void
chart_bars(struct buf *b, const char *title, const long long *values,
    const long long *labels, int n)
{
	long long max = 1;
	int i, bw, x, h;

	for (i = 0; i < n; i++)
		if (values[i] > max)
			max = values[i];
	bw = n > 0 ? (CH_W - 2 * CH_PAD) / n : 0;
	html_raw(b, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
	    "viewBox=\"0 0 600 160\" role=\"img\" aria-label=\"");
	html_attr(b, title);
	html_raw(b, "\"><title>");
	html_text(b, title);
	html_raw(b, "</title><line x1=\"24\" y1=\"136\" x2=\"576\" y2=\"136\" "
	    "stroke=\"currentColor\" stroke-width=\"1\"/>");
	for (i = 0; i < n; i++) {
		h = (int)(values[i] * (CH_H - 2 * CH_PAD) / max);
		x = CH_PAD + i * bw;
		html_raw(b, "<rect fill=\"#2f5bea\" x=\"");
		html_int(b, x + 2);
		html_raw(b, "\" y=\"");
		html_int(b, CH_H - CH_PAD - h);
		html_raw(b, "\" width=\"");
		html_int(b, bw > 4 ? bw - 4 : 1);
		html_raw(b, "\" height=\"");
		html_int(b, h);
		html_raw(b, "\" data-value=\"");
		html_int(b, values[i]);
		html_raw(b, "\"><title>run ");
		html_int(b, labels[i]);
		html_raw(b, ": ");
		html_int(b, values[i]);
		html_raw(b, " wrong</title></rect><text font-size=\"10\" "
		    "text-anchor=\"middle\" fill=\"currentColor\" x=\"");
		html_int(b, x + bw / 2);
		html_raw(b, "\" y=\"152\">#");
		html_int(b, labels[i]);
		html_raw(b, "</text><text font-size=\"10\" text-anchor=\"middle\" "
		    "fill=\"currentColor\" x=\"");
		html_int(b, x + bw / 2);
		html_raw(b, "\" y=\"");
		html_int(b, CH_H - CH_PAD - h - 4);
		html_raw(b, "\">");
		html_int(b, values[i]);
		html_raw(b, "</text>");
	}
	html_raw(b, "</svg>");
}
