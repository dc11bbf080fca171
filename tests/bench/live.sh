#!/bin/bash
# live.sh -- a like with live-badge streams open against a like with none,
# in the same run ("make bench"; "make bench-live" alone).
#
# One stack under bin/tally-run: an author with 40 posts, a liker, and 9
# watchers.  A round: wrk likes and unlikes the author's posts as the
# liker (tests/bench/like.lua) with no stream open; then 1,000 streams are
# opened (tests/bench/streams.mjs): 100 of the author's, whose badges each
# like moves, and 100 of each watcher's; the same wrk run again; the
# streams closed.  The ratio is the median of the rounds' (with over
# without; p99: without's over with's, so that for both higher is
# better).  Beside it: nginx's memory per open stream (the growth of the
# proportional set size of nginx's processes, /proc/PID/smaps_rollup, over
# the streams opened), the events the streams received, and the CPU the
# stack spent per like by process, with streams and without.
#
# Goal (issue 48): with 1,000 streams >= 0.8x the like's req/s with none.
#
# Environment: BENCH_DURATION (5 s a run), BENCH_ROUNDS (3), BENCH_CONNS
# (16), BENCH_STREAMS (1000), BENCH_STRICT=1 (exit 1 when the goal is
# missed).  Writes build/bench/live.md and copies it to tests/bench/latest/.
set -u
cd "$(dirname "$0")/../.."
DUR=${BENCH_DURATION:-5}
ROUNDS=${BENCH_ROUNDS:-3}
CONNS=${BENCH_CONNS:-16}
STREAMS=${BENCH_STREAMS:-1000}
THREADS=2
OUT=build/bench
mkdir -p "$OUT" tests/bench/latest

NAME=live
# shellcheck source=tests/bench/stacks.sh
. tests/bench/stacks.sh
stacks_init wrk curl node

nginx_pss() {		# kB: the proportional set size of the stack's nginx
	local master
	master=$(cat "$RD/s/nginx/nginx.pid")
	{ echo "$master"; pgrep -P "$master"; } | while read -r p; do
		awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null
	done | awk '{ s += $1 } END { print s + 0 }'
}

say "starting a stack"
start s
base=$BASE_s
read -r sid_a csrf_a <<<"$(signup "$base" author)" || die "signup author"
posts=""
for i in $(seq 1 40); do
	loc=$(curl -fs -o /dev/null -w '%{redirect_url}' -b "sid=$sid_a" \
	    --data-urlencode "body=live post $i" --data-urlencode "topic=general" \
	    --data-urlencode "publish=1" --data-urlencode "csrf=$csrf_a" "$base/posts")
	posts="$posts${posts:+,}${loc##*/posts/}"
done
read -r sid_l csrf_l <<<"$(signup "$base" bench)" || die "signup liker"
per=$((STREAMS / 10))
echo "$sid_a $per" >"$RD/streams"
for k in $(seq 1 9); do
	read -r sid_w _ <<<"$(signup "$base" "watcher$k")" || die "signup watcher$k"
	echo "$sid_w $per" >>"$RD/streams"
done
ROOTS=$PID_s

# likes TAG: one wrk run of the liker's likes; sets RPS P99 N COST
likes() {
	local c0 c1
	c0=$(tree_cpu)
	SID=$sid_l CSRF=$csrf_l POSTS=$posts THREADS=$THREADS \
	    wrk_run "$1" -s tests/bench/like.lua "$base"
	c1=$(tree_cpu)
	N=$(awk '/requests in/ { print $1 }' "$OUT/live-wrk-$1.txt")
	COST=$(cpu_diff "$c0" "$c1" | per_req "$N")
}

rps0="" rps1="" p0="" p1=""
for r in $(seq 1 "$ROUNDS"); do
	likes "none-$r"
	cost0=$COST a0=$RPS b0=$P99
	m0=$(nginx_pss)
	node tests/bench/streams.mjs "$base" "$RD/streams" >"$RD/streams.out" 2>&1 &
	spid=$!
	for _ in $(seq 1 600); do
		grep -q '^open' "$RD/streams.out" && break
		kill -0 "$spid" 2>/dev/null || die "streams: $(cat "$RD/streams.out")"
		sleep 0.1
	done
	opened=$(awk '/^open/ { print $2 }' "$RD/streams.out")
	[ "$opened" = "$((per * 10))" ] || die "streams: opened ${opened:-none}: $(tail -3 "$RD/streams.out")"
	m1=$(nginx_pss)
	likes "with-$r"
	cost1=$COST n1=$N
	kill -TERM "$spid"
	wait "$spid" 2>/dev/null
	ev=$(awk '/^events/ { print $2 }' "$RD/streams.out")
	rps0="$rps0 $(calc "$RPS / $a0")"
	p0="$p0 $(calc "$b0 / $P99")"
	kb=$(calc "($m1 - $m0) / $opened")
	say "$(printf 'round %d: none %.0f req/s p99 %.1f ms; %d streams %.0f req/s p99 %.1f ms; nginx %.1f kB a stream; %d events' \
	    "$r" "$a0" "$b0" "$opened" "$RPS" "$P99" "$kb" "${ev:-0}")"
	say "    none: $cost0"
	say "    with: $cost1"
	rps1="$rps1 $kb"
	p1="$p1 $a0:$RPS:$b0:$P99:${ev:-0}:$n1"
done
mr=$(echo "$rps0" | median)
mp=$(echo "$p0" | median)
mk=$(echo "$rps1" | median)
REPORT=$OUT/live.md
{
	echo "# A like with live-badge streams open (tests/bench/live.sh)"
	echo
	echo "$(date -u +%Y-%m-%d), $(nproc) cores; wrk -t$THREADS -c$CONNS, ${DUR} s a run, median of $ROUNDS rounds."
	echo "$((per * 10)) streams: $per of the liked author's (each like moves its badges), $per of each of 9 other users."
	echo
	echo "| round | like, no stream (req/s, p99 ms) | like, $((per * 10)) streams (req/s, p99 ms) | events received |"
	echo "| --- | --- | --- | --- |"
	k=0
	for x in $p1; do
		k=$((k + 1))
		IFS=: read -r a b c d e _ <<<"$x"
		printf '| %d | %.0f, %.1f | %.0f, %.1f | %d |\n' "$k" "$a" "$c" "$b" "$d" "$e"
	done
	echo
	echo "- like with streams against none: **$(printf '%.2f' "$mr")x** req/s, p99 $(printf '%.2f' "$mp")x (goal >= 0.8x req/s)"
	echo "- nginx memory per open stream: $(printf '%.1f' "$mk") kB (proportional set size of nginx's processes)"
	echo "- CPU per like, last round, without streams: $cost0"
	echo "- CPU per like, last round, with streams: $cost1"
} >"$REPORT"
cp "$REPORT" tests/bench/latest/live.md
cat "$REPORT"
if awk -v r="$mr" 'BEGIN { exit !(r < 0.8) }'; then
	say "GOAL MISSED: a like with streams at ${mr}x of one with none (goal 0.8x)"
	[ "${BENCH_STRICT:-0}" = 1 ] && exit 1
fi
exit 0
