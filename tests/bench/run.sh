#!/bin/bash
# run.sh -- tally's benchmarks ("make bench", after "make all").
#
# Absolute times on a shared 2-core machine are noise, so every number is
# reported as a RATIO to a baseline measured in the same run:
#
#   HTTP    a minimal libfcgi hello world (tests/bench/hello.c, pre-forked
#           like tally's handlers; a 1 KB page, or with "?bytes=N" exactly
#           N bytes: the same-size hello of a page; with its
#           Content-Length, as tally's answers) behind the SAME nginx
#           configuration (plus "gzip on" for the runs that ask for it):
#           the stack runs under bin/tally-run, and a second nginx, started
#           from a copy of the rendered $RUN_DIR/nginx/nginx.conf plus one
#           "location = /__hello", serves both tally and hello; every HTTP
#           measurement goes through that second nginx.  req/s and p99 of
#           each page against hello's (the p99 ratio is hello's p99 over
#           the page's, so that for both "higher is better"):
#   likes   POST /posts/ID/like|unlike (real writes) vs hello (GET, and
#           POSTed the same form and cookie): req/s, p99, and the CPU the
#           stack spends per request, by process
#   profile GET /u/LOGIN vs hello; a user with 1,000,000 followers vs one
#           with 10 (cost per request must not grow with followers)
#   feed    GET /feed of a user following two authors (a full page); the
#           feed and /u/LOGIN also against a hello of their own size, the
#           feed's bytes (whole, gzipped, a post item), and the feed with
#           Accept-Encoding: gzip
#   badges  GET /badges.json vs hello; a user with 1,000,000 unread
#           notifications vs one with 10 (bulk INSERT ... SELECT, counters
#           recounted; the JSON is checked to say 1000000)
#   notes   GET /notifications of the same two users, each list 4 groups
#           (social/notify.h): 1,000,000 notifications behind it vs 10;
#           asked as a link from elsewhere (Sec-Fetch-Site: cross-site),
#           the page without its read-all, so the million stay unread
#   notices POST /admin/notices (a system notice to everyone) on this
#           stack with 1,000,000 users vs on a second stack (its own
#           tally-run, RUN_DIR and database) with 10 users: notices write
#           no per-user rows, so the latency must not move
#   fan-out POST /posts latency: authors with 10, 100, 1000, 2000, 5000
#           and 10000 warmed followers (1000 by the request's handler just
#           after its answer, the rest deferred to the worker), paced
#           posts on one connection (reported).  Then the same request in
#           isolation, 5000 vs 10 followers, which must be flat (curl,
#           each post once the deferred work is done):
#           the request's own cost without the earlier posts' fan-out
#   coalescing 100,000 increments over 100 counters through tally's own
#           cstore_apply_once (tests/bench/cload.c) while the worker flushes every
#           second, then "tallyctl flush": counter rows written to SQLite
#   reconcile "tallyctl reconcile" of a database with 1,000,000 likes and
#           1,000,000 follows (tests/bench/rcdata.sh, own Redis and SQLite,
#           built in the background while the main data is seeded) vs the
#           bare GROUP BY recount queries of every family (the catalog's
#           own SQL, printed by tests/bench/recsql.c) in the sqlite3 shell:
#           once without drift (the cost of checking), once after ~1% of
#           the counters were corrupted (repairs included)
#   flush   "tallyctl flush" of 200,000 counters with pending deltas (own
#           Redis + SQLite, no worker): counters a second against the
#           goal of 500,000; raw SQLite batched UPSERTs into an identical
#           counters table (tests/bench/upsert.c) and redis-benchmark for
#           context; and the CPU a row of the flush's SQLite threads (as
#           tallyctl prints it) against the raw UPSERT's
#
# Throughput ratios move with the rest of the machine's load; the stack's
# own CPU per request (utime + stime of its processes) moves much less and
# is reported next to them.  Rounds run hello and tally back to back (a
# 1 KB hello right beside each page compared with it), and a ratio is the
# median of the rounds' ratios.
#
# Prints a table and writes it to build/bench/results.md, the ratios with
# goals as a chart to build/bench/results.svg (tests/bench/chart.awk), and
# copies both to tests/bench/latest/.  Every load run is bounded (wrk -d,
# timeout); everything listens on 127.0.0.1 or in a fresh RUN_DIR, and is
# stopped by its own PID.
#
# Environment: BENCH_DURATION (seconds per wrk run, 5), BENCH_ROUNDS
# (rounds of the hello/like/profile/feed/badges/notice runs, medians
# reported, 5), BENCH_CONNS (16), BENCH_USERS (1000000), BENCH_NOTES
# (unread notifications of the big badge user, 1000000),
# BENCH_NOTICE_DURATION (seconds per notice run, 3), BENCH_FANOUT_SIZES
# ("10 100 1000 2000 5000 10000"), BENCH_FANOUT_DURATION (seconds per
# fan-out run, BENCH_DURATION), BENCH_FLUSH_RUNS (flush runs, each on a
# fresh Redis and database, the median reported, 3), BENCH_POST_DELAY_MS
# (pause between fan-out posts, 40), BENCH_FANOUT_ISOLATED (isolated
# posts per author, 15), BENCH_REC_USERS / BENCH_REC_POSTS (100000 each)
# and BENCH_REC_ROWS (likes and follows, 1000000 each) of the
# reconciliation data,
# BENCH_REC_TIMEOUT (seconds a reconciliation may take, 300),
# BENCH_KEEP=1 (keep RUN_DIR), BENCH_STRICT=1 (exit 1 when a goal is
# missed), LDLIBS (tally's libraries, passed by the Makefile).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
OUT=$ROOT/build/bench
LATEST=$ROOT/tests/bench/latest
DUR=${BENCH_DURATION:-5}
ROUNDS=${BENCH_ROUNDS:-5}
CONNS=${BENCH_CONNS:-16}
THREADS=2
NUSERS=${BENCH_USERS:-1000000}
NNOTES=${BENCH_NOTES:-1000000}
NDUR=${BENCH_NOTICE_DURATION:-3}
FO_SIZES=${BENCH_FANOUT_SIZES:-10 100 1000 2000 5000 10000}
FDUR=${BENCH_FANOUT_DURATION:-$DUR}
FLUSH_RUNS=${BENCH_FLUSH_RUNS:-3}
REC_USERS=${BENCH_REC_USERS:-100000}
REC_POSTS=${BENCH_REC_POSTS:-100000}
REC_ROWS=${BENCH_REC_ROWS:-1000000}
REC_TO=${BENCH_REC_TIMEOUT:-300}
PROCS=2			# processes per handler pool: tally-run's default
LDLIBS=${LDLIBS:--lfcgi -lhiredis -lsqlite3 -lsodium -ljansson -lm -pthread}
CCF="-O2 -Wall -Wextra -Werror"
T_START=$(date +%s)

mkdir -p "$OUT"
rm -rf "$OUT"/wrk-*.txt "$OUT"/results.md "$OUT"/results.svg "$OUT"/logs \
    "$OUT"/reconcile-*.txt

say() { printf 'bench: %s\n' "$*"; }
die() { printf 'bench: FAILED: %s\n' "$*" >&2; exit 1; }

for p in wrk redis-benchmark redis-server redis-cli sqlite3 nginx curl; do
	command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] ||
	    die "$p not found (scripts/deps.sh bench installs it)"
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x bin/tally-run ] && [ -x bin/tallyctl ] && [ -f build/libtally.a ] ||
    die "build tally first (make all)"
max_fo=0
for n in $FO_SIZES; do
	case $n in ''|*[!0-9]*) die "BENCH_FANOUT_SIZES: not a number: $n" ;; esac
	[ "$n" -gt "$max_fo" ] && max_fo=$n
done
[ $((max_fo + 20)) -le "$NUSERS" ] || die "BENCH_USERS must exceed the largest fan-out size"

# ---- helpers: built here, warnings are errors -----------------------------
say "building helpers"
cc $CCF -o "$OUT/hello" tests/bench/hello.c -lfcgi
cc $CCF -o "$OUT/freeport" tests/bench/freeport.c
cc $CCF -o "$OUT/upsert" tests/bench/upsert.c -lsqlite3
# cload and recsql link tally itself: the increments go through
# shared/count/cstore.c, the recount SQL is the catalog's (shared/count/counters.c).
# shellcheck disable=SC2086
cc $CCF -D_GNU_SOURCE -Ishared -o "$OUT/cload" tests/bench/cload.c \
    build/libtally.a $LDLIBS
# shellcheck disable=SC2086
cc $CCF -D_GNU_SOURCE -Ishared -o "$OUT/recsql" tests/bench/recsql.c \
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

stop_one() {		# pid: stops it and forgets it (its PID may be reused)
	local i keep=()
	for i in "${!PIDS[@]}"; do
		if [ "${PIDS[i]%%:*}" = "$1" ]; then
			stop_pid "$1" "${PIDS[i]##*:}"
		else
			keep+=("${PIDS[i]}")
		fi
	done
	PIDS=(${keep[@]+"${keep[@]}"})
}

cleanup() {
	local rc=$?
	stop_all
	if [ $rc -ne 0 ]; then
		rm -rf "$OUT/logs"
		mkdir -p "$OUT/logs"
		cp "$RD"/logs/*.log "$RD"/nginx2/error.log "$RD"/*.out \
		    "$OUT/logs/" 2>/dev/null || true
		mkdir -p "$OUT/logs/small"
		cp "$RD"/small/logs/*.log "$OUT/logs/small/" 2>/dev/null || true
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

wait_redis() {		# socket: until it answers PING (5 s)
	local i
	for i in $(seq 50); do
		redis-cli -s "$1" PING >/dev/null 2>&1 && return 0
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
# bash's own clock: a date(1) process on either side of what is timed
# was a millisecond or two of the flush's 0.4 s (EPOCHREALTIME's
# separator follows the locale's decimal point)
now() { local t=$EPOCHREALTIME; echo "${t/,/.}"; }
since() { calc "$(now) - $1"; }

# ---- reconciliation data: built in the background, own Redis ---------------
export RUN_DIR=$RD TALLY_PWHASH=min
RCD=$RD/rc
mkdir -p "$RCD"
start_rc_redis() {
	start redis-rc TERM redis-server --port 0 --unixsocket "$RCD/redis.sock" \
	    --unixsocketperm 700 --dir "$RCD" --appendonly yes --save ''
	RC_REDIS_PID=$LAST_PID
	wait_redis "$RCD/redis.sock" || die "redis-server for the reconciliation data"
}
start_rc_redis
say "building the reconciliation data in the background ($REC_USERS users," \
    "$REC_POSTS posts, $REC_ROWS follows, $REC_ROWS likes)"
T_RC=$(now)
start rcdata TERM env RUN_DIR="$RCD" TALLY_DB="$RCD/tally.db" \
    TALLY_REDIS="$RCD/redis.sock" tests/bench/rcdata.sh "$REC_USERS" \
    "$REC_POSTS" "$REC_ROWS" "$REC_ROWS"
RCDATA_PID=$LAST_PID

# ---- data: 1M users, a star followed by all of them, fan-out authors -----
PORTS=$("$OUT/freeport" 3)
PORT=$(echo "$PORTS" | sed -n 1p)
PORT2=$(echo "$PORTS" | sed -n 2p)
PORT3=$(echo "$PORTS" | sed -n 3p)
DB=$RD/tally.db
sq() { sqlite3 -cmd '.timeout 10000' "$DB" "$@"; }

say "seeding $NUSERS users (RUN_DIR $RD)"
T0=$(now)
bin/tallyctl seed --users "$NUSERS" --posts 5000 --follows 20000 \
    --likes 5000 --comments 1000 --seed 7 >"$RD/seed.out" 2>&1 ||
    die "tallyctl seed: $(tail -3 "$RD/seed.out")"
FANS=""
for n in $FO_SIZES; do FANS="$FANS fan$n"; done
for u in bench star small liked note10 note1m $FANS; do
	bin/tallyctl useradd "$u" "Bench $u" password-123 >>"$RD/seed.out" 2>&1 ||
	    die "tallyctl useradd $u"
done
uid() { sq "SELECT id FROM users WHERE login = '$1'"; }
STAR=$(uid star); SMALL=$(uid small); LIKED=$(uid liked)
NOTE10=$(uid note10); NOTE1M=$(uid note1m)
declare -A FO_UID
FO_CASE=""
for n in $FO_SIZES; do
	FO_UID[$n]=$(uid "fan$n")
	FO_CASE="$FO_CASE INSERT INTO follows(follower_id, followee_id, created_at)
SELECT id, ${FO_UID[$n]}, $(($(date +%s) * 1000)) - 100000000 + id FROM users
WHERE id BETWEEN 21 AND $((20 + n)) ON CONFLICT DO NOTHING;"
done
NOW=$(($(date +%s) * 1000))
# Every seeded user follows the star (one INSERT ... SELECT); users 1-10
# follow "small"; the fan-out authors' followers are the seeded users
# 21..20+N (nested: warming fan$max_fo's followers warms them all).
# Posts: a full first profile page (40) for star and small, 64 to like for
# "liked".  bench, note10 and note1m follow star and liked (bench's feed:
# a full page; the two badge users: the same "followed" work).  note10 has
# 10 unread notifications, in groups of 3, 3, 3 and 1 (social/notify.h);
# note1m $NNOTES, in 4 groups (a celebrity's 4 busy days): both lists
# show 4 items naming 10 and 12 people, and differ in how many
# notifications are behind them.
NOTE_PER=$(((NNOTES + 3) / 4))
G0=$(sq "SELECT coalesce(max(id), 0) FROM note_groups")	# the seed's groups
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
SELECT id, $SMALL, $NOW - 100000000 + id FROM users WHERE id <= 10
ON CONFLICT DO NOTHING;
$FO_CASE
INSERT INTO follows(follower_id, followee_id, created_at)
SELECT u.id, a.id, $NOW - 300000 FROM users u, users a
WHERE u.login IN ('bench', 'note10', 'note1m') AND a.id IN ($STAR, $LIKED)
ON CONFLICT DO NOTHING;
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < $NNOTES)
INSERT INTO notifications(user_id, actor_id, kind, post_id, comment_id,
    is_read, created_at, group_id)
SELECT $NOTE1M, (x - 1) % $NUSERS + 1, 'follow', NULL, NULL, 0,
    $NOW - 200000000 + x, $G0 + (x - 1) / $NOTE_PER + 1 FROM n;
WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < 4)
INSERT INTO note_groups(id, user_id, kind, post_id, first_at, last_at, size,
    unread)
SELECT $G0 + x, $NOTE1M, 'follow', NULL, $NOW - 200000000 + (x - 1) * $NOTE_PER + 1,
    $NOW - 200000000 + min(x * $NOTE_PER, $NNOTES),
    min($NOTE_PER, $NNOTES - (x - 1) * $NOTE_PER),
    min($NOTE_PER, $NNOTES - (x - 1) * $NOTE_PER)
FROM g WHERE (x - 1) * $NOTE_PER < $NNOTES;
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 10)
INSERT INTO notifications(user_id, actor_id, kind, post_id, comment_id,
    is_read, created_at, group_id)
SELECT $NOTE10, x, 'follow', NULL, NULL, 0, $NOW - 200000000 + x,
    $G0 + 10 + (x - 1) / 3 + 1 FROM n;
WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < 4)
INSERT INTO note_groups(id, user_id, kind, post_id, first_at, last_at, size,
    unread)
SELECT $G0 + 10 + x, $NOTE10, 'follow', NULL, $NOW - 200000000 + 3 * x - 2,
    $NOW - 200000000 + min(3 * x, 10), min(3, 10 - 3 * (x - 1)),
    min(3, 10 - 3 * (x - 1)) FROM g;
COMMIT;" || die "bulk SQL"
# Counters of the bulk rows (user_unread included): a tiny reseed
# recounts everything.
bin/tallyctl seed --users 2 --posts 0 --follows 0 --likes 0 --comments 0 \
    --seed 424242 >>"$RD/seed.out" 2>&1 || die "recount (tallyctl seed)"
NSTAR=$(sq "SELECT COUNT(*) FROM follows WHERE followee_id = $STAR")
NSMALL=$(sq "SELECT COUNT(*) FROM follows WHERE followee_id = $SMALL")
LIKED_POSTS=$(sq "SELECT group_concat(id) FROM posts WHERE user_id = $LIKED")
read -r U_NOTE1M U_NOTE10 <<<"$(sq "SELECT
    (SELECT value FROM counters WHERE name = 'user_unread' AND key = '$NOTE1M') || ' ' ||
    (SELECT value FROM counters WHERE name = 'user_unread' AND key = '$NOTE10')")"
[ "$U_NOTE1M" = "$NNOTES" ] && [ "$U_NOTE10" = 10 ] ||
    die "user_unread counters: note1m $U_NOTE1M (want $NNOTES), note10 $U_NOTE10"
for n in $FO_SIZES; do
	got=$(sq "SELECT COUNT(*) FROM follows WHERE followee_id = ${FO_UID[$n]}")
	[ "$got" = "$n" ] || die "fan$n has $got followers, not $n"
done
say "data ready in $(fmt "$(since "$T0")" 1) s: star has $NSTAR followers, small $NSMALL," \
    "note1m $U_NOTE1M unread notifications"

# the small database of the notice benchmark: 9 seeded users + admin = 10
RD3=$RD/small
mkdir -p "$RD3"
RUN_DIR=$RD3 bin/tallyctl seed --users 9 --posts 20 --follows 20 --likes 20 \
    --comments 0 --seed 9 >"$RD/seed-small.out" 2>&1 ||
    die "tallyctl seed (small): $(tail -3 "$RD/seed-small.out")"

say "waiting for the reconciliation data"
wait "$RCDATA_PID" || die "tests/bench/rcdata.sh: $(tail -3 "$RD/rcdata.out")"
stop_one "$RCDATA_PID"
stop_one "$RC_REDIS_PID"	# restarted for the reconciliation runs
read -r RC_FOLLOWS RC_LIKES RC_COUNTERS <<<"$(tail -1 "$RD/rcdata.out")"
say "reconciliation data: $RC_FOLLOWS follows, $RC_LIKES likes, $RC_COUNTERS" \
    "counters ($(fmt "$(since "$T_RC")" 1) s since its start)"

# ---- the stacks, hello, and the second nginx -----------------------------
say "starting tally-run on 127.0.0.1:$PORT"
start tally-run TERM env PORT="$PORT" RUN_DIR="$RD" DEMO=0 TALLY_PROCS=$PROCS \
    TALLY_ADMIN_PASSWORD=admin-pass-1 TALLY_LOGIN_RATE=60000r/m TALLY_WRITE_RATE=0 \
    TALLY_PWHASH=min bin/tally-run
RUN_PID=$LAST_PID
wait_http "http://127.0.0.1:$PORT/healthz" 20 || die "tally-run did not come up"
start hello TERM "$OUT/hello" "$RD/hello.sock" $PROCS
HELLO_PID=$LAST_PID
for i in $(seq 50); do [ -S "$RD/hello.sock" ] && break; sleep 0.1; done
say "starting the 10-user tally-run on 127.0.0.1:$PORT3"
start tally-run-small TERM env PORT="$PORT3" RUN_DIR="$RD3" DEMO=0 \
    TALLY_PROCS=$PROCS TALLY_ADMIN_PASSWORD=admin-pass-1 \
    TALLY_LOGIN_RATE=60000r/m TALLY_WRITE_RATE=0 TALLY_PWHASH=min bin/tally-run
SMALL_PID=$LAST_PID
wait_http "http://127.0.0.1:$PORT3/healthz" 20 || die "the 10-user tally-run did not come up"

N2=$RD/nginx2
mkdir -p "$N2"
# tally's FastCGI locations turn gzip off (pages carry the csrf token:
# BREACH); the second nginx takes copies of tally.conf and
# tally-fastcgi.conf without that line, so that the feedgz runs measure
# what compression would cost and save.
grep -v '^gzip off;' "$RD/nginx/tally-fastcgi.conf" >"$N2/tally-fastcgi.conf"
sed "s#$RD/nginx/tally-fastcgi.conf#$N2/tally-fastcgi.conf#" \
    "$RD/nginx/tally.conf" >"$N2/tally.conf"
grep -q "$N2/tally-fastcgi.conf" "$N2/tally.conf" ||
    die "could not point the second nginx at its own tally-fastcgi.conf"
{ tests/bench/nginx-user.sh "$RD"
sed -e "s#listen 127.0.0.1:$PORT;#listen 127.0.0.1:$PORT2;#" \
    -e "s#^pid .*#pid $N2/nginx.pid;#" \
    -e "s#\([a-z_]*\)_temp_path [^;]*;#\1_temp_path $N2/\1;#" \
    -e "s#access_log [^;]*;#access_log $N2/access.log;#" \
    -e "s#include $RD/nginx/tally.conf;#include $N2/tally.conf;#" \
    -e "\#include .*/tally-live.conf;#d" \
    -e "\#include $N2/tally.conf;#a\\
        location = /__hello {\\
            include $N2/tally-fastcgi.conf;\\
            fastcgi_pass unix:$RD/hello.sock;\\
        }\\
        gzip on;\\
        gzip_comp_level 1;" "$RD/nginx/nginx.conf"; } >"$N2/nginx.conf"
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
B1=http://127.0.0.1:$PORT	# tally-run's own nginx (1M users)
B3=http://127.0.0.1:$PORT3	# the 10-user stack's own nginx
wait_http "$B/__hello" 10 || die "second nginx / hello not answering"
wait_http "$B/healthz" 10 || die "second nginx does not reach tally"
NSMALLDB=$(sqlite3 -cmd '.timeout 10000' "$RD3/tally.db" "SELECT COUNT(*) FROM users")
NBIGDB=$(sq "SELECT COUNT(*) FROM users")

# ---- sessions ----------------------------------------------------------------
login() {		# login [password [base]] -> "SID CSRF" of a fresh session
	local base=${3:-$B} jar page=$RD/page.$1 csrf code sid
	jar=$RD/jar.$1.${base##*:}
	rm -f "$jar"
	curl -fs -c "$jar" -b "$jar" -o "$page" "$base/login" || return 1
	csrf=$(grep -o 'name="csrf" value="[^"]*"' "$page" | sed -n '1{s/.*value="//; s/"$//; p}')
	code=$(curl -s -c "$jar" -b "$jar" -o /dev/null -w '%{http_code}' \
	    --data-urlencode "login=$1" --data-urlencode "password=${2:-password-123}" \
	    --data-urlencode "csrf=$csrf" "$base/login")
	[ "$code" = 303 ] || return 1
	sid=$(awk -F'\t' '$6 == "sid" { print $7 }' "$jar")
	curl -fs -b "$jar" -o "$page" "$base/t/general" || return 1
	csrf=$(grep -o 'name="csrf" value="[^"]*"' "$page" | sed -n '1{s/.*value="//; s/"$//; p}')
	[ -n "$sid" ] && [ -n "$csrf" ] || return 1
	echo "$sid $csrf"
}
read -r SID CSRF <<<"$(login bench)" || die "login bench"
read -r SIDN10 _ <<<"$(login note10)" || die "login note10"
read -r SIDN1M _ <<<"$(login note1m)" || die "login note1m"
read -r SIDA CSRFA <<<"$(login admin admin-pass-1 "$B1")" || die "login admin"
read -r SIDA3 CSRFA3 <<<"$(login admin admin-pass-1 "$B3")" || die "login admin (10 users)"
for v in SID CSRF SIDN10 SIDN1M SIDA CSRFA SIDA3 CSRFA3; do
	[ -n "${!v}" ] || die "login: no $v"
done
declare -A FSID FCSRF
for n in $FO_SIZES; do
	read -r s c <<<"$(login "fan$n")" || die "login fan$n"
	[ -n "$s" ] && [ -n "$c" ] || die "login fan$n: no session"
	FSID[$n]=$s FCSRF[$n]=$c
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
curl -fs -b "sid=$SID" -o "$RD/page.feed" "$B/feed" || die "feed check"
NFEED=$(grep -o '<article data-post-id="' "$RD/page.feed" | wc -l)
[ "$NFEED" -ge 20 ] || die "/feed of bench shows $NFEED posts, not a full page"
# The pages' weight: the same-size helloes answer exactly these bytes.
FEED_BYTES=$(wc -c <"$RD/page.feed")
PROF_BYTES=$(wc -c <"$RD/page.small")
ITEM_BYTES=$(perl -0777 -ne 'my ($n, $t) = (0, 0);
    while (/<article .*?<\/article>/gs) { $n++; $t += length($&) }
    printf "%.0f", $n ? $t / $n : 0' "$RD/page.feed")
FEED_GZ=$(curl -fs -H 'Accept-Encoding: gzip' -b "sid=$SID" "$B/feed" | wc -c)
# Profiles read whole: 300 seeded users in turn (tests/bench/profiles.lua)
PLOGINS=$(sq "SELECT group_concat(login) FROM (SELECT login FROM users
    WHERE login LIKE 'user%' ORDER BY id LIMIT 300)")
[ "$(tr ',' '\n' <<<"$PLOGINS" | wc -l)" -eq 300 ] || die "300 seeded logins"
curl -fs -b "sid=$SID" -o /dev/null "$B/u/${PLOGINS%%,*}" || die "a seeded user's profile"
say "/feed: $FEED_BYTES bytes ($FEED_GZ gzipped), $ITEM_BYTES a post item; /u/small: $PROF_BYTES bytes"
for u in note10:10 note1m:$NNOTES; do
	case ${u%%:*} in note10) s=$SIDN10 ;; *) s=$SIDN1M ;; esac
	js=$(curl -fs -b "sid=$s" "$B/badges.json") || die "/badges.json check (${u%%:*})"
	case $js in *"\"notifications\":${u##*:},"*) ;;
	*) die "/badges.json of ${u%%:*} is $js, not ${u##*:} notifications" ;; esac
done
# The lists, as the benchmark reads them: a link from elsewhere
# (Sec-Fetch-Site: cross-site) shows the page without its read-all, so
# the badges above keep their million.
for u in note10:3 note1m:$NOTE_PER; do
	case ${u%%:*} in note10) s=$SIDN10 ;; *) s=$SIDN1M ;; esac
	f=$RD/page.notes.${u%%:*}
	curl -fs -H 'Sec-Fetch-Site: cross-site' -b "sid=$s" -o "$f" "$B/notifications" ||
	    die "/notifications check (${u%%:*})"
	[ "$(grep -o "data-group-size=\"${u##*:}\"" "$f" | wc -l)" -ge 3 ] &&
	    [ "$(grep -o 'data-group-size=' "$f" | wc -l)" = 4 ] ||
	    die "/notifications of ${u%%:*}: not 4 groups, 3 of ${u##*:}"
done
for x in 1 3; do
	case $x in
	1) h=$B1 s=$SIDA c=$CSRFA ;;
	3) h=$B3 s=$SIDA3 c=$CSRFA3 ;;
	esac
	loc=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' -b "sid=$s" \
	    --data-urlencode "title=Bench check" --data-urlencode "body=A notice" \
	    --data-urlencode "csrf=$c" "$h/admin/notices")
	case $loc in "303 "*"/admin") ;; *) die "notice check ($h): $loc" ;; esac
done

# ---- the worker's own reconciliation of a new (empty) Redis ---------------
# A worker that finds Redis without its generation key starts a full
# reconciliation at once (handlers/worker.c): on this 1M-user database it
# is background work that must be over before anything is measured.
wait_startup_rec() {	# database label: until no run is active (180 s) --
	local i st		# after the redis-empty one appeared (or 10 s passed)
	for i in $(seq 1800); do
		st=$(sqlite3 -cmd '.timeout 10000' "$1" "SELECT
		    (SELECT COUNT(*) FROM reconcile_runs WHERE reason = 'redis-empty') || ' ' ||
		    (SELECT COUNT(*) FROM reconcile_runs WHERE state IN ('queued', 'running'))")
		[ "${st#* }" = 0 ] && { [ "${st% *}" -gt 0 ] || [ "$i" -gt 100 ]; } && return 0
		sleep 0.1
	done
	die "$2: the worker's reconciliation is not over after 180 s ($st)"
}
T0=$(now)
wait_startup_rec "$DB" "1M users"
wait_startup_rec "$RD3/tally.db" "10 users"
read -r SR_SECS SR_WRONG <<<"$(sq "SELECT ((finished_at - started_at) / 1000.0) || ' ' ||
    (SELECT SUM(json_extract(value, '\$.wrong')) FROM json_each(report))
    FROM reconcile_runs WHERE reason = 'redis-empty' ORDER BY id DESC LIMIT 1")"
SR_SECS=${SR_SECS:-0} SR_WRONG=${SR_WRONG:-?}
say "the worker's startup reconciliation took $(fmt "$SR_SECS" 1) s ($SR_WRONG wrong);" \
    "waited $(fmt "$(since "$T0")" 1) s for it"

# ---- warm the followers' homes (deferred fan-out writes only to those) -----
T0=$(now)
bin/tallyctl warm --followers-of "fan$max_fo" >"$RD/warm.out" 2>&1 || die "tallyctl warm"
WARM_SECS=$(since "$T0")
WARMED=$(grep -o '[0-9]*' "$RD/warm.out" | tail -1)
WARM_RATE=$(calc "$WARMED / $WARM_SECS")
say "warmed $WARMED home timelines in $(fmt "$WARM_SECS" 1) s"

# ---- wrk, and the CPU it costs -------------------------------------------
# Throughput on a shared machine moves with everyone else's load; the CPU
# time the stack itself spends per request (utime + stime of every process
# under tally-run -- handlers, worker, Redis -- plus the second nginx and
# hello; wrk excluded) moves much less, so it is reported too.
ROOTS="$RUN_PID $NGX2_PID $HELLO_PID"
# shellcheck source=tests/bench/cpu.sh
. tests/bench/cpu.sh

# wrk_run name [wrk args...]: sets RPS, AVG, P50, P99 (ms), REQS and CPU
# (stack CPU microseconds per request); refuses a run with socket errors
# or non-2xx/3xx answers.  WDUR overrides DUR for one run.
to_ms() { awk '{ v = $1; u = v; sub(/^[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
	m = (u == "us") ? 0.001 : (u == "ms") ? 1 : (u == "s") ? 1000 : (u == "m") ? 60000 : 1;
	printf "%.4f", v * m }'; }
rcmds() {		# commands the main stack's Redis has run so far
	redis-cli -s "$RD/redis.sock" INFO commandstats 2>/dev/null |
	    awk -F'[=,]' '/^cmdstat_/ { s += $2 } END { print s + 0 }'
}
wrk_run() {
	local name=$1 f c0 c1 r0 d=${WDUR:-$DUR}
	shift
	f=$OUT/wrk-$name.txt
	r0=$(rcmds)
	c0=$(tree_cpu)
	timeout $((d + 30)) wrk --latency -d"${d}s" --timeout 10s "$@" >"$f" 2>&1 ||
	    die "wrk $name: $(tail -3 "$f")"
	c1=$(tree_cpu)
	RCMDS=$(($(rcmds) - r0 - 1))	# the first INFO
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
# The runs of a round (name -> how): hello first, then every page.
run_page() {		# key round
	case $1 in
	hello)	wrk_run "hello-$2" "${WRK[@]}" "$B/__hello" ;;
	hellofeed) wrk_run "hellofeed-$2" "${WRK[@]}" "$B/__hello?bytes=$FEED_BYTES" ;;
	helloprof) wrk_run "helloprof-$2" "${WRK[@]}" "$B/__hello?bytes=$PROF_BYTES" ;;
	feedgz)	wrk_run "feedgz-$2" "${WRK[@]}" -H "Cookie: sid=$SID" \
		    -H 'Accept-Encoding: gzip' "$B/feed" ;;
	like)	SID=$SID CSRF=$CSRF POSTS=$LIKED_POSTS THREADS=$THREADS \
		    wrk_run "like-$2" "${WRK[@]}" -s tests/bench/like.lua "$B" ;;
	hellopost) SID=$SID CSRF=$CSRF wrk_run "hellopost-$2" "${WRK[@]}" \
		    -s tests/bench/form.lua "$B/__hello" ;;
	profile10) wrk_run "profile10-$2" "${WRK[@]}" -H "Cookie: sid=$SID" "$B/u/small" ;;
	profile1m) wrk_run "profile1m-$2" "${WRK[@]}" -H "Cookie: sid=$SID" "$B/u/star" ;;
	feed)	wrk_run "feed-$2" "${WRK[@]}" -H "Cookie: sid=$SID" "$B/feed" ;;
	profiles) SID=$SID LOGINS=$PLOGINS THREADS=$THREADS wrk_run "profiles-$2" \
		    "${WRK[@]}" -s tests/bench/profiles.lua "$B" ;;
	people)	wrk_run "people-$2" "${WRK[@]}" -H "Cookie: sid=$SID" \
		    "$B/people?q=user00" ;;
	badges10) wrk_run "badges10-$2" "${WRK[@]}" -H "Cookie: sid=$SIDN10" \
		    "$B/badges.json" ;;
	badges1m) wrk_run "badges1m-$2" "${WRK[@]}" -H "Cookie: sid=$SIDN1M" \
		    "$B/badges.json" ;;
	notes10) wrk_run "notes10-$2" "${WRK[@]}" -H "Cookie: sid=$SIDN10" \
		    -H 'Sec-Fetch-Site: cross-site' "$B/notifications" ;;
	notes1m) wrk_run "notes1m-$2" "${WRK[@]}" -H "Cookie: sid=$SIDN1M" \
		    -H 'Sec-Fetch-Site: cross-site' "$B/notifications" ;;
	notice1m) SID=$SIDA CSRF=$CSRFA WDUR=$NDUR wrk_run "notice1m-$2" -t1 -c1 \
		    -s tests/bench/notice.lua "$B1" ;;
	notice10) ROOTS=$SMALL_PID SID=$SIDA3 CSRF=$CSRFA3 WDUR=$NDUR \
		    wrk_run "notice10-$2" -t1 -c1 -s tests/bench/notice.lua "$B3" ;;
	esac
}
# A 1 KB hello runs right before (odd rounds) or after (even rounds) each
# page compared with it: a page's ratio is to the hello nearest it in its
# round (pair_of), not to one a minute earlier, as the machine's load
# drifts within a round too.
PAGES="hello like hellopost helloprof hello profile10 people profiles hello profile1m hellofeed hello feed feedgz hello badges10 badges1m notes10 notes1m notice1m notice10"
# even rounds run the two sides of each comparison the other way round
PAGES2="hello like hellopost profile1m hello profiles people profile10 hello helloprof feedgz feed hello hellofeed badges1m badges10 notes1m notes10 hello notice10 notice1m"
# Warm-up (not recorded): caches, the first checkpoints, Redis' first AOF
# rewrite after the warm-up of the homes.
say "warm-up"
DUR0=$DUR; NDUR0=$NDUR; DUR=2; NDUR=1
declare -A warmed
for p in $PAGES; do
	[ "$p" = hellopost ] || [ "${warmed[$p]:-}" ] || run_page "$p" warm
	warmed[$p]=1
done
DUR=$DUR0; NDUR=$NDUR0
# Each round runs hello and the tally runs back to back; a ratio is the
# median over the rounds of that round's ratio (the machine's load drifts
# between rounds, less within one).  M[page.metric] and R[name] collect
# the rounds' values and ratios.
# The writers' lock's hold histogram lines of /metrics (tally's only).
lock_snap() { curl -fs "$B/metrics" | grep '^tally_sqlite_writer_lock_hold_seconds'; }
# Over every like run: per holder, holds, mean ms, how many over 1 ms, and
# the bound (ms) that every hold stayed within.
lock_report() {
	local r
	for r in $(seq "$ROUNDS"); do
		awk '{ print "-", $0 }' "$OUT/lock-$r-0"; awk '{ print "+", $0 }' "$OUT/lock-$r-1"
	done | awk '{ v[$2] += ($1 == "+") ? $3 : -$3 } END {
		n = split("social worker checkpoint", hs, " ")
		for (i = 1; i <= n; i++) {
			h = hs[i]; c = v["tally_sqlite_writer_lock_hold_seconds_count{holder=\"" h "\"}"]
			s = v["tally_sqlite_writer_lock_hold_seconds_sum{holder=\"" h "\"}"]
			o1 = c - v["tally_sqlite_writer_lock_hold_seconds_bucket{holder=\"" h "\",le=\"0.001\"}"]
			top = "+Inf"; split("0.0001 0.00025 0.0005 0.001 0.0025 0.005 0.01 0.025 0.1", bs, " ")
			for (j = 9; j >= 1; j--)
				if (v["tally_sqlite_writer_lock_hold_seconds_bucket{holder=\"" h "\",le=\"" bs[j] "\"}"] == c) top = bs[j] * 1000
			if (c == 0) { printf "%s%s 0", (i > 1 ? "; " : ""), h; continue }
			printf "%s%s %d (mean %.2f ms, %d over 1 ms, all within %s ms)", (i > 1 ? "; " : ""), h, c,
			    1000 * s / c, o1, top
		}
	}'
}
declare -A M R X		# X: this round's values
declare -A BY NREQ NCMD		# all rounds: CPU by process, requests, Redis commands
addv() { R[$1]="${R[$1]:-} $(calc "$2")"; }	# ratio-name expression
# The position in seq (words) of the hello nearest the page at position i
# (a tie: the later one).
pair_of() {
	local seq=($1) i=$2 j best=-1 d bd=999
	for j in "${!seq[@]}"; do
		[ "${seq[j]}" = hello ] || continue
		d=$((j > i ? j - i : i - j))
		[ "$d" -gt "$bd" ] || { bd=$d; best=$j; }
	done
	echo "$best"
}
for r in $(seq "$ROUNDS"); do
	pages=$PAGES
	[ $((r % 2)) = 1 ] || pages=$PAGES2
	say "round $r of $ROUNDS: $pages"
	declare -A V=()		# this round's values by position
	i=0
	for p in $pages; do
		[ "$p" != like ] || lock_snap >"$OUT/lock-$r-0"
		run_page "$p" "$r.$i"
		[ "$p" != like ] || lock_snap >"$OUT/lock-$r-1"
		M[$p.rps]="${M[$p.rps]:-} $RPS"; M[$p.p99]="${M[$p.p99]:-} $P99"
		M[$p.cpu]="${M[$p.cpu]:-} $CPU"; M[$p.avg]="${M[$p.avg]:-} $AVG"
		M[$p.p50]="${M[$p.p50]:-} $P50"
		X[$p.rps]=$RPS X[$p.p99]=$P99 X[$p.cpu]=$CPU X[$p.avg]=$AVG X[$p.p50]=$P50
		V[$i.rps]=$RPS V[$i.p99]=$P99 V[$i.cpu]=$CPU
		BY[$p]="${BY[$p]:-} $CPUBY"; NREQ[$p]=$((${NREQ[$p]:-0} + REQS))
		NCMD[$p]=$((${NCMD[$p]:-0} + RCMDS))
		i=$((i + 1))
	done
	i=0
	for p in $pages; do
		case " like profile10 profile1m feed badges10 badges1m " in
		*" $p "*)
			h=$(pair_of "$pages" "$i")
			addv "$p.rps" "${V[$i.rps]} / ${V[$h.rps]}"
			addv "$p.p99" "${V[$h.p99]} / ${V[$i.p99]}"
			[ "$p" != like ] || addv like.cpu "${V[$h.cpu]} / ${V[$i.cpu]}"
			;;
		esac
		i=$((i + 1))
	done
	unset V
	addv feed.same "${X[feed.rps]} / ${X[hellofeed.rps]}"
	addv feed.samep99 "${X[hellofeed.p99]} / ${X[feed.p99]}"
	addv profile10.same "${X[profile10.rps]} / ${X[helloprof.rps]}"
	addv profile10.samep99 "${X[helloprof.p99]} / ${X[profile10.p99]}"
	addv feedgz.rps "${X[feedgz.rps]} / ${X[feed.rps]}"
	addv like.hp "${X[like.rps]} / ${X[hellopost.rps]}"
	addv profile.cpu "${X[profile1m.cpu]} / ${X[profile10.cpu]}"
	addv people.cpu "${X[people.cpu]} / ${X[profiles.cpu]}"
	addv people.rps "${X[profiles.rps]} / ${X[people.rps]}"
	addv people.kcpu "${X[people.cpu]} / ${X[profile10.cpu]}"
	addv profiles.cpu "${X[profiles.cpu]} / ${X[profile10.cpu]}"
	addv profile.rps "${X[profile10.rps]} / ${X[profile1m.rps]}"
	addv badges.cpu "${X[badges1m.cpu]} / ${X[badges10.cpu]}"
	addv badges.rps "${X[badges10.rps]} / ${X[badges1m.rps]}"
	addv notes.cpu "${X[notes1m.cpu]} / ${X[notes10.cpu]}"
	addv notes.rps "${X[notes10.rps]} / ${X[notes1m.rps]}"
	addv notice.avg "${X[notice1m.avg]} / ${X[notice10.avg]}"
	addv notice.p50 "${X[notice1m.p50]} / ${X[notice10.p50]}"
	addv notice.p99 "${X[notice1m.p99]} / ${X[notice10.p99]}"
	addv notice.cpu "${X[notice1m.cpu]} / ${X[notice10.cpu]}"
done
med() { median <<<"${M[$1]}"; }		# median of a page's metric
mr() { median <<<"${R[$1]}"; }		# median of a ratio

# ---- fan-out: one connection, paced, then wait for the deferred part ------
rcli() { redis-cli -s "$RD/redis.sock" "$@"; }
pending_jobs() {	# queue + processing + handlers' batches, read atomically
	rcli EVAL "return redis.call('LLEN', KEYS[1]) + redis.call('LLEN', KEYS[2]) + redis.call('ZCARD', KEYS[3])" \
	    3 '{jobs}:queue' '{jobs}:processing' '{jobs}:inline'
}
drain() {		# seconds until the worker has done every job (max 120)
	local t0 i
	t0=$(now)
	for i in $(seq 1200); do
		[ "$(pending_jobs)" = 0 ] && break
		sleep 0.1
	done
	[ "$(pending_jobs)" = 0 ] || die "fan-out queue not drained in 120 s"
	since "$t0"
}
POST_DELAY=${BENCH_POST_DELAY_MS:-40}
declare -A FO_AVG FO_P99 FO_DRAIN FO_N FO_CPU FO_REQ
for n in $FO_SIZES; do
	a=${FO_UID[$n]}
	before=$(sq "SELECT COUNT(*) FROM posts WHERE user_id = $a")
	c0=$(tree_cpu)
	SID=${FSID[$n]} CSRF=${FCSRF[$n]} DELAY_MS=$POST_DELAY WDUR=$FDUR \
	    wrk_run "post-fan$n" -t1 -c1 -s tests/bench/post.lua "$B"
	FO_AVG[$n]=$AVG; FO_P99[$n]=$P99
	FO_N[$n]=$(($(sq "SELECT COUNT(*) FROM posts WHERE user_id = $a") - before))
	[ "${FO_N[$n]}" -gt 0 ] || die "fan$n: no post was made"
	# the request's own handler CPU (tally-social) per post
	FO_REQ[$n]=$(comm_us tally-social "${FO_N[$n]}" <<<"$CPUBY")
	FO_DRAIN[$n]=$(drain)
	# all the work of a post: the request and its deferred part
	c1=$(tree_cpu)
	FO_CPU[$n]=$(calc "(${c1%% *} - ${c0%% *}) * $TICK_US / ${FO_N[$n]}")
	say "fan$n: ${FO_N[$n]} posts, tally-social $(fmt "${FO_REQ[$n]}" 0) us a request," \
	    "$(fmt "${FO_CPU[$n]}" 0) us CPU a post in all, deferred fan-out drained" \
	    "$(fmt "${FO_DRAIN[$n]}" 1) s after the run"
done
# The newest post of the biggest author reached its last follower's home.
last=$(sq "SELECT follower_id FROM follows WHERE followee_id = ${FO_UID[$max_fo]}
    ORDER BY created_at DESC LIMIT 1")
newest=$(sq "SELECT MAX(id) FROM posts WHERE user_id = ${FO_UID[$max_fo]}")
top=$(rcli ZREVRANGE "{u$last}:home" 0 0)
[ -n "$top" ] && [ "$((10#$top))" = "$newest" ] ||
    die "fan-out: post $newest is not the newest in the home of follower $last ($top)"
# The same request in isolation: the smallest author (10 followers) vs
# the one with 5000 (or the biggest), alternating, each post sent only once
# every deferred batch is done (curl's time_total): the request's own
# cost, without the fan-out of the posts before it competing for the CPUs
# and for Redis.  Issue: a 5000-follower post costs what a 10-follower
# one does (the first 1000 homes are written after the response).
FI_N=${BENCH_FANOUT_ISOLATED:-15}
FI_LO=${FO_SIZES%% *}
FI_HI=$max_fo
for n in $FO_SIZES; do [ "$n" = 5000 ] && FI_HI=5000; done
declare -A ISO
if [ -n "${FSID[$FI_LO]:-}" ] && [ "$FI_HI" -gt "$FI_LO" ] && [ "$FI_N" -gt 0 ]; then
	say "fan-out in isolation: $FI_N posts each by fan$FI_LO and fan$FI_HI, queue drained before each"
	for i in $(seq "$FI_N"); do
		for n in "$FI_LO" "$FI_HI"; do
			for _ in $(seq 300); do
				[ "$(pending_jobs)" = 0 ] && break
				sleep 0.05
			done
			out=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 10 \
			    -b "sid=${FSID[$n]}" --data "topic=general" \
			    --data-urlencode "body=Isolated post $i" \
			    --data-urlencode "csrf=${FCSRF[$n]}" "$B/posts")
			case $out in 303\ *) ;; *) die "isolated post (fan$n): $out" ;; esac
			ISO[$n]="${ISO[$n]:-} $(calc "${out#* } * 1000")"
		done
	done
	FI_AVG1=$(tr ' ' '\n' <<<"${ISO[$FI_LO]}" | awk NF | awk '{ s += $1 } END { print s / NR }')
	FI_AVGX=$(tr ' ' '\n' <<<"${ISO[$FI_HI]}" | awk NF | awk '{ s += $1 } END { print s / NR }')
	FI_MED1=$(median <<<"${ISO[$FI_LO]}"); FI_MEDX=$(median <<<"${ISO[$FI_HI]}")
	drain >/dev/null
	say "fan-out in isolation: mean $(fmt "$FI_AVG1" 2) ms ($FI_LO) vs $(fmt "$FI_AVGX" 2) ms ($FI_HI)"
fi

# tallyctl flush, timed; when it fails (its Redis commands time out after
# 500 ms, e.g. while Redis stalls in an AOF rewrite) the failed batch is
# left for recovery, which waits out the batch lock (5 s): then again, at
# most 3 times.  Sets FL_SECS (time in tallyctl only) and FL_FAILS.
orphans() {		# buckets held by a batch with no live flusher (lock gone)
	redis-cli -s "$TALLY_REDIS" EVAL "local n = 0
for b = 0, 1023 do
  local id = redis.call('HGET', '{c' .. b .. '}:meta', 'b')
  if id and redis.call('EXISTS', '{flush}:lock:' .. id) == 0 then n = n + 1 end
end
return n" 0
}
flush_timed() {		# output file
	local t0 ok
	FL_SECS=0; FL_FAILS=0
	while :; do
		t0=$(now)
		ok=0
		bin/tallyctl flush >>"$1" 2>&1 && ok=1
		FL_SECS=$(calc "$FL_SECS + $(since "$t0")")
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

stop_all		# the stacks are done; what follows has its own Redis

# ---- reconciliation: 1M likes + 1M follows, own Redis, no site running -----
say "reconciliation: bare GROUP BY recount (sqlite3) vs tallyctl reconcile"
start_rc_redis
export TALLY_REDIS=$RCD/redis.sock TALLY_DB=$RCD/tally.db
RDB=$RCD/tally.db
rsq() { sqlite3 -cmd '.timeout 10000' "$RDB" "$@"; }
"$OUT/recsql" >"$RCD/recount.sql" || die "recsql"
"$OUT/recsql" post_likes user_followers user_following >"$RCD/recount-lf.sql" ||
    die "recsql post_likes user_followers user_following"
time_sql() {		# file: best of two runs of the sqlite3 shell, seconds
	local t0 a b
	t0=$(now); sqlite3 "$RDB" <"$1" >/dev/null || die "sqlite3 <$1"; a=$(since "$t0")
	t0=$(now); sqlite3 "$RDB" <"$1" >/dev/null || die "sqlite3 <$1"; b=$(since "$t0")
	calc "($a < $b) ? $a : $b"
}
RB_ALL=$(time_sql "$RCD/recount.sql")
RB_LF=$(time_sql "$RCD/recount-lf.sql")
RC_NFAM=$(grep -c . "$RCD/recount.sql")
RC_KEYS=$(rsq "SELECT COUNT(*) FROM counters WHERE name != 'post_views'")
reconcile_timed() {	# name: REC_SECS, REC_WRONG, REC_FIXED, REC_OK (0 timed out/failed)
	local f=$OUT/reconcile-$1.txt t0
	t0=$(now)
	REC_OK=1
	timeout "$REC_TO" bin/tallyctl reconcile >"$f" 2>"$f.err" || REC_OK=0
	REC_SECS=$(since "$t0")
	REC_WRONG=$(awk '/^reconciliation [0-9]+: [0-9]+ counters wrong/ { print $3 }' "$f")
	REC_FIXED=$(awk '/ checked / { for (i = 1; i < NF; i++) if ($i == "fixed") s += $(i + 1) }
	    END { print s + 0 }' "$f")
	[ -n "$REC_WRONG" ] || REC_OK=0
	say "reconcile ($1): $(fmt "$REC_SECS" 1) s, ${REC_WRONG:-?} wrong," \
	    "$REC_FIXED fixed$([ $REC_OK = 1 ] || echo " (FAILED or timed out after $REC_TO s)")"
}
reconcile_timed clean
RC0_SECS=$REC_SECS RC0_WRONG=${REC_WRONG:-?} RC0_OK=$REC_OK
# ~1% of the counters (every family with truth rows) one too high: keys
# whose first number ends in 07 (counters is WITHOUT ROWID).
RC_CORR=$(rsq "UPDATE counters SET value = value + 1 WHERE name != 'post_views'
    AND CAST(key AS INTEGER) % 100 = 7; SELECT changes();")
reconcile_timed corrupt
RC1_SECS=$REC_SECS RC1_WRONG=${REC_WRONG:-?} RC1_FIXED=$REC_FIXED RC1_OK=$REC_OK
# repaired for real: SQLite's counters of the two big families = a recount
RC_LEFT=$(rsq "SELECT
  (SELECT COUNT(*) FROM (SELECT post_id AS k, COUNT(*) AS c FROM likes GROUP BY 1) t
    LEFT JOIN counters n ON n.name = 'post_likes' AND n.key = CAST(t.k AS TEXT)
    WHERE n.value IS NOT t.c) +
  (SELECT COUNT(*) FROM (SELECT follower_id AS k, COUNT(*) AS c FROM follows GROUP BY 1) t
    LEFT JOIN counters n ON n.name = 'user_following' AND n.key = CAST(t.k AS TEXT)
    WHERE n.value IS NOT t.c)")
say "reconcile: $RC_CORR counters corrupted, $RC1_WRONG found, $RC_LEFT still wrong" \
    "in post_likes + user_following"
stop_all
unset TALLY_REDIS TALLY_DB

# ---- flush throughput: own Redis (tally-run's settings) and SQLite ---------
# FLUSH_RUNS times, each on a fresh Redis and database with its raw UPSERT
# baseline right after it: one run is a few hundred milliseconds, so a
# moment of a busy machine moved a single run's rate by a third.  The
# median run's numbers are reported.
say "flush: 200000 counters with pending deltas, $FLUSH_RUNS runs"
# What the sections before wrote (a million-user database, the
# reconciliation's repairs) goes to disk first, not during the runs: the
# flush's own syncs would wait behind it.
sync
F_RUNS=(); F_FAILS=0; R_RUNS=(); F_APPLY=(); R_CPUS=()
for i in $(seq "$FLUSH_RUNS"); do
	FB=$RD/fb$i
	mkdir -p "$FB"
	start redis-fb TERM redis-server --port 0 --unixsocket "$FB/redis.sock" \
	    --unixsocketperm 700 --dir "$FB" --appendonly yes --save ''
	FB_PID=$LAST_PID
	wait_redis "$FB/redis.sock" || die "redis-server for the flush benchmark"
	export TALLY_REDIS=$FB/redis.sock TALLY_DB=$FB/tally.db
	read -r F_INCS F_COUNTERS F_LOADS <<<"$("$OUT/cload" dirty 100000 2 1 2>>"$RD/cload.out")" ||
	    die "cload dirty"
	flush_timed "$RD/flush-fb$i.out"
	F_RUNS+=("$FL_SECS"); F_FAILS=$((F_FAILS + FL_FAILS))
	# What SQLite holds is the check (a recovered batch is not in the
	# totals tallyctl prints).
	got=$(sqlite3 -cmd '.timeout 10000' "$TALLY_DB" \
	    "SELECT COUNT(*) || ' ' || COALESCE(SUM(value), 0) FROM counters")
	[ "$got" = "$F_COUNTERS $F_INCS" ] ||
	    die "flush: SQLite holds $got counters/increments, not $F_COUNTERS $F_INCS"
	# the SQLite threads' own CPU, as tallyctl reports it
	F_APPLY+=("$(grep '^flushed' "$RD/flush-fb$i.out" | tail -1 |
	    sed -n "s/.*SQLite's part \([0-9]*\) us of CPU.*/\1/p")")
	read -r R_ROWS R_SECS R_CPU <<<"$("$OUT/upsert" "$FB/raw.db" 100000 2)" || die "upsert"
	R_RUNS+=("$R_SECS"); R_CPUS+=("$R_CPU")
	say "flush run $i: $(fmt "$(calc "$F_COUNTERS / $FL_SECS")" 0) counters/s," \
	    "raw UPSERT $(fmt "$(calc "$R_ROWS / $R_SECS")" 0) rows/s"
	[ "$i" -lt "$FLUSH_RUNS" ] || R_BENCH=$(timeout 60 redis-benchmark -s "$FB/redis.sock" \
	    -t set -n 100000 -q 2>&1 | tr '\r' '\n' |
	    awk '/requests per second/ { v = $2 } END { print v }')
	stop_one "$FB_PID"
done
F_SECS=$(echo "${F_RUNS[*]}" | median)
R_SECS=$(echo "${R_RUNS[*]}" | median)
F_APPLY_US=$(echo "${F_APPLY[*]}" | median)
R_CPU=$(echo "${R_CPUS[*]}" | median)
stop_all
unset TALLY_REDIS TALLY_DB

# ---- the table ----------------------------------------------------------------
ROWS=()
CHART=()
MISSED=0
row() {		# measurement value baseline ratio goal verdict
	ROWS+=("| $1 | $2 | $3 | $4 | $5 | $6 |")
	[ "$6" != miss ] || MISSED=$((MISSED + 1))
}
verdict() { awk -v v="$1" -v op="$2" -v g="$3" 'BEGIN {
	ok = (op == ">=") ? v >= g : v <= g; print ok ? "pass" : "miss" }'; }
# grow measurement value baseline ratio op goal chart-label [goal text]:
# a row with a goal, also drawn in the chart
grow() {
	local v gt
	v=$(verdict "$4" "$5" "$6")
	gt=${8:-$([ "$5" = ">=" ] && echo "≥" || echo "≤") $(awk -v g="$6" 'BEGIN { printf "%g", g }')x}
	row "$1" "$2" "$3" "$(fmt "$4" 2)x" "$gt" "$v"
	CHART+=("$7	$4	$6	$5	$v")
}
ms() { echo "$(fmt "$1" "${2:-2}") ms"; }

HRPS=$(med hello.rps); HP99=$(med hello.p99)
# -- POST like --
grow "POST /posts/ID/like+unlike, req/s (-t$THREADS -c$CONNS)" "$(fmt "$(med like.rps)" 0)" \
    "$(fmt "$HRPS" 0) (hello)" "$(mr like.rps)" '>=' 0.35 "POST like, req/s"
grow "POST like+unlike, p99 latency (ratio: hello/like)" "$(ms "$(med like.p99)" 1)" \
    "$(ms "$HP99" 1) (hello)" "$(mr like.p99)" '>=' 0.3 "POST like, p99"
row "POST like+unlike, stack CPU per request (ratio: hello/like)" "$(fmt "$(med like.cpu)" 0) µs" \
    "$(fmt "$(med hello.cpu)" 0) µs (hello)" "$(fmt "$(mr like.cpu)" 2)x" "report" "-"
byproc() { per_req "${NREQ[$1]}" <<<"${BY[$1]}"; }
cmds() { fmt "$(calc "${NCMD[$1]} / ${NREQ[$1]}")" 1; }
row "POST like+unlike, stack CPU per request by process (all rounds)" \
    "$(byproc like); $(cmds like) Redis commands/request" "$(byproc hello) (hello)" "-" "report" "-"
row "POST like+unlike: SQLite writers' lock holds during the like runs (/metrics), by holder" \
    "$(lock_report)" "-" "-" "report" "-"
row "POST like+unlike vs hello POSTed the same form and cookie, req/s" "$(fmt "$(med like.rps)" 0)" \
    "$(fmt "$(med hellopost.rps)" 0) (hello, POST)" "$(fmt "$(mr like.hp)" 2)x" "report" "-"
row "hello POSTed the same form, stack CPU per request by process" \
    "$(byproc hellopost)" "-" "-" "report" "-"
# -- GET pages --
for p in profile10 profile1m feed badges10; do
	case $p in
	profile10) what="GET /u/LOGIN ($NSMALL followers)" g=0.5 gp=0.5 cl="GET /u/LOGIN ($NSMALL followers)" ;;
	profile1m) what="GET /u/LOGIN ($NSTAR followers)" g=0.5 gp=0.5 cl="GET /u/LOGIN (1M followers)" ;;
	feed) what="GET /feed ($NFEED posts on the page)" g=0.4 gp=0.4 cl="GET /feed" ;;
	badges10) what="GET /badges.json" g=0.8 gp=0.6 cl="GET /badges.json" ;;
	esac
	grow "$what, req/s" "$(fmt "$(med $p.rps)" 0)" "$(fmt "$HRPS" 0) (hello)" \
	    "$(mr $p.rps)" '>=' $g "$cl, req/s"
	grow "$what, p99 latency (ratio: hello/page)" "$(ms "$(med $p.p99)" 1)" \
	    "$(ms "$HP99" 1) (hello)" "$(mr $p.p99)" '>=' $gp "$cl, p99"
	row "$what, stack CPU per request by process (all rounds)" \
	    "$(byproc $p); $(cmds $p) Redis commands/request" "$(byproc hello) (hello)" "-" \
	    "report" "-"
done
# -- the same pages against a hello of their own size (the cost of the
# bytes alone), their weight, and what gzip does to them --
grow "GET /feed vs a hello of the same size ($FEED_BYTES bytes), req/s" \
    "$(fmt "$(med feed.rps)" 0)" "$(fmt "$(med hellofeed.rps)" 0) (hello, $FEED_BYTES B)" \
    "$(mr feed.same)" '>=' 0.8 "GET /feed vs same-size hello, req/s"
row "GET /feed vs a hello of the same size, p99 (ratio: hello/page)" "$(ms "$(med feed.p99)" 1)" \
    "$(ms "$(med hellofeed.p99)" 1) (hello, $FEED_BYTES B)" "$(fmt "$(mr feed.samep99)" 2)x" "report" "-"
grow "GET /u/LOGIN ($NSMALL followers) vs a hello of the same size ($PROF_BYTES bytes), req/s" \
    "$(fmt "$(med profile10.rps)" 0)" "$(fmt "$(med helloprof.rps)" 0) (hello, $PROF_BYTES B)" \
    "$(mr profile10.same)" '>=' 0.8 "GET /u/LOGIN vs same-size hello, req/s"
row "GET /u/LOGIN vs a hello of the same size, p99 (ratio: hello/page)" "$(ms "$(med profile10.p99)" 1)" \
    "$(ms "$(med helloprof.p99)" 1) (hello, $PROF_BYTES B)" "$(fmt "$(mr profile10.samep99)" 2)x" "report" "-"
row "hello of the feed's size, stack CPU per request by process (all rounds)" \
    "$(byproc hellofeed)" "$(byproc hello) (hello, 1 KB)" "-" "report" "-"
row "bytes of /feed ($NFEED posts): the page, gzipped (nginx gzip_comp_level 1), a post item" \
    "$FEED_BYTES B; $FEED_GZ B gzipped; $ITEM_BYTES B an item" "-" "-" \
    "report (item ≤ 600 B: tests/unit/test-render.c, site.test.mjs)" "-"
row "GET /feed with Accept-Encoding: gzip vs without (loopback: bytes cost little, deflate CPU is paid), req/s" \
    "$(fmt "$(med feedgz.rps)" 0)" "$(fmt "$(med feed.rps)" 0)" "$(fmt "$(mr feedgz.rps)" 2)x" "report" "-"
row "GET /feed with gzip, stack CPU per request by process (all rounds)" \
    "$(byproc feedgz)" "$(byproc feed) (without)" "-" "report" "-"
grow "profile cost: stack CPU per request, $NSTAR vs $NSMALL followers" \
    "$(fmt "$(med profile1m.cpu)" 0) µs" "$(fmt "$(med profile10.cpu)" 0) µs" \
    "$(mr profile.cpu)" '<=' 1.2 "profile CPU/req, 1M vs 10 followers"
row "profile cost: 1 / req/s, $NSTAR vs $NSMALL followers" \
    "$(ms "$(calc "1000 / $(med profile1m.rps)")" 3)" \
    "$(ms "$(calc "1000 / $(med profile10.rps)")" 3)" "$(fmt "$(mr profile.rps)" 2)x" \
    "report (≤ 1.2x)" "-"
row "GET /u/LOGIN read whole (300 users in turn, more than a process keeps) vs one user's kept page, stack CPU per request" \
    "$(fmt "$(med profiles.cpu)" 0) µs" "$(fmt "$(med profile10.cpu)" 0) µs" \
    "$(fmt "$(mr profiles.cpu)" 2)x" "report" "-"
row "GET /u/LOGIN read whole, stack CPU per request by process (all rounds)" \
    "$(byproc profiles); $(cmds profiles) Redis commands/request" "-" "-" "report" "-"
grow "people search: GET /people?q=user00 ($NUSERS users, the first 20 of every login with that prefix) vs GET /u/LOGIN read whole, stack CPU per request" \
    "$(fmt "$(med people.cpu)" 0) µs" "$(fmt "$(med profiles.cpu)" 0) µs" \
    "$(mr people.cpu)" '<=' 1.5 "people search CPU/req vs a profile"
row "people search: 1 / req/s vs GET /u/LOGIN read whole" \
    "$(ms "$(calc "1000 / $(med people.rps)")" 3)" \
    "$(ms "$(calc "1000 / $(med profiles.rps)")" 3)" "$(fmt "$(mr people.rps)" 2)x" \
    "report (≤ 1.5x)" "-"
row "people search vs one user's kept GET /u/LOGIN (sent as kept: fcache.h), stack CPU per request" \
    "$(fmt "$(med people.cpu)" 0) µs" "$(fmt "$(med profile10.cpu)" 0) µs" \
    "$(fmt "$(mr people.kcpu)" 2)x" "report" "-"
row "GET /people?q=, stack CPU per request by process (all rounds)" \
    "$(byproc people); $(cmds people) Redis commands/request" "-" "-" "report" "-"
grow "/badges.json cost: stack CPU per request, $NNOTES vs 10 unread notifications" \
    "$(fmt "$(med badges1m.cpu)" 0) µs" "$(fmt "$(med badges10.cpu)" 0) µs" \
    "$(mr badges.cpu)" '<=' 1.2 "badges CPU/req, 1M vs 10 notifications"
row "/badges.json cost: 1 / req/s, $NNOTES vs 10 unread notifications" \
    "$(ms "$(calc "1000 / $(med badges1m.rps)")" 3)" \
    "$(ms "$(calc "1000 / $(med badges10.rps)")" 3)" "$(fmt "$(mr badges.rps)" 2)x" \
    "report (≤ 1.2x)" "-"
grow "GET /notifications cost: stack CPU per request, $NNOTES vs 10 notifications (4 groups each)" \
    "$(fmt "$(med notes1m.cpu)" 0) µs" "$(fmt "$(med notes10.cpu)" 0) µs" \
    "$(mr notes.cpu)" '<=' 1.2 "notifications list CPU/req, 1M vs 10 notifications"
row "GET /notifications cost: 1 / req/s, $NNOTES vs 10 notifications" \
    "$(ms "$(calc "1000 / $(med notes1m.rps)")" 3)" \
    "$(ms "$(calc "1000 / $(med notes10.rps)")" 3)" "$(fmt "$(mr notes.rps)" 2)x" \
    "report (≤ 1.2x)" "-"
grow "POST /admin/notices (a notice to everyone) median latency, $NBIGDB vs $NSMALLDB users (-c1)" \
    "$(ms "$(med notice1m.p50)" 3)" "$(ms "$(med notice10.p50)" 3)" "$(mr notice.p50)" \
    '<=' 1.2 "notice latency (p50), 1M vs 10 users" "≈ 1x (≤ 1.2x)"
row "POST /admin/notices mean latency, $NBIGDB vs $NSMALLDB users" \
    "$(ms "$(med notice1m.avg)" 3)" "$(ms "$(med notice10.avg)" 3)" \
    "$(fmt "$(mr notice.avg)" 2)x" "report" "-"
row "POST /admin/notices p99 latency, $NBIGDB vs $NSMALLDB users" \
    "$(ms "$(med notice1m.p99)")" "$(ms "$(med notice10.p99)")" \
    "$(fmt "$(mr notice.p99)" 2)x" "report" "-"
row "POST /admin/notices stack CPU per request (each stack's own processes), $NBIGDB vs $NSMALLDB users" \
    "$(fmt "$(med notice1m.cpu)" 0) µs; $(byproc notice1m)" \
    "$(fmt "$(med notice10.cpu)" 0) µs; $(byproc notice10)" \
    "$(fmt "$(mr notice.cpu)" 2)x" "report" "-"
# -- fan-out --
ref=1000
[ -n "${FO_AVG[$ref]:-}" ] || ref=${FO_SIZES%% *}
for n in $FO_SIZES; do
	inreq=$n; [ "$n" -le 1000 ] || inreq=1000
	row "POST /posts, author with $n warmed followers ($inreq in the request; ${FO_N[$n]} posts)" \
	    "avg $(ms "${FO_AVG[$n]}"), p99 $(ms "${FO_P99[$n]}"); handler $(fmt "${FO_REQ[$n]}" 0) µs/post; all-in CPU $(ms "$(calc "${FO_CPU[$n]} / 1000")" 1)/post; drained $(fmt "${FO_DRAIN[$n]}" 1) s after" \
	    "avg $(ms "${FO_AVG[$ref]}") ($ref)" "$(fmt "$(calc "${FO_AVG[$n]} / ${FO_AVG[$ref]}")" 2)x" \
	    "report" "-"
done
if [ -n "${FO_AVG[10000]:-}" ] && [ -n "${FO_AVG[1000]:-}" ]; then
	row "POST /posts mean latency under paced load (40 ms apart; the deferred batches of earlier posts compete), 10000 vs 1000 warmed followers" "$(ms "${FO_AVG[10000]}")" \
	    "$(ms "${FO_AVG[1000]}")" "$(fmt "$(calc "${FO_AVG[10000]} / ${FO_AVG[1000]}")" 2)x" "report" "-"
	row "POST /posts handler CPU (tally-social) per post, 10000 vs 1000 followers" \
	    "$(fmt "${FO_REQ[10000]}" 0) µs" "$(fmt "${FO_REQ[1000]}" 0) µs" \
	    "$(fmt "$(calc "${FO_REQ[10000]} / ${FO_REQ[1000]}")" 2)x" "report" "-"
fi
if [ -n "${FI_AVG1:-}" ]; then
	grow "POST /posts latency in isolation (deferred work drained before each post; curl, $FI_N posts each), $FI_HI vs $FI_LO followers: median" \
	    "median $(ms "$FI_MEDX"), mean $(ms "$FI_AVGX")" \
	    "median $(ms "$FI_MED1"), mean $(ms "$FI_AVG1")" \
	    "$(calc "$FI_MEDX / $FI_MED1")" '<=' 1.2 \
	    "POST /posts, $FI_HI vs $FI_LO followers" "≈ 1x (≤ 1.2x)"
fi
# -- counters --
r=$(calc "$C_ROWS / $C_INCS")
C_NOTE=""
[ "$C_FAILS" = 0 ] || C_NOTE=" ($C_FAILS failed tallyctl flush: Redis timeout)"
row "coalescing: counter rows written for $C_INCS increments over 100 counters$C_NOTE" \
    "$C_ROWS rows ($C_BATCHES batches, load $(fmt "$C_SECS" 1) s)" "$C_INCS increments" \
    "$(fmt "$r" 4)" "≤ 500 rows" "$(verdict "$C_ROWS" '<=' 500)"
RC_WHAT="$RC_FOLLOWS follows, $RC_LIKES likes, $REC_USERS users, $REC_POSTS posts; $RC_KEYS counters"
RC_BASE="$(fmt "$RB_ALL" 2) s (sqlite3: the $RC_NFAM families' GROUP BY recounts)"
if [ "$RC0_OK" = 1 ]; then
	grow "tallyctl reconcile, no drift ($RC_WHAT): wall time" \
	    "$(fmt "$RC0_SECS" 2) s ($RC0_WRONG wrong)" "$RC_BASE" "$(calc "$RC0_SECS / $RB_ALL")" \
	    '<=' 10 "reconcile, no drift"
else
	grow "tallyctl reconcile, no drift ($RC_WHAT): FAILED or timed out" \
	    "> $(fmt "$RC0_SECS" 0) s" "$RC_BASE" "$(calc "$RC0_SECS / $RB_ALL")" '<=' 10 \
	    "reconcile, no drift (failed)"
fi
RC_PCT=$(fmt "$(calc "100 * $RC_CORR / $RC_KEYS")" 1)
if [ "$RC1_OK" = 1 ]; then
	grow "tallyctl reconcile, $RC_CORR counters ($RC_PCT%) corrupted first, repairs included: wall time" \
	    "$(fmt "$RC1_SECS" 1) s ($RC1_WRONG wrong, $RC1_FIXED fixed, $RC_LEFT left)" \
	    "$RC_BASE" "$(calc "$RC1_SECS / $RB_ALL")" '<=' 10 "reconcile, 1% corrupted"
else
	grow "tallyctl reconcile, $RC_CORR counters ($RC_PCT%) corrupted first: FAILED or timed out" \
	    "> $(fmt "$RC1_SECS" 0) s" "$RC_BASE" "$(calc "$RC1_SECS / $RB_ALL")" '<=' 10 \
	    "reconcile, 1% corrupted (failed)"
fi
row "bare GROUP BY recount of likes and follows only (post_likes, user_followers, user_following)" \
    "$(fmt "$RB_LF" 2) s" "-" "-" "context" "-"
F_CPS=$(calc "$F_COUNTERS / $F_SECS")
R_CPS=$(calc "$R_ROWS / $R_SECS")
r=$(calc "$F_CPS / $R_CPS")
F_NOTE=""
[ "$F_FAILS" = 0 ] || F_NOTE=" ($F_FAILS failed attempt(s): Redis timeout)"
F_NOTE="$F_NOTE, the median of $FLUSH_RUNS runs"
# The goal is absolute (issue: counter engine): deltas moved into SQLite
# a second, a delta being one counter's coalesced change (one row write),
# the stricter reading; the raw UPSERT rate of this run is the context.
row "tallyctl flush, counters (coalesced deltas, one row write each) moved into SQLite per second ($F_COUNTERS counters, whole tallyctl run)$F_NOTE" \
    "$(fmt "$F_CPS" 0)/s" "$(fmt "$R_CPS" 0)/s (raw SQLite UPSERT, shuffled, 1 txn): $(fmt "$r" 2)x" \
    "-" "≥ 500000/s" "$(verdict "$F_CPS" '>=' 500000)"
r=$(calc "($F_INCS / $F_SECS) / ($R_CPS * $F_INCS / $F_COUNTERS)")
row "tallyctl flush, increments/s ($F_INCS increments)" "$(fmt "$(calc "$F_INCS / $F_SECS")" 0)" \
    "$(fmt "$(calc "$R_CPS * $F_INCS / $F_COUNTERS")" 0) (raw SQLite)" "$(fmt "$r" 2)x" "report" "-"
# Machine speed apart: what SQLite's part of the flush costs a row, in
# CPU, against the raw UPSERT's (the same machine, the same minutes).
if [ -n "$F_APPLY_US" ] && [ -n "$R_CPU" ]; then
	f=$(calc "$F_APPLY_US / $F_COUNTERS")
	b=$(calc "$R_CPU * 1000000 / $R_ROWS")
	row "tallyctl flush: its SQLite threads' CPU per counter row (the batches' UPSERTs and commits), the median of $FLUSH_RUNS runs (ratio: raw/flush, higher is cheaper)" \
	    "$(fmt "$f" 2) µs" "$(fmt "$b" 2) µs (raw SQLite UPSERT, its CPU per row)" \
	    "$(fmt "$(calc "$b / $f")" 2)x" "report" "-"
fi
row "counter increments applied via cstore_apply (16 a round trip)" \
    "$(fmt "$C_RATE" 0)/s" "$(fmt "$R_BENCH" 0) SET/s (redis-benchmark)" \
    "$(fmt "$(calc "$C_RATE / $R_BENCH")" 2)x" "context" "-"
row "the worker's own reconciliation at start (new Redis), $NBIGDB-user database, in the background" \
    "$(fmt "$SR_SECS" 1) s ($SR_WRONG wrong)" "-" "-" "context" "-"
row "tallyctl warm: home timelines rebuilt from SQLite" "$(fmt "$WARM_RATE" 0)/s ($WARMED)" \
    "-" "-" "context" "-"
row "redis-benchmark -t set -n 100000 (unix socket, 50 clients)" "$(fmt "$R_BENCH" 0)/s" "-" "-" "context" "-"

ELAPSED=$(($(date +%s) - T_START))
{
	echo "## Benchmarks ($(date -u +%Y-%m-%d), $(nproc) CPUs, ${ELAPSED} s)"
	echo
	echo "Ratios against baselines measured in the same run (\`make bench\`,"
	echo "tests/bench/run.sh): hello = a pre-forked libfcgi hello world ($PROCS"
	echo "processes, like each tally handler) behind the same nginx configuration,"
	echo "answering a 1 KB page, or (same-size hello) exactly as many bytes as the"
	echo "page it is compared with, with its Content-Length (as tally's answers)."
	echo "wrk -t$THREADS -c$CONNS -d${DUR}s; values are medians over $ROUNDS rounds, a ratio is"
	echo "the median of the rounds' ratios (hello and tally run back to back in a"
	echo "round; a page against the 1 KB hello run right beside it).  A p99 ratio"
	echo "is hello's p99 over the page's (higher is better, like req/s).  Stack"
	echo "CPU = utime+stime of nginx, handlers, worker and Redis per request (wrk"
	echo "excluded).  Notices: wrk -t1 -c1 -d${NDUR}s against each"
	echo "stack's own nginx.  Fan-out: one connection, ${POST_DELAY} ms between"
	echo "posts, -d${FDUR}s, to authors whose followers' home timelines are warm."
	echo "Reconciliation: own Redis and SQLite, no site running; baseline = the"
	echo "catalog's recount queries in the sqlite3 shell, best of two."
	echo
	echo "| measurement | value | baseline | ratio | goal | result |"
	echo "|---|---|---|---|---|---|"
	printf '%s\n' "${ROWS[@]}"
	echo
	echo "![ratios against goals](results.svg)"
} >"$OUT/results.md"
CTITLE="tally: make bench, $(date -u +%Y-%m-%d), $(nproc) CPUs ($MISSED of ${#CHART[@]} goals missed)"
printf '%s\n' "${CHART[@]}" | awk -F'\t' -v title="$CTITLE" -f tests/bench/chart.awk \
    >"$OUT/results.svg" || die "chart"
mkdir -p "$LATEST"
cp "$OUT/results.md" "$OUT/results.svg" "$LATEST/"
echo
cat "$OUT/results.md"
echo
say "written to build/bench/results.md and results.svg, copied to tests/bench/latest/" \
    "($MISSED goal(s) missed, ${ELAPSED} s)"
if [ "$MISSED" -gt 0 ] && [ "${BENCH_STRICT:-0}" = 1 ]; then
	exit 1
fi
exit 0
