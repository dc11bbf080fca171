# cpu.sh -- the CPU a stack spends, by process (sourced by run.sh and
# stacks.sh).  Throughput on a shared machine moves with everyone else's
# load; the CPU time the processes under ROOTS (a space-separated list of
# pids: tally-run, a second nginx, hello) spend per request moves much
# less.  tree_cpu reads /proc; the others do arithmetic on its output.
TICK_US=$((1000000 / $(getconf CLK_TCK)))
tree_cpu() {		# "total comm:ticks..." used so far by the trees under ROOTS
	{ cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v roots="$ROOTS" '
	BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) root[r[i]] = 1 }
	{	# fields after "pid (comm) ": the comm may hold spaces or ")"
		k = 0; rest = $0
		while ((j = index(rest, ") ")) > 0) { k += j + 1; rest = substr(rest, j + 2) }
		split(substr($0, k + 1), f, " ")
		c = substr($0, index($0, "(") + 1, k - index($0, "(") - 2)
		gsub(/[^A-Za-z0-9_.-]/, "_", c)
		pp[$1] = f[2]; t[$1] = f[12] + f[13]; cm[$1] = c }
	END {	for (p in t) {
			q = p; d = 0
			while (q > 1 && d++ < 64) {
				if (q in root) { s += t[p]; by[cm[p]] += t[p]; break }
				q = pp[q] + 0
			}
		}
		printf "%d", s
		for (c in by) printf " %s:%d", c, by[c]
		print "" }'
}
machine_ticks() {	# "busy total": the machine's jiffies so far, every process's
	awk '$1 == "cpu" { for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t; exit }' /proc/stat
}
cpu_diff() {		# before after -> "comm:ticks..." used in between
	awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, " "); for (i = 2; i <= n; i++) {
		split(x[i], kv, ":"); v[kv[1]] -= kv[2] }
		n = split(b, x, " "); for (i = 2; i <= n; i++) { split(x[i], kv, ":"); v[kv[1]] += kv[2] }
		for (c in v) if (v[c] > 0) printf "%s:%d ", c, v[c] }'
}
# per_req "comm:ticks..." requests -> "comm N µs, ..." largest first
per_req() {
	tr ' ' '\n' | awk -F: -v n="$1" -v us="$TICK_US" 'NF == 2 { v[$1] += $2 }
	END { for (c in v) printf "%d %s\n", v[c] * us / n, c }' | sort -rn |
	    awk '$1 > 0 { printf "%s%s %d", sep, $2, $1; sep = " + " } END { print " µs" }'
}
# comm_us comm requests <<<"comm:ticks...": that process's µs per request
comm_us() {
	tr ' ' '\n' | awk -F: -v c="$1" -v n="$2" -v us="$TICK_US" \
	    '$1 == c { v += $2 } END { printf "%.0f", v * us / n }'
}

