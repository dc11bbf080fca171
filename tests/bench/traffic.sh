#!/bin/bash
# traffic.sh -- a site's traffic against the 1 KB hello, in the same run
# ("make bench"; "make bench-traffic" alone).
#
# A stack under bin/tally-run with BENCH_USERS users (300, then a second
# stack with BENCH_BIG_USERS, 10,000): each follows 20 others and wrote 3
# posts, and liked 5; every user is signed in (tests/bench/sessions.mjs).
# From CONNS (64) connections, every request is a random user's, with that
# user's own cookie and csrf token (tests/bench/traffic.lua):
#   mix      40 % /feed, 20 % /u/<someone>, 15 % /posts/<id>, 15 %
#            /badges.json, 10 % like or unlike of a random post
#   posts    the mix, and 2 requests in 1,000 publish a post (PUBLISH in
#            traffic.lua): a site where posts keep arriving, each fanned
#            out to its author's followers (no goal of its own: beside
#            the mix, what posting costs it; run last, so that every
#            other workload's pages are the same as before)
#   feed     /feed, every request another user's ("spread")
#   profile  /u/<someone>, every request another user's ("spread")
#   first    every user's /feed once, the first request of each since
#            signing in: measured first, on a stack nothing has been asked
#            of but the sign-ins (no goal: what a cold visit costs)
#   parts    last, once each: /posts/<id>, /badges.json and like/unlike
#            alone; with the spread feed and profile, the mix's parts,
#            whose weighted CPU a request is reported beside the mix's
# and, labelled as what they are, the kept-page case: one user's /feed and
# one /u/LOGIN asked again and again.
# Each is measured in rounds back to back with the 1 KB hello
# (tests/bench/hello.c) behind a second nginx made from the stack's own
# configuration (stacks.sh: hello_beside), asked with the same cookies by
# the same script; a ratio is the median of the rounds' (p99: hello's over
# the page's, so that for both higher is better).  Beside each: the CPU
# the stack spends per request by process (cpu.sh), and the SQL
# statements, Redis commands and Redis round trips per request, from the
# handlers' own counters (/metrics).  No answer may be other than 2xx/3xx.
#
# Goals (issue 45): the mix and both spreads >= 0.5x hello's req/s with
# p99 >= 0.3x; the 10,000-user figures >= 0.8x the 300-user ones.
#
# Environment: BENCH_DURATION (10 s a run), BENCH_ROUNDS (3), BENCH_CONNS
# (64), BENCH_USERS (300), BENCH_BIG_USERS (10000; 0: no second stack),
# BENCH_HOLD=1 (set the first stack up, print where it is, and wait an
# hour instead of measuring: to profile it by hand), BENCH_ONLY (the workloads to run, e.g. "mix feed"), BENCH_STRICT=1 (exit
# 1 when a goal is missed), BENCH_AB="OLD NEW" (below).  Writes
# build/bench/traffic.md and, what a request of each workload ran by SQL
# statement and Redis command, build/bench/traffic-costs.md; copies both
# to tests/bench/latest/.
#
# BENCH_AB="OLD NEW", each a directory of built programs (a second work
# tree's bin/, say): one build against another on one stack, instead of
# the workloads and their report.  The first stack runs from a copy of
# OLD; for BENCH_AB_PAIRS (5) pairs its BENCH_AB_PROG (tally-social; a
# list, "tally-social tally-notify", swaps each) is
# OLD's, then NEW's: every pool of it is stopped (by PID) and tally-run
# starts it again from the other binary, a run of 5 s warms it (its
# process's kept counts), then one run of BENCH_AB_MODE (mix) is
# measured.  Alternating puts the machine's drift and the site's
# growing data (likes add up) on both alike; a pair's ratio is NEW's
# over OLD's, and the median of the pairs' is printed.  OLD and NEW
# share the stack's /metrics file (metrics.bin): a NEW that changes its
# layout cannot be compared this way.  Nothing is copied to
# tests/bench/latest.
set -u
cd "$(dirname "$0")/../.."
DUR=${BENCH_DURATION:-10}
ROUNDS=${BENCH_ROUNDS:-3}
CONNS=${BENCH_CONNS:-64}
USERS=${BENCH_USERS:-300}
BIG=${BENCH_BIG_USERS:-10000}
THREADS=2
OUT=build/bench
mkdir -p "$OUT" tests/bench/latest

NAME=traffic
# shellcheck source=tests/bench/stacks.sh
. tests/bench/stacks.sh
stacks_init wrk curl sqlite3 node
cc -O2 -Wall -Wextra -Werror -o "$OUT/hello" tests/bench/hello.c -lfcgi ||
    die "hello"

# prepare NAME USERS: a RUN_DIR with USERS users, their follows, posts and
# likes, counters recounted; $RD/NAME/logins lists the users' logins.
prepare() {
	local name=$1 n=$2 dir=$RD/$1 now
	mkdir -p "$dir"
	now=$(($(date +%s) * 1000))
	RUN_DIR=$dir TALLY_PWHASH=min bin/tallyctl seed --users "$n" --posts 0 \
	    --follows 0 --likes 0 --comments 0 --seed 45 >"$dir/seed.log" 2>&1 ||
	    die "seed: $(tail -3 "$dir/seed.log")"
	# users in id order 1..n (the admin is not among them); user i
	# follows 20 others spread over everyone, writes 3 posts (bodies of
	# a post's usual length, times over the last two days, in id order)
	# and likes 5 posts
	sqlite3 -cmd '.timeout 10000' "$dir/tally.db" "BEGIN;
CREATE TEMP TABLE u AS SELECT row_number() OVER (ORDER BY id) AS i, id
    FROM users WHERE login NOT IN ('admin');
CREATE TEMP TABLE k(k INTEGER);
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 20)
INSERT INTO k SELECT x FROM n;
INSERT INTO follows(follower_id, followee_id, created_at)
SELECT a.id, b.id, $now - 86400000 * 3 + a.i * 20 + k
FROM u a JOIN k JOIN u b ON b.i = (a.i * 7 + k * k * 131 + k * 17) % $n + 1
WHERE a.id != b.id ON CONFLICT DO NOTHING;
INSERT INTO posts(user_id, topic_id, body, status, created_at,
    published_at, updated_at)
SELECT id, 1 + (i * 3 + k) % (SELECT COUNT(*) FROM topics),
    'Post ' || k || ' of user ' || i || ': the counts on this page are '
    || 'exact, the feed is fast, and nothing is lost when a process dies '
    || 'halfway through a write. #bench https://example.org/' || i,
    1, t, t, t
FROM (SELECT u.id, u.i, k.k, $now - 172800000 + (u.i + (k.k - 1) * $n) * 172800000
    / (3 * $n + 1) AS t FROM u JOIN k WHERE k.k <= 3 ORDER BY t);
INSERT INTO likes(post_id, user_id, created_at)
SELECT p.id, u.id, $now - 1000 FROM u JOIN k
JOIN posts p ON p.id = (SELECT min(id) FROM posts)
    + (u.i * 11 + k.k * 37) % (SELECT COUNT(*) FROM posts)
WHERE k.k <= 5 AND p.user_id != u.id ON CONFLICT DO NOTHING;
COMMIT;" || die "SQL of $name"
	sqlite3 "$dir/tally.db" "SELECT login FROM users WHERE login != 'admin'
	    ORDER BY id" >"$dir/logins"
	sqlite3 "$dir/tally.db" "SELECT id FROM posts ORDER BY id" >"$dir/posts"
	# the counters of the rows above: a tiny seed recounts every family
	RUN_DIR=$dir TALLY_PWHASH=min bin/tallyctl seed --users 2 --posts 0 \
	    --follows 0 --likes 0 --comments 0 --seed 46 >>"$dir/seed.log" 2>&1 ||
	    die "recount: $(tail -3 "$dir/seed.log")"
}

# costs NAME: the statements run so far by the table's name (summed over
# handlers, /metrics) and the commands Redis ran by name (INFO
# commandstats: a script's own commands counted, EVALSHA too), "what n"
# a line
costs() {
	local b
	b=$(eval echo "\$BASE_$1")
	curl -fs "$b/metrics" | awk -v names=shared/store/sql.h '
	    BEGIN { while ((getline l < names) > 0) {
		if (l ~ /^enum stmt \{/) { f = 1; continue }
		if (f && l ~ /STMT__MAX/) f = 0
		if (f && l ~ /^\tSTMT_/) { gsub(/[\t,]/, "", l); nm[k++] = l } } }
	    /^tally_sqlite_statement_runs_total\{/ {
		match($1, /stmt="[0-9]+"/); i = substr($1, RSTART + 6, RLENGTH - 7)
		s[i in nm ? nm[i] : "STMT#" i] += $2 }
	    END { for (x in s) print x, s[x] }'
	redis-cli -s "$RD/$1/redis.sock" info commandstats | tr -d '\r' |
	    awk -F'[:=,]' '/^cmdstat_/ { print substr($1, 9), $3 }'
}

# costs_diff BEFORE AFTER REQS: what a request ran, most first
costs_diff() {
	awk -v n="$3" 'FNR == NR { a[$1] = $2; next }
	    $2 - a[$1] > 0 { printf "%s %.3f\n", $1, ($2 - a[$1]) / n }' \
	    "$1" "$2" | sort -k2,2gr -k1,1
}

# one NAME BASE TAG MODE [URL]: a wrk run; sets RPS P99 REQS and the
# per-request cost line COST (CPU by process, statements, round trips);
# what its requests ran, by statement and Redis command, is in
# $OUT/traffic-TAG.costs
one() {
	local name=$1 base=$2 tag=$3 mode=$4 url=${5:-} f st0 tr0 cm0 c0 c1 pid
	local publish=0
	[ "$mode" = posts ] && { mode=mix; publish=2; }
	f=$OUT/traffic-$tag.txt
	pid=$(eval echo "\$PID_$name \$PIDH_$name \$PIDHN_$name")
	ROOTS=$pid
	st0=$(metric tally_sqlite_statements_total "$(eval echo "\$BASE_$name")")
	tr0=$(metric tally_redis_round_trips_total "$(eval echo "\$BASE_$name")")
	cm0=$(metric tally_redis_commands_total "$(eval echo "\$BASE_$name")")
	costs "$name" >"$f.c0"
	c0=$(tree_cpu)
	if [ -n "$url" ]; then
		timeout $((DUR + 30)) wrk --latency -d"${DUR}s" --timeout 10s \
		    -t"$THREADS" -c"$CONNS" -H "Cookie: sid=$SID1" "$base$url" \
		    >"$f" 2>&1 || die "wrk: $(tail -3 "$f")"
	else
		SESSIONS=$RD/$name/sessions POSTS=$RD/$name/posts MODE=$mode THREADS=$THREADS \
		    PUBLISH=$publish SEED=$RANDOM timeout $((DUR + 30)) wrk --latency \
		    -d"${DUR}s" --timeout 10s -t"$THREADS" -c"$CONNS" \
		    -s tests/bench/traffic.lua "$base" >"$f" 2>&1 ||
		    die "wrk: $(tail -3 "$f")"
	fi
	c1=$(tree_cpu)
	costs "$name" >"$f.c1"
	! grep -q 'Non-2xx or 3xx\|Socket errors' "$f" ||
	    die "wrk $tag: answers other than 2xx/3xx: $(grep 'Non-2xx\|Socket' "$f")"
	RPS=$(awk '/^Requests\/sec:/ { print $2 }' "$f")
	# a sweep's threads stop when done, wrk's clock does not: its rate
	# from the connections and the mean latency (Little's law)
	[ "$mode" = first ] && RPS=$(awk -v c="$CONNS" '$1 == "Latency" && $2 ~ /^[0-9]/ {
		v = $2; u = v; sub(/^[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
		m = (u == "us") ? 0.001 : (u == "ms") ? 1 : (u == "s") ? 1000 : 1;
		printf "%.1f", c * 1000 / (v * m) }' "$f")
	REQS=$(awk '/requests in/ { print $1 }' "$f")
	P99=$(awk '$1 == "99%" { v = $2; u = v; sub(/^[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
		m = (u == "us") ? 0.001 : (u == "ms") ? 1 : (u == "s") ? 1000 : 1; printf "%.4f", v * m }' "$f")
	[ -n "$RPS" ] && [ -n "$P99" ] && [ -n "$REQS" ] || die "wrk: no result in $f"
	costs_diff "$f.c0" "$f.c1" "$REQS" >"$OUT/traffic-$tag.costs"
	rm -f "$f.c0" "$f.c1"
	local st tr cm b
	b=$(eval echo "\$BASE_$name")
	st=$(calc "($(metric tally_sqlite_statements_total "$b") - $st0) / $REQS")
	tr=$(calc "($(metric tally_redis_round_trips_total "$b") - $tr0) / $REQS")
	cm=$(calc "($(metric tally_redis_commands_total "$b") - $cm0) / $REQS")
	COST="$(cpu_diff "$c0" "$c1" | per_req "$REQS"); $(printf '%.2f' "$st") SQL statements, $(printf '%.2f' "$tr") Redis round trips ($(printf '%.1f' "$cm") commands) a request"
	# the stack's whole CPU a request, every process of it
	TOTAL_US=$(cpu_diff "$c0" "$c1" | tr ' ' '\n' | awk -F: -v n="$REQS" \
	    -v us="$TICK_US" 'NF == 2 { s += $2 } END { printf "%.0f", s * us / n }')
}

# The mix against its parts: post, badges and like alone (one run each,
# after every workload of the stack, so that none changes their pages),
# feed and profile from their spread runs (the median round's), weighted
# as the mix weighs them; a mix that costs more than its parts pays for
# reads beside writes (docs/BENCHMARKS.md).  Into $OUT/traffic-parts.md.
parts() {		# parts NAME USERS
	local name=$1 n=$2 bh w weighted
	[ -n "${US[$name-mix]:-}" ] && [ -n "${US[$name-feed]:-}" ] &&
	    [ -n "${US[$name-profile]:-}" ] || return 0
	bh=$(eval echo "\$BASEH_$name")
	for w in post badges like; do
		one "$name" "$bh" "$name-part-$w" "$w"
		US[$name-$w]=$TOTAL_US
		say "$(printf '%6d users %-10s alone: %8.0f req/s, %s µs a request' \
		    "$n" "$w" "$RPS" "$TOTAL_US")"
	done
	weighted=$(calc "0.4 * ${US[$name-feed]} + 0.2 * ${US[$name-profile]} + 0.15 * ${US[$name-post]} + 0.15 * ${US[$name-badges]} + 0.1 * ${US[$name-like]}")
	printf -- '- %d users: the mix %s µs of the stack a request; its parts alone, weighted, %.0f (feed %s, profile %s, post %s, badges %s, like/unlike %s): %.2fx\n' \
	    "$n" "${US[$name-mix]}" "$weighted" "${US[$name-feed]}" \
	    "${US[$name-profile]}" "${US[$name-post]}" "${US[$name-badges]}" \
	    "${US[$name-like]}" "$(calc "${US[$name-mix]} / $weighted")" \
	    >>"$OUT/traffic-parts.md"
}

# BENCH_AB: OLD's or NEW's program in the stack's place; its pools are
# stopped and wait_pools waits for tally-run to start as many again
AB_PROG=${BENCH_AB_PROG:-tally-social}
BENCH_AB=${BENCH_AB:-}
AB_OLD=${BENCH_AB%% *}
AB_NEW=${BENCH_AB#* }
if [ -n "${BENCH_AB:-}" ]; then
	for p in $AB_PROG; do
		[ -x "$AB_OLD/$p" ] && [ -x "$AB_NEW/$p" ] ||
		    die "BENCH_AB: two directories of built programs, each with $p"
	done
	[ -x "$AB_OLD/tally-run" ] || die "BENCH_AB: no tally-run in $AB_OLD"
fi
ab_swap() {		# ab_swap NAME FROM_DIR: each program of BENCH_AB_PROG
	local p
	for p in $AB_PROG; do ab_swap_one "$1" "$2" "$p"; done
}
ab_swap_one() {		# ab_swap_one NAME FROM_DIR PROGRAM
	local run old n p k prog=$3
	run=$(eval echo "\$PID_$1")
	cp "$2/$prog" "$STACK_BIN/$prog.new" &&
	    mv "$STACK_BIN/$prog.new" "$STACK_BIN/$prog" ||
	    die "could not put $2/$prog in place"
	old=$(pgrep -P "$run" -x "$prog" | tr '\n' ' ')
	n=$(echo "$old" | wc -w)
	[ "$n" -gt 0 ] || die "no $prog under tally-run ($run)"
	for p in $old; do kill -TERM "$p" 2>/dev/null; done
	for k in $(seq 1 100); do
		sleep 0.2
		[ "$(pgrep -P "$run" -x "$prog" | grep -cvxF -f <(echo "$old" | tr ' ' '\n' | grep .))" -ge "$n" ] &&
		    return 0
	done
	die "$prog was not started again (tally-run $run)"
}
ab_pairs() {		# ab_pairs NAME: the pairs, their ratios, the median
	local name=$1 base i v dur=$DUR ro rn co cn
	local mode=${BENCH_AB_MODE:-mix} ratios="" cpus=""
	base=$(eval echo "\$BASE_$name")
	for i in $(seq 1 "${BENCH_AB_PAIRS:-5}"); do
		for v in old new; do
			if [ "$v" = old ]; then ab_swap "$name" "$AB_OLD"
			else ab_swap "$name" "$AB_NEW"; fi
			wait_url "$base/healthz" 100 || die "$name after the swap"
			DUR=5; one "$name" "$base" "$name-ab-warm" "$mode"; DUR=$dur
			one "$name" "$base" "$name-ab-$v-$i" "$mode"
			say "$(printf 'pair %d %-3s %8.0f req/s p99 %6.1f ms, stack %s µs a request: %s' \
			    "$i" "$v" "$RPS" "$P99" "$TOTAL_US" "$COST")"
			if [ "$v" = old ]; then ro=$RPS; co=$TOTAL_US
			else rn=$RPS; cn=$TOTAL_US; fi
		done
		ratios="$ratios $(calc "$rn / $ro")"
		cpus="$cpus $(calc "$cn / $co")"
	done
	say "$AB_PROG, $mode: NEW/OLD req/s by pair:$ratios; median $(echo "$ratios" | median)"
	say "$AB_PROG, $mode: NEW/OLD stack CPU a request by pair:$cpus; median $(echo "$cpus" | median)"
	ab_swap "$name" "$AB_OLD"
}

REPORT=$OUT/traffic.md
{
	echo "# A site's traffic against the 1 KB hello (tests/bench/traffic.sh)"
	echo
	echo "$(date -u +%Y-%m-%d), $(nproc) cores; wrk -t$THREADS -c$CONNS, ${DUR} s a run, median of $ROUNDS rounds."
	echo "Every request is a random signed-in user's own; ratios: req/s over hello's, p99 hello's over ours."
	echo
	echo "| users | workload | req/s | ratio | p99 ms | p99 ratio | per request (median round) |"
	echo "| --- | --- | --- | --- | --- | --- | --- |"
} >"$REPORT"
# what a request of each workload's median round ran: statements by name
# (the handlers' /metrics) and Redis's commands by name (INFO
# commandstats: a script's own commands counted beside its EVALSHA, and
# the worker's background work divided among the requests too)
DETAIL=$OUT/traffic-costs.md
{
	echo "# What a request ran (tests/bench/traffic.sh), $(date -u +%Y-%m-%d)"
	echo
	echo "Per request, the median round's: SQL statements by the table's name"
	echo "(store/sql.h), then Redis commands by name as Redis counts them (the"
	echo "commands of a script beside its EVALSHA; the worker's background work,"
	echo "about 2,000 EXISTS and 200 HLEN a second, divided among the requests)."
} >"$DETAIL"

MISSED=0
declare -A RATIO US
HELLO=()
rm -f "$OUT/traffic-parts.md" "$OUT/traffic-hello.md"
run_stack() {		# run_stack NAME USERS
	local name=$1 n=$2 w base bh r hr hp k
	say "preparing $n users"
	prepare "$name" "$n"
	if [ -n "${BENCH_AB:-}" ]; then	# from a copy: its programs swapped
		STACK_BIN=$RD/ab-bin
		mkdir -p "$STACK_BIN"
		cp "$AB_OLD"/* "$STACK_BIN"/ || die "copy of $AB_OLD"
		start "$name" TALLY_SHARE="$PWD"
	else
		start "$name"
	fi
	hello_beside "$name"
	base=$(eval echo "\$BASE_$name")
	bh=$(eval echo "\$BASEH_$name")
	say "signing in $n users"
	node tests/bench/sessions.mjs "$base" "$RD/$name/logins" \
	    "$RD/$name/sessions" 32 || die "sessions of $name"
	SID1=$(awk 'NR == 1 { print $2 }' "$RD/$name/sessions")
	LOGIN1=$(awk 'NR == 1 { print $1 }' "$RD/$name/sessions")
	# every home timeline in Redis, as on a site that has been up
	xargs -n 500 env RUN_DIR="$RD/$name" bin/tallyctl warm <"$RD/$name/logins" \
	    >"$RD/$name/warm.log" 2>&1 || die "warm: $(tail -3 "$RD/$name/warm.log")"
	if [ -n "${BENCH_AB:-}" ]; then
		ab_pairs "$name"
		return
	fi
	if [ "${BENCH_HOLD:-0}" = 1 ]; then	# to look at it by hand
		say "holding: $base (hello: $bh), RUN_DIR $RD/$name; stop with kill $$"
		sleep 3600
	fi
	for w in ${BENCH_ONLY:-first mix feed profile onefeed oneprofile posts}; do
		local rps="" p99="" costs=() rounds=$ROUNDS
		[ "$w" = first ] && rounds=1	# only the first is first
		for r in $(seq 1 "$rounds"); do
			one "$name" "$bh" "$name-hello-$w-$r" hello
			hr=$RPS; hp=$P99
			HELLO+=("$TOTAL_US ${COST%%;*}")
			case $w in
			onefeed) one "$name" "$bh" "$name-$w-$r" - /feed ;;
			oneprofile) one "$name" "$bh" "$name-$w-$r" - "/u/$LOGIN1" ;;
			*) one "$name" "$bh" "$name-$w-$r" "$w" ;;
			esac
			rps="$rps $(calc "$RPS / $hr")"
			p99="$p99 $(calc "$hp / $P99")"
			costs+=("$(calc "$RPS / $hr") $RPS $P99 $name-$w-$r $TOTAL_US|$COST")
			say "$(printf '%6d users %-10s round %d: %8.0f req/s p99 %6.1f ms (hello %8.0f, p99 %5.1f ms)' \
			    "$n" "$w" "$r" "$RPS" "$P99" "$hr" "$hp")"
			say "    $COST"
		done
		local mr mp med
		mr=$(echo "$rps" | median)
		mp=$(echo "$p99" | median)
		RATIO[$name-$w]=$mr
		med=$(printf '%s\n' "${costs[@]}" | sort -g | sed -n "$(( (rounds + 1) / 2 ))p")
		k=${med%%|*}
		US[$name-$w]=$(echo "$k" | awk '{ print $5 }')
		local label=$w
		case $w in
		mix) label="mix (40 % feed, 20 % profile, 15 % post, 15 % badges, 10 % like/unlike)" ;;
		posts) label="mix with posts (the mix; 2 requests in 1,000 publish a post, no goal)" ;;
		feed) label="/feed spread (every request another user's)" ;;
		first) label="first visits: every user's /feed once, nothing kept yet (no goal)" ;;
		profile) label="/u/LOGIN spread (every request another user's)" ;;
		onefeed) label="kept page: one user's /feed again and again" ;;
		oneprofile) label="kept page: one /u/LOGIN again and again" ;;
		esac
		printf '| %d | %s | %.0f | **%.2fx** | %.1f | %.2fx | %s |\n' "$n" \
		    "$label" "$(echo "$k" | awk '{ print $2 }')" "$mr" \
		    "$(echo "$k" | awk '{ print $3 }')" "$mp" "${med#*|}" >>"$REPORT"
		{
			echo
			echo "$n users, $w ($(echo "$k" | awk '{ print $4 }')): $(awk '
			    { printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }' \
			    "$OUT/traffic-$(echo "$k" | awk '{ print $4 }').costs")"
		} >>"$DETAIL"
		case $w in
		mix|feed|profile)
			if awk -v r="$mr" -v p="$mp" 'BEGIN { exit !(r < 0.5 || p < 0.3) }'; then
				say "GOAL MISSED: $w at $n users: ${mr}x req/s, p99 ${mp}x (goal 0.5x, 0.3x)"
				MISSED=1
			fi ;;
		esac
	done
	# what the hello's own stack spent a request (its median run of
	# all beside this stack): the yardstick's own cost, beside the rows'
	printf -- '- beside the %d-user stack (the median of %d runs): %s\n' \
	    "$n" "${#HELLO[@]}" "$(printf '%s\n' "${HELLO[@]}" | sort -n |
	    sed -n "$(( (${#HELLO[@]} + 1) / 2 ))p" | cut -d' ' -f2-)" \
	    >>"$OUT/traffic-hello.md"
	HELLO=()
	parts "$name" "$n"
}

run_stack small "$USERS"
[ -n "${BENCH_AB:-}" ] && exit 0	# no report: the pairs were printed
if [ "$BIG" -gt 0 ]; then
	run_stack big "$BIG"
	{
		echo
		echo "$BIG users against $USERS (goal >= 0.8x):"
		for w in mix feed profile posts; do
			[ -n "${RATIO[big-$w]:-}" ] && [ -n "${RATIO[small-$w]:-}" ] || continue
			q=$(calc "${RATIO[big-$w]} / ${RATIO[small-$w]}")
			echo "- $w: $(printf '%.2f' "$q")x"
			[ "$w" = posts ] && continue	# no goal: beside the mix
			if awk -v q="$q" 'BEGIN { exit !(q < 0.8) }'; then
				say "GOAL MISSED: $w at $BIG users is ${q}x the $USERS-user ratio" >&2
				MISSED=1
			fi
		done
	} >>"$REPORT"
fi
if [ -s "$OUT/traffic-hello.md" ]; then
	{
		echo
		echo "The 1 KB hello's own stack a request (nginx and the hello; wrk's not counted):"
		cat "$OUT/traffic-hello.md"
	} >>"$REPORT"
fi
if [ -s "$OUT/traffic-parts.md" ]; then
	{
		echo
		echo "The mix against its parts, each alone (post, badges, like: one run each):"
		cat "$OUT/traffic-parts.md"
	} >>"$REPORT"
fi
cp "$REPORT" tests/bench/latest/traffic.md
cp "$DETAIL" tests/bench/latest/traffic-costs.md
cat "$REPORT"
if [ "$MISSED" = 1 ] && [ "${BENCH_STRICT:-0}" = 1 ]; then
	exit 1
fi
exit 0
