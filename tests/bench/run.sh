#!/bin/bash
# run.sh -- tally's benchmarks ("make bench", after "make all").
#
# Absolute times on a shared 2-core machine are noise, so every number is
# reported as a RATIO to a baseline measured in the same run:
#
#   HTTP    a minimal libfcgi hello world (tests/bench/hello.c, pre-forked
#           like tally's handlers) behind the SAME nginx configuration:
#           the stack runs under bin/tally-run, and a second nginx, started
#           from a copy of the rendered $RUN_DIR/nginx/nginx.conf plus one
#           "location = /__hello", serves both tally and hello; every HTTP
#           measurement goes through that second nginx.
#   likes   POST /posts/ID/like|unlike (real writes) vs hello (GET, and
#           POSTed the same form and cookie): req/s, p99, and the CPU the
#           stack spends per request, by process
#   profile GET /u/LOGIN vs hello; a user with 1,000,000 followers vs one
#           with 10 (cost per request must not grow with followers)
#   fan-out POST /posts latency: author with 5,000 warmed followers (1000
#           in the request, the rest deferred to the worker) vs 1,000 vs 10
#   coalescing 100,000 increments over 100 counters through tally's own
#           cstore_apply (tests/bench/cload.c) while the worker flushes every
#           second, then "tallyctl flush": counter rows written to SQLite
#   flush   "tallyctl flush" of 200,000 dirty counters (own Redis + SQLite,
#           no worker) vs raw SQLite batched UPSERTs into an identical
#           counters table (tests/bench/upsert.c); redis-benchmark for context
#
# Throughput ratios move with the rest of the machine's load; the stack's
# own CPU per request (utime + stime of its processes) moves much less and
# is reported next to them.  Rounds run hello and tally back to back, and
# a ratio is the median of the rounds' ratios.
#
# Prints a table and writes it to build/bench/results.md.  Every load run
# is bounded (wrk -d, timeout); everything listens on 127.0.0.1 or in a
# fresh RUN_DIR, and is stopped by its own PID.
#
# Environment: BENCH_DURATION (seconds per wrk run, 5), BENCH_ROUNDS
# (rounds of the hello/like/profile runs, medians reported, 3),
# BENCH_CONNS (16), BENCH_USERS (1000000), BENCH_POST_DELAY_MS (pause between
# fan-out posts, 40), BENCH_KEEP=1 (keep RUN_DIR),
# BENCH_STRICT=1 (exit 1 when a goal is missed), LDLIBS (tally's libraries,
# passed by the Makefile).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
OUT=$ROOT/build/bench
DUR=${BENCH_DURATION:-5}
ROUNDS=${BENCH_ROUNDS:-3}
CONNS=${BENCH_CONNS:-16}
THREADS=2
NUSERS=${BENCH_USERS:-1000000}
PROCS=2			# processes per handler pool: tally-run's default
LDLIBS=${LDLIBS:--lfcgi -lhiredis -lsqlite3 -lsodium -ljansson -lm}
CCF="-O2 -Wall -Wextra -Werror"
T_START=$(date +%s)

mkdir -p "$OUT"
rm -rf "$OUT"/wrk-*.txt "$OUT"/results.md "$OUT"/logs

say() { printf 'bench: %s\n' "$*"; }
die() { printf 'bench: FAILED: %s\n' "$*" >&2; exit 1; }

for p in wrk redis-benchmark redis-server redis-cli sqlite3 nginx curl; do
	command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] ||
	    die "$p not found (scripts/deps.sh bench installs it)"
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x bin/tally-run ] && [ -x bin/tallyctl ] && [ -f build/libtally.a ] ||
    die "build tally first (make all)"

# ---- helpers: built here, warnings are errors -----------------------------
say "building helpers"
cc $CCF -o "$OUT/hello" tests/bench/hello.c -lfcgi
cc $CCF -o "$OUT/freeport" tests/bench/freeport.c
cc $CCF -o "$OUT/upsert" tests/bench/upsert.c -lsqlite3
# cload links tally itself: the increments go through shared/cstore.c.
# shellcheck disable=SC2086
cc $CCF -D_GNU_SOURCE -Ishared -o "$OUT/cload" tests/bench/cload.c \
    build/libtally.a $LDLIBS

# ---- processes we start, stopped by PID on any exit ------------------------
RD=$(mktemp -d /tmp/tally-bench.XXXXXX)
chmod 0711 "$RD"
PIDS=()			# "pid:signal", stopped last-started first
SETPRIV=()
[ -x /usr/bin/setpriv ] && SETPRIV=(/usr/bin/setpriv --pdeathsig TERM)

stop_pid() {		# pid signal: signal, wait up to 15 s, then KILL
	local pid=$1 sig=$2 i
	kill -0 "$pid" 2>/dev/null || return 0
	kill -"$sig" "$pid" 2>/dev/null || true
	for i in $(seq 150); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null || true
}

stop_all() {
	local i
	for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
		stop_pid "${PIDS[i]%%:*}" "${PIDS[i]##*:}"
	done
	PIDS=()
}

cleanup() {
	local rc=$?
	stop_all
	if [ $rc -ne 0 ]; then
		rm -rf "$OUT/logs"
		mkdir -p "$OUT/logs"
		cp "$RD"/logs/*.log "$RD"/nginx2/error.log "$RD"/*.out \
		    "$OUT/logs/" 2>/dev/null || true
		say "logs in build/bench/logs"
	fi
	if [ "${BENCH_KEEP:-0}" = 1 ]; then
		say "RUN_DIR kept: $RD"
	else
		rm -rf "$RD"	# 1M users: a few hundred MB
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start() {		# name signal command...: background, log in $RD/name.out
	local name=$1 sig=$2
	shift 2
	"${SETPRIV[@]}" "$@" >"$RD/$name.out" 2>&1 &
	PIDS+=("$!:$sig")
	LAST_PID=$!
}

wait_http() {		# url seconds: until it answers 200
	local i
	for i in $(seq $(($2 * 10))); do
		curl -fs -o /dev/null --max-time 2 "$1" && return 0
		sleep 0.1
	done
	return 1
}

# awk arithmetic: calc 'expression'
calc() { awk "BEGIN { printf \"%.6g\", $1 }"; }
fmt() { awk -v v="$1" -v d="${2:-2}" 'BEGIN { if (v == "") print "-"; else printf "%.*f", d, v }'; }
median() { tr ' ' '\n' | awk NF | sort -g | awk '{ a[NR] = $1 }
	END { if (NR == 0) print ""; else if (NR % 2) print a[(NR + 1) / 2];
	else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# ---- data: 1M users, a star followed by all of them, fan-out authors -----
export RUN_DIR=$RD TALLY_PWHASH=min
PORTS=$("$OUT/freeport" 2)
PORT=$(echo "$PORTS" | sed -n 1p)
PORT2=$(echo "$PORTS" | sed -n 2p)
DB=$RD/tally.db
sq() { sqlite3 -cmd '.timeout 10000' "$DB" "$@"; }

say "seeding $NUSERS users (RUN_DIR $RD)"
T0=$(date +%s.%N)
bin/tallyctl seed --users "$NUSERS" --posts 5000 --follows 20000 \
    --likes 5000 --comments 1000 --seed 7 >"$RD/seed.out" 2>&1 ||
    die "tallyctl seed: $(tail -3 "$RD/seed.out")"
for u in bench star small fan10 fan1k fan5k liked; do
	bin/tallyctl useradd "$u" "Bench $u" password-123 >>"$RD/seed.out" 2>&1 ||
	    die "tallyctl useradd $u"
done
uid() { sq "SELECT id FROM users WHERE login = '$1'"; }
STAR=$(uid star); SMALL=$(uid small); F10=$(uid fan10); F1K=$(uid fan1k)
F5K=$(uid fan5k); LIKED=$(uid liked)
NOW=$(($(date +%s) * 1000))
# Every seeded user follows the star (one INSERT ... SELECT); disjoint
# ranges of seeded users follow the others.  Posts: a full first profile
# page (40) for star and small, 64 to like for "liked".
sq "BEGIN;
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 64)
INSERT INTO posts(user_id, topic_id, body, status, created_at, published_at,
    updated_at, like_count)
SELECT u.id, 1, 'Benchmark post ' || x || ' by ' || u.login, 1,
    $NOW - 100000 + x, $NOW - 100000 + x, $NOW - 100000 + x, 0
FROM n JOIN users u ON u.id IN ($STAR, $SMALL, $LIKED)
WHERE x <= CASE WHEN u.id = $LIKED THEN 64 ELSE 40 END;
INSERT INTO follows(follower_id, followee_id, created_at)
SELECT id, $STAR, $NOW - 200000000 + id FROM users
WHERE id <= $NUSERS AND id != $STAR ON CONFLICT DO NOTHING;
INSERT INTO follows(follower_id, followee_id, created_at)
SELECT id, CASE WHEN id <= 10 THEN $SMALL WHEN id <= 20 THEN $F10
    WHEN id <= 1020 THEN $F1K ELSE $F5K END, $NOW - 100000000 + id
FROM users WHERE id <= 6020 ON CONFLICT DO NOTHING;
COMMIT;" || die "bulk SQL"
# Counters of the bulk rows: a tiny reseed recounts everything.
bin/tallyctl seed --users 2 --posts 0 --follows 0 --likes 0 --comments 0 \
    --seed 424242 >>"$RD/seed.out" 2>&1 || die "recount (tallyctl seed)"
NSTAR=$(sq "SELECT COUNT(*) FROM follows WHERE followee_id = $STAR")
NSMALL=$(sq "SELECT COUNT(*) FROM follows WHERE followee_id = $SMALL")
LIKED_POSTS=$(sq "SELECT group_concat(id) FROM posts WHERE user_id = $LIKED")
T1=$(date +%s.%N)
say "data ready in $(fmt "$(calc "$T1 - $T0")" 1) s: star has $NSTAR followers, small $NSMALL"

# ---- the stack, hello, and the second nginx ------------------------------
say "starting tally-run on 127.0.0.1:$PORT"
start tally-run TERM env PORT="$PORT" RUN_DIR="$RD" DEMO=0 TALLY_PROCS=$PROCS \
    TALLY_ADMIN_PASSWORD=admin-pass-1 TALLY_LOGIN_RATE=60000r/m \
    TALLY_PWHASH=min bin/tally-run
RUN_PID=$LAST_PID
wait_http "http://127.0.0.1:$PORT/healthz" 20 || die "tally-run did not come up"
start hello TERM "$OUT/hello" "$RD/hello.sock" $PROCS
HELLO_PID=$LAST_PID
for i in $(seq 50); do [ -S "$RD/hello.sock" ] && break; sleep 0.1; done

N2=$RD/nginx2
mkdir -p "$N2"
sed -e "s#listen 127.0.0.1:$PORT;#listen 127.0.0.1:$PORT2;#" \
    -e "s#^pid .*#pid $N2/nginx.pid;#" \
    -e "s#\([a-z_]*\)_temp_path [^;]*;#\1_temp_path $N2/\1;#" \
    -e "s#access_log [^;]*;#access_log $N2/access.log;#" \
    -e "\#include $RD/nginx/tally.conf;#a\\
        location = /__hello {\\
            include $RD/nginx/tally-fastcgi.conf;\\
            fastcgi_pass unix:$RD/hello.sock;\\
        }" "$RD/nginx/nginx.conf" >"$N2/nginx.conf"
grep -q "listen 127.0.0.1:$PORT2;" "$N2/nginx.conf" &&
    grep -q "location = /__hello" "$N2/nginx.conf" &&
    grep -q "pid $N2/nginx.pid;" "$N2/nginx.conf" ||
    die "could not derive the second nginx.conf from $RD/nginx/nginx.conf"
"$NGINX" -t -q -p "$N2/" -c "$N2/nginx.conf" -e "$N2/error.log" ||
    die "nginx -t of $N2/nginx.conf"
start nginx2 QUIT "$NGINX" -p "$N2/" -c "$N2/nginx.conf" -e "$N2/error.log" \
    -g 'daemon off;'
NGX2_PID=$LAST_PID
B=http://127.0.0.1:$PORT2
wait_http "$B/__hello" 10 || die "second nginx / hello not answering"
wait_http "$B/healthz" 10 || die "second nginx does not reach tally"

# ---- sessions ----------------------------------------------------------------
login() {		# login -> "SID CSRF" of a fresh session
	local jar=$RD/jar.$1 page=$RD/page.$1 csrf code sid
	rm -f "$jar"
	curl -fs -c "$jar" -b "$jar" -o "$page" "$B/login" || return 1
	csrf=$(grep -o 'name="csrf" value="[^"]*"' "$page" | sed -n '1{s/.*value="//; s/"$//; p}')
	code=$(curl -s -c "$jar" -b "$jar" -o /dev/null -w '%{http_code}' \
	    --data-urlencode "login=$1" --data-urlencode "password=password-123" \
	    --data-urlencode "csrf=$csrf" "$B/login")
	[ "$code" = 303 ] || return 1
	sid=$(awk -F'\t' '$6 == "sid" { print $7 }' "$jar")
	curl -fs -b "$jar" -o "$page" "$B/t/general" || return 1
	csrf=$(grep -o 'name="csrf" value="[^"]*"' "$page" | sed -n '1{s/.*value="//; s/"$//; p}')
	[ -n "$sid" ] && [ -n "$csrf" ] || return 1
	echo "$sid $csrf"
}
read -r SID CSRF <<<"$(login bench)" || die "login bench"
read -r SID10 CSRF10 <<<"$(login fan10)" || die "login fan10"
read -r SID1K CSRF1K <<<"$(login fan1k)" || die "login fan1k"
read -r SID5K CSRF5K <<<"$(login fan5k)" || die "login fan5k"
for v in SID CSRF SID10 CSRF10 SID1K CSRF1K SID5K CSRF5K; do
	[ -n "${!v}" ] || die "login: no $v"
done

# Each scripted request once by hand: a session that did not take would
# answer 303 /login, which wrk counts as a success.
first=${LIKED_POSTS%%,*}
loc=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' -b "sid=$SID" \
    -d "csrf=$CSRF" "$B/posts/$first/like")
case $loc in "303 "*"/posts/$first") ;; *) die "like check: $loc" ;; esac
loc=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' -b "sid=$SID" \
    -d "csrf=$CSRF" "$B/posts/$first/unlike")
case $loc in "303 "*"/posts/$first") ;; *) die "unlike check: $loc" ;; esac
for u in small star; do	# also materialises the profile timelines
	curl -fs -b "sid=$SID" -o "$RD/page.$u" "$B/u/$u" &&
	    grep -q "data-login=\"$u\"" "$RD/page.$u" || die "profile check /u/$u"
done
grep -q "data-counter=\"followers\"[^>]*>$NSTAR</span>" "$RD/page.star" ||
    die "/u/star does not show $NSTAR followers (recount?)"

# ---- warm the followers' homes (deferred fan-out writes only to those) -----
T0=$(date +%s.%N)
bin/tallyctl warm --followers-of fan10 --followers-of fan1k \
    --followers-of fan5k >"$RD/warm.out" 2>&1 || die "tallyctl warm"
T1=$(date +%s.%N)
WARMED=$(grep -o '[0-9]*' "$RD/warm.out" | tail -1)
WARM_RATE=$(calc "$WARMED / ($T1 - $T0)")
say "warmed $WARMED home timelines in $(fmt "$(calc "$T1 - $T0")" 1) s"

# ---- wrk, and the CPU it costs -------------------------------------------
# Throughput on a shared machine moves with everyone else's load; the CPU
# time the stack itself spends per request (utime + stime of every process
# under tally-run -- handlers, worker, Redis -- plus the second nginx and
# hello; wrk excluded) moves much less, so it is reported too.
ROOTS="$RUN_PID $NGX2_PID $HELLO_PID"
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

# wrk_run name [wrk args...]: sets RPS, AVG, P50, P99 (ms), REQS and CPU
# (stack CPU microseconds per request); refuses a run with socket errors
# or non-2xx/3xx answers.
to_ms() { awk '{ v = $1; u = v; sub(/^[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
	m = (u == "us") ? 0.001 : (u == "ms") ? 1 : (u == "s") ? 1000 : (u == "m") ? 60000 : 1;
	printf "%.4f", v * m }'; }
wrk_run() {
	local name=$1 f c0 c1
	shift
	f=$OUT/wrk-$name.txt
	c0=$(tree_cpu)
	timeout $((DUR + 30)) wrk --latency -d"${DUR}s" --timeout 10s "$@" >"$f" 2>&1 ||
	    die "wrk $name: $(tail -3 "$f")"
	c1=$(tree_cpu)
	CPUBY=$(cpu_diff "$c0" "$c1")
	! grep -q 'Non-2xx or 3xx' "$f" || die "wrk $name: $(grep 'Non-2xx' "$f") (see $f)"
	! grep -q 'Socket errors' "$f" || die "wrk $name: $(grep 'Socket errors' "$f") (see $f)"
	RPS=$(awk '/^Requests\/sec:/ { print $2 }' "$f")
	REQS=$(awk '/ requests in / { print $1 }' "$f")
	AVG=$(awk '$1 == "Latency" { print $2; exit }' "$f" | to_ms)
	P50=$(awk '$1 == "50%" { print $2 }' "$f" | to_ms)
	P99=$(awk '$1 == "99%" { print $2 }' "$f" | to_ms)
	[ -n "$RPS" ] && [ -n "$P99" ] && [ "${REQS:-0}" -gt 0 ] ||
	    die "wrk $name: no result in $f"
	CPU=$(calc "(${c1%% *} - ${c0%% *}) * $TICK_US / $REQS")
	say "$(printf '%-14s %8.1f req/s  avg %7.2f ms  p99 %7.2f ms  cpu %6.0f us/req' \
	    "$name" "$RPS" "$AVG" "$P99" "$CPU")"
}
WRK=(-t"$THREADS" -c"$CONNS")
# Warm-up (not recorded): caches, the first checkpoints, Redis' first AOF
# rewrite after the warm-up of the homes.
say "warm-up"
DUR0=$DUR; DUR=2
wrk_run warm-hello "${WRK[@]}" "$B/__hello"
SID=$SID CSRF=$CSRF POSTS=$LIKED_POSTS THREADS=$THREADS \
    wrk_run warm-like "${WRK[@]}" -s tests/bench/like.lua "$B"
wrk_run warm-profile "${WRK[@]}" -H "Cookie: sid=$SID" "$B/u/small"
wrk_run warm-profile "${WRK[@]}" -H "Cookie: sid=$SID" "$B/u/star"
DUR=$DUR0
# Each round runs hello and the tally runs back to back; a ratio is the
# median over the rounds of that round's ratio (the machine's load drifts
# between rounds, less within one).
H_RPS=""; H_P99=""; H_CPU=""; L_RPS=""; L_P99=""; L_CPU=""
S_RPS=""; S_CPU=""; X_RPS=""; X_CPU=""
RL=""; RLP=""; RLC=""; RS=""; RX=""; RXC=""; RXR=""
H_BY=""; H_N=0; L_BY=""; L_N=0; RLH=""; HP_RPS=""; HP_CPU=""; HP_BY=""; HP_N=0
for r in $(seq "$ROUNDS"); do
	say "round $r of $ROUNDS: hello, like/unlike, hello by POST, profile (10 followers)," \
	    "profile ($NSTAR followers)"
	wrk_run "hello-$r" "${WRK[@]}" "$B/__hello"
	h_rps=$RPS; h_p99=$P99; h_cpu=$CPU
	H_BY="$H_BY $CPUBY"; H_N=$((H_N + REQS))
	SID=$SID CSRF=$CSRF POSTS=$LIKED_POSTS THREADS=$THREADS \
	    wrk_run "like-$r" "${WRK[@]}" -s tests/bench/like.lua "$B"
	l_rps=$RPS; l_p99=$P99; l_cpu=$CPU
	L_BY="$L_BY $CPUBY"; L_N=$((L_N + REQS))
	SID=$SID CSRF=$CSRF wrk_run "hellopost-$r" "${WRK[@]}" -s tests/bench/form.lua \
	    "$B/__hello"
	RLH="$RLH $(calc "$l_rps / $RPS")"; HP_RPS="$HP_RPS $RPS"; HP_CPU="$HP_CPU $CPU"
	HP_BY="$HP_BY $CPUBY"; HP_N=$((HP_N + REQS))
	wrk_run "profile10-$r" "${WRK[@]}" -H "Cookie: sid=$SID" "$B/u/small"
	s_rps=$RPS; s_cpu=$CPU
	wrk_run "profile1m-$r" "${WRK[@]}" -H "Cookie: sid=$SID" "$B/u/star"
	x_rps=$RPS; x_cpu=$CPU
	H_RPS="$H_RPS $h_rps"; H_P99="$H_P99 $h_p99"; H_CPU="$H_CPU $h_cpu"
	L_RPS="$L_RPS $l_rps"; L_P99="$L_P99 $l_p99"; L_CPU="$L_CPU $l_cpu"
	S_RPS="$S_RPS $s_rps"; S_CPU="$S_CPU $s_cpu"
	X_RPS="$X_RPS $x_rps"; X_CPU="$X_CPU $x_cpu"
	RL="$RL $(calc "$l_rps / $h_rps")"; RLP="$RLP $(calc "$l_p99 / $h_p99")"
	RLC="$RLC $(calc "$h_cpu / $l_cpu")"; RS="$RS $(calc "$s_rps / $h_rps")"
	RX="$RX $(calc "$x_rps / $h_rps")"; RXC="$RXC $(calc "$x_cpu / $s_cpu")"
	RXR="$RXR $(calc "$s_rps / $x_rps")"
done
for v in H_RPS H_P99 H_CPU L_RPS L_P99 L_CPU S_RPS S_CPU X_RPS X_CPU RL RLP RLC RS RX RXC RXR \
    RLH HP_RPS HP_CPU; do
	printf -v "$v" '%s' "$(median <<<"${!v}")"
done

# ---- fan-out: one connection, paced, then wait for the deferred part ------
rcli() { redis-cli -s "$RD/redis.sock" "$@"; }
pending_jobs() {	# queue + processing, read atomically (a job moves between them)
	rcli EVAL "return redis.call('LLEN', KEYS[1]) + redis.call('LLEN', KEYS[2])" \
	    2 '{jobs}:queue' '{jobs}:processing'
}
drain() {		# seconds until the worker has done every job (max 120)
	local t0 i
	t0=$(date +%s.%N)
	for i in $(seq 1200); do
		[ "$(pending_jobs)" = 0 ] && break
		sleep 0.1
	done
	[ "$(pending_jobs)" = 0 ] || die "fan-out queue not drained in 120 s"
	calc "$(date +%s.%N) - $t0"
}
POST_DELAY=${BENCH_POST_DELAY_MS:-40}
declare -A FO_AVG FO_P99 FO_DRAIN FO_N FO_CPU
for a in 10 1k 5k; do
	case $a in
	10) s=$SID10 c=$CSRF10 ;; 1k) s=$SID1K c=$CSRF1K ;; 5k) s=$SID5K c=$CSRF5K ;;
	esac
	before=$(sq "SELECT COUNT(*) FROM posts WHERE user_id = $(uid "fan$a")")
	c0=$(tree_cpu)
	SID=$s CSRF=$c DELAY_MS=$POST_DELAY wrk_run "post-fan$a" -t1 -c1 \
	    -s tests/bench/post.lua "$B"
	FO_AVG[$a]=$AVG; FO_P99[$a]=$P99
	FO_N[$a]=$(($(sq "SELECT COUNT(*) FROM posts WHERE user_id = $(uid "fan$a")") - before))
	FO_DRAIN[$a]=$(drain)
	# all the work of a post: the request and its deferred part
	c1=$(tree_cpu)
	FO_CPU[$a]=$(calc "(${c1%% *} - ${c0%% *}) * $TICK_US / ${FO_N[$a]}")
	say "fan$a: ${FO_N[$a]} posts, $(fmt "${FO_CPU[$a]}" 0) us CPU a post in all," \
	    "deferred fan-out drained $(fmt "${FO_DRAIN[$a]}" 1) s after the run"
done
# The newest post of fan5k reached its last follower's home.
last=$(sq "SELECT follower_id FROM follows WHERE followee_id = $F5K ORDER BY created_at DESC LIMIT 1")
newest=$(sq "SELECT MAX(id) FROM posts WHERE user_id = $F5K")
top=$(rcli ZREVRANGE "{u$last}:home" 0 0)
[ -n "$top" ] && [ "$((10#$top))" = "$newest" ] ||
    die "fan-out: post $newest is not the newest in the home of follower $last ($top)"

# tallyctl flush, timed; when it fails (its Redis commands time out after
# 500 ms, e.g. while Redis stalls in an AOF rewrite) the failed batch is
# left for recovery, which waits out the batch lock (5 s): then again, at
# most 3 times.  Sets FL_SECS (time in tallyctl only) and FL_FAILS.
orphans() {		# flush batches with no live flusher (lock gone)
	redis-cli -s "$TALLY_REDIS" EVAL "local n = 0
for _, k in ipairs(redis.call('KEYS', '{flush}:batch:*')) do
  local b = string.match(k, '(%d+)$')
  if redis.call('EXISTS', '{flush}:lock:' .. b) == 0 then n = n + 1 end
end
return n" 0
}
flush_timed() {		# output file
	local t0 ok
	FL_SECS=0; FL_FAILS=0
	while :; do
		t0=$(date +%s.%N)
		ok=0
		bin/tallyctl flush >>"$1" 2>&1 && ok=1
		FL_SECS=$(calc "$FL_SECS + $(date +%s.%N) - $t0")
		[ $ok = 1 ] && [ "$(orphans)" = 0 ] && return 0
		FL_FAILS=$((FL_FAILS + 1))
		[ $FL_FAILS -lt 3 ] || die "tallyctl flush: $(grep -v '^flushed' "$1" | tail -2)"
		say "tallyctl flush left a batch behind ($(grep -v '^flushed' "$1" | tail -1)); again in 6 s"
		sleep 6
	done
}

# ---- coalescing: live stack, worker flushing every second ------------------
say "coalescing: 100000 increments over 100 counters"
export TALLY_REDIS=$RD/redis.sock
flush_timed "$RD/flush-before.out"
B0=$(sq "SELECT COALESCE(MAX(id), 0) FROM flushes")
CBASE=2000000000
read -r C_INCS C_KEYS C_SECS <<<"$("$OUT/cload" incr 100 100000 $CBASE 2>>"$RD/cload.out")" ||
    die "cload incr"
flush_timed "$RD/flush-coalesce.out"
C_FAILS=$FL_FAILS
c_sum() { sq "SELECT COALESCE(SUM(value), 0) FROM counters WHERE name = 'post_likes'
    AND CAST(key AS INTEGER) BETWEEN $CBASE AND $CBASE + 99"; }
for i in $(seq 150); do		# a batch the worker failed is recovered in <= 10 s
	[ "$(c_sum)" = 100000 ] && break
	sleep 0.1
done
C_SUM=$(c_sum)
[ "$C_SUM" = 100000 ] || die "coalescing: counters hold $C_SUM, not 100000"
read -r C_ROWS C_BATCHES <<<"$(sq "SELECT COALESCE(SUM(counters), 0) || ' ' ||
    COUNT(*) FROM flushes WHERE id > $B0")"
C_RATE=$(calc "$C_INCS / $C_SECS")
say "coalescing: $C_INCS increments in $(fmt "$C_SECS" 2) s -> $C_ROWS rows in $C_BATCHES flush batches"
unset TALLY_REDIS

stop_all		# the stack is done; the flush benchmark has its own Redis

# ---- flush throughput: own Redis (tally-run's settings) and SQLite ---------
say "flush: 200000 dirty counters"
FB=$RD/fb
mkdir -p "$FB"
start redis-fb TERM redis-server --port 0 --unixsocket "$FB/redis.sock" \
    --unixsocketperm 700 --dir "$FB" --appendonly yes --save ''
for i in $(seq 50); do
	redis-cli -s "$FB/redis.sock" PING >/dev/null 2>&1 && break
	sleep 0.1
done
export TALLY_REDIS=$FB/redis.sock TALLY_DB=$FB/tally.db
read -r F_INCS F_COUNTERS F_LOADS <<<"$("$OUT/cload" dirty 100000 2 1 2>>"$RD/cload.out")" ||
    die "cload dirty"
flush_timed "$RD/flush-fb.out"
F_SECS=$FL_SECS; F_FAILS=$FL_FAILS
# What SQLite holds is the check (a recovered batch is not in the totals
# tallyctl prints).
got=$(sqlite3 -cmd '.timeout 10000' "$TALLY_DB" \
    "SELECT COUNT(*) || ' ' || COALESCE(SUM(value), 0) FROM counters")
[ "$got" = "$F_COUNTERS $F_INCS" ] ||
    die "flush: SQLite holds $got counters/increments, not $F_COUNTERS $F_INCS"
read -r R_ROWS R_SECS <<<"$("$OUT/upsert" "$FB/raw.db" 100000 2)" || die "upsert"
R_BENCH=$(timeout 60 redis-benchmark -s "$FB/redis.sock" -t set -n 100000 -q 2>&1 |
    tr '\r' '\n' | awk '/requests per second/ { v = $2 } END { print v }')
stop_all
unset TALLY_REDIS TALLY_DB

# ---- the table ----------------------------------------------------------------
ROWS=()
MISSED=0
row() {		# measurement value baseline ratio goal verdict
	ROWS+=("| $1 | $2 | $3 | $4 | $5 | $6 |")
	[ "$6" != miss ] || MISSED=$((MISSED + 1))
}
verdict() { awk -v v="$1" -v op="$2" -v g="$3" 'BEGIN {
	ok = (op == ">=") ? v >= g : v <= g; print ok ? "pass" : "miss" }'; }

r=$RL
row "POST /posts/ID/like+unlike, req/s (-t$THREADS -c$CONNS)" "$(fmt "$L_RPS" 0)" \
    "$(fmt "$H_RPS" 0) (hello)" "$(fmt "$r" 2)x" "≥ 0.30x" "$(verdict "$r" '>=' 0.3)"
r=$RLP
row "POST like+unlike, p99 latency" "$(fmt "$L_P99" 1) ms" "$(fmt "$H_P99" 1) ms (hello)" \
    "$(fmt "$r" 1)x" "report" "-"
r=$RLC
row "POST like+unlike, stack CPU per request (ratio: hello/like)" "$(fmt "$L_CPU" 0) µs" \
    "$(fmt "$H_CPU" 0) µs (hello)" "$(fmt "$r" 2)x" "report" "-"
row "POST like+unlike, stack CPU per request by process (all rounds)" \
    "$(per_req "$L_N" <<<"$L_BY")" "$(per_req "$H_N" <<<"$H_BY") (hello)" "-" "report" "-"
r=$RLH
row "POST like+unlike vs hello POSTed the same form and cookie, req/s" "$(fmt "$L_RPS" 0)" \
    "$(fmt "$HP_RPS" 0) (hello, POST)" "$(fmt "$r" 2)x" "report" "-"
row "hello POSTed the same form, stack CPU per request by process" \
    "$(per_req "$HP_N" <<<"$HP_BY")" "-" "-" "report" "-"
r=$RS
row "GET /u/LOGIN ($NSMALL followers), req/s" "$(fmt "$S_RPS" 0)" "$(fmt "$H_RPS" 0) (hello)" \
    "$(fmt "$r" 2)x" "report" "-"
r=$RX
row "GET /u/LOGIN ($NSTAR followers), req/s" "$(fmt "$X_RPS" 0)" "$(fmt "$H_RPS" 0) (hello)" \
    "$(fmt "$r" 2)x" "report" "-"
r=$RXC
row "profile cost: stack CPU per request, $NSTAR vs $NSMALL followers" "$(fmt "$X_CPU" 0) µs" \
    "$(fmt "$S_CPU" 0) µs" "$(fmt "$r" 2)x" "≤ 1.2x" "$(verdict "$r" '<=' 1.2)"
r=$RXR
row "profile cost: 1 / req/s, $NSTAR vs $NSMALL followers" "$(fmt "$(calc "1000 / $X_RPS")" 3) ms" \
    "$(fmt "$(calc "1000 / $S_RPS")" 3) ms" "$(fmt "$r" 2)x" "report (≤ 1.2x)" "-"
r=$(calc "${FO_AVG[5k]} / ${FO_AVG[10]}")
row "POST /posts mean latency, 5000 vs 10 warmed followers" "$(fmt "${FO_AVG[5k]}" 2) ms" \
    "$(fmt "${FO_AVG[10]}" 2) ms" "$(fmt "$r" 1)x" "report" "-"
r=$(calc "${FO_P99[5k]} / ${FO_P99[10]}")
row "POST /posts p99 latency, 5000 vs 10 followers" "$(fmt "${FO_P99[5k]}" 2) ms" \
    "$(fmt "${FO_P99[10]}" 2) ms" "$(fmt "$r" 1)x" "report" "-"
r=$(calc "${FO_AVG[5k]} / ${FO_AVG[1k]}")
row "POST /posts mean latency, 5000 vs 1000 followers (1000 in the request)" \
    "$(fmt "${FO_AVG[5k]}" 2) ms" "$(fmt "${FO_AVG[1k]}" 2) ms" "$(fmt "$r" 2)x" "report" "-"
r=$(calc "${FO_CPU[5k]} / ${FO_CPU[10]}")
row "POST /posts stack CPU per post incl. deferred fan-out, 5000 vs 10" \
    "$(fmt "$(calc "${FO_CPU[5k]} / 1000")" 1) ms" "$(fmt "$(calc "${FO_CPU[10]} / 1000")" 2) ms" \
    "$(fmt "$r" 0)x" "report" "-"
row "deferred fan-out (${FO_N[5k]} posts x 4000 followers) still queued when the run ended" \
    "drained in $(fmt "${FO_DRAIN[5k]}" 1) s" "-" "-" "report" "-"
r=$(calc "$C_ROWS / $C_INCS")
C_NOTE=""
[ "$C_FAILS" = 0 ] || C_NOTE=" ($C_FAILS failed tallyctl flush: Redis timeout)"
row "coalescing: counter rows written for $C_INCS increments over 100 counters$C_NOTE" \
    "$C_ROWS rows ($C_BATCHES batches, load $(fmt "$C_SECS" 1) s)" "$C_INCS increments" \
    "$(fmt "$r" 4)" "≤ 500 rows" "$(verdict "$C_ROWS" '<=' 500)"
F_CPS=$(calc "$F_COUNTERS / $F_SECS")
R_CPS=$(calc "$R_ROWS / $R_SECS")
r=$(calc "$F_CPS / $R_CPS")
F_NOTE=""
[ "$F_FAILS" = 0 ] || F_NOTE=" ($F_FAILS failed attempt(s): Redis timeout)"
row "tallyctl flush, counters/s ($F_COUNTERS counters)$F_NOTE" "$(fmt "$F_CPS" 0)" \
    "$(fmt "$R_CPS" 0) (raw SQLite UPSERT, 1 txn)" "$(fmt "$r" 2)x" "report" "-"
r=$(calc "($F_INCS / $F_SECS) / ($R_CPS * $F_INCS / $F_COUNTERS)")
row "tallyctl flush, increments/s ($F_INCS increments)" "$(fmt "$(calc "$F_INCS / $F_SECS")" 0)" \
    "$(fmt "$(calc "$R_CPS * $F_INCS / $F_COUNTERS")" 0) (raw SQLite)" "$(fmt "$r" 2)x" "report" "-"
row "counter increments applied via cstore_apply (16 a round trip)" \
    "$(fmt "$C_RATE" 0)/s" "$(fmt "$R_BENCH" 0) SET/s (redis-benchmark)" \
    "$(fmt "$(calc "$C_RATE / $R_BENCH")" 2)x" "context" "-"
row "tallyctl warm: home timelines rebuilt from SQLite" "$(fmt "$WARM_RATE" 0)/s ($WARMED)" \
    "-" "-" "context" "-"
row "redis-benchmark -t set -n 100000 (unix socket, 50 clients)" "$(fmt "$R_BENCH" 0)/s" "-" "-" "context" "-"

ELAPSED=$(($(date +%s) - T_START))
{
	echo "## Benchmarks ($(date -u +%Y-%m-%d), $(nproc) CPUs, ${ELAPSED} s)"
	echo
	echo "Ratios against baselines measured in the same run (\`make bench\`,"
	echo "tests/bench/run.sh): hello = a pre-forked libfcgi hello world ($PROCS"
	echo "processes, like each tally handler) behind the same nginx configuration."
	echo "wrk -t$THREADS -c$CONNS -d${DUR}s; values are medians over $ROUNDS rounds, a ratio is"
	echo "the median of the rounds' ratios (hello and tally run back to back in a"
	echo "round).  Stack CPU = utime+stime of nginx, handlers, worker and Redis"
	echo "per request (wrk excluded).  Fan-out: one connection, ${POST_DELAY} ms between"
	echo "posts, to authors whose followers' home timelines are warm."
	echo
	echo "| measurement | value | baseline | ratio | goal | result |"
	echo "|---|---|---|---|---|---|"
	printf '%s\n' "${ROWS[@]}"
} >"$OUT/results.md"
echo
cat "$OUT/results.md"
echo
say "written to build/bench/results.md ($MISSED goal(s) missed, ${ELAPSED} s)"
if [ "$MISSED" -gt 0 ] && [ "${BENCH_STRICT:-0}" = 1 ]; then
	exit 1
fi
exit 0
