# chart.awk -- the benchmark ratios against their goals as an SVG chart
# (no dependencies: POSIX awk writing SVG text).
#
#   awk -F'\t' -v title="..." -f chart.awk ratios.tsv > results.svg
#
# Input, one measurement a line, tab-separated:
#   label  ratio  goal  op  verdict
# where op is ">=" (higher is better) or "<=" (lower is better) and
# verdict is "pass" or "miss".  Each row is a bar on a log scale drawn
# from 1x to the ratio (green: goal met, red: missed), the goal a black
# tick with the side that passes shaded, and the ratio printed at the
# bar's end.
function esc(s) {
	gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s)
	gsub(/"/, "\\&quot;", s)
	return s
}
function lg(v) { return log(v) / log(10) }
function x(v) {
	if (v < lo) v = lo
	if (v > hi) v = hi
	return X0 + (lg(v) - lg(lo)) / (lg(hi) - lg(lo)) * W
}
function floor_(v) { return v == int(v) ? v : (v < 0 ? int(v) - 1 : int(v)) }
function ceil_(v) { return v == int(v) ? v : (v < 0 ? int(v) : int(v) + 1) }
function num(v) { return sprintf("%.1f", v) }
NF >= 5 && $2 + 0 > 0 && $3 + 0 > 0 {
	n++
	label[n] = $1; ratio[n] = $2 + 0; goal[n] = $3 + 0; op[n] = $4
	verdict[n] = $5
	if (ratio[n] < mn) mn = ratio[n]
	if (goal[n] < mn) mn = goal[n]
	if (ratio[n] > mx) mx = ratio[n]
	if (goal[n] > mx) mx = goal[n]
}
BEGIN { mn = 1; mx = 1; n = 0 }
END {
	dlo = floor_(lg(mn) - 0.02); dhi = ceil_(lg(mx) + 0.02)
	lo = 10 ^ dlo; hi = 10 ^ dhi
	X0 = 470; W = 400; RH = 24; TOP = 70
	width = X0 + W + 90
	height = TOP + n * RH + 60
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" " \
	    "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
	    width, height, width, height
	printf "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
	printf "<text x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"bold\">%s</text>\n",
	    esc(title)
	printf "<text x=\"12\" y=\"42\" fill=\"#555\">ratio to the same-run baseline " \
	    "(log scale); bar from 1x; black tick = goal, shaded = the side that " \
	    "passes</text>\n"
	# grid: 1, 2 and 5 of every decade, labelled at 1
	for (d = dlo; d <= dhi; d++)
		for (m = 1; m <= 5; m += (m == 1 ? 1 : 3)) {
			v = m * 10 ^ d
			if (v > hi * 1.001) continue
			gx = x(v)
			printf "<line x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\" stroke=\"%s\"/>\n",
			    num(gx), TOP - 8, num(gx), TOP + n * RH,
			    (m == 1 ? (d == 0 ? "#444" : "#bbb") : "#e4e4e4")
			if (m == 1)
				printf "<text x=\"%s\" y=\"%d\" text-anchor=\"middle\" " \
				    "fill=\"#333\">%sx</text>\n", num(gx), TOP + n * RH + 16,
				    (v >= 1 ? sprintf("%d", v + 0.5) : sprintf("%g", v))
		}
	for (i = 1; i <= n; i++) {
		y = TOP + (i - 1) * RH
		if (i % 2 == 0)
			printf "<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" " \
			    "fill=\"#f6f6f6\"/>\n", y, width, RH
		gx = x(goal[i])
		# the passing side of the goal, shaded
		if (op[i] == ">=")
			printf "<rect x=\"%s\" y=\"%d\" width=\"%s\" height=\"%d\" " \
			    "fill=\"#2e7d32\" fill-opacity=\"0.08\"/>\n",
			    num(gx), y + 2, num(X0 + W - gx), RH - 4
		else
			printf "<rect x=\"%d\" y=\"%d\" width=\"%s\" height=\"%d\" " \
			    "fill=\"#2e7d32\" fill-opacity=\"0.08\"/>\n",
			    X0, y + 2, num(gx - X0), RH - 4
		l = label[i]
		if (length(l) > 72) l = substr(l, 1, 70) "..."
		printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
		    X0 - 8, y + RH / 2 + 4, esc(l)
		bx = x(1); ex = x(ratio[i])
		col = verdict[i] == "pass" ? "#2e7d32" : "#c62828"
		printf "<rect x=\"%s\" y=\"%d\" width=\"%s\" height=\"%d\" fill=\"%s\">" \
		    "<title>%s: %.3gx (goal %s %gx): %s</title></rect>\n",
		    num((ex < bx) ? ex : bx), y + 6, num((ex < bx) ? bx - ex : ex - bx + 1),
		    RH - 12, col, esc(label[i]), ratio[i], esc(op[i]), goal[i], verdict[i]
		printf "<circle cx=\"%s\" cy=\"%d\" r=\"3.5\" fill=\"%s\"/>\n",
		    num(ex), y + RH / 2, col
		printf "<line x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\" stroke=\"#000\" " \
		    "stroke-width=\"2\"/>\n", num(gx), y + 2, num(gx), y + RH - 2
		printf "<text x=\"%d\" y=\"%d\" fill=\"%s\">%.2fx %s</text>\n",
		    X0 + W + 6, y + RH / 2 + 4, col, ratio[i], verdict[i]
	}
	printf "</svg>\n"
}
