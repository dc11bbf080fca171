#!/bin/bash
# postgres.sh -- tally on PostgreSQL against tally on SQLite, in the same
# run ("make bench" runs it after cluster.sh; "make bench-pg" alone).
#
# Two stacks under bin/tally-run, each in its own RUN_DIR with one user
# and 40 posts: one on SQLite (the default), one with DB=postgres (a local
# server under its RUN_DIR).  Rounds run the two back to back:
#   like     POST /posts/ID/like|unlike (tests/bench/like.lua)
#   profile  GET /u/bench, logged in
# req/s and p99 as ratios PostgreSQL over SQLite (p99: SQLite's over
# PostgreSQL's, so that for both "higher is better"); a ratio is the
# median of the rounds'.  No goal: the ratio is what a site pays for a
# database that several hosts share.
#
# Then the flush: 200,000 counters given pending deltas in a Redis of its
# own (tests/bench/cload.c, through tally's cstore), moved into a fresh
# database on the same PostgreSQL server by "tallyctl flush", against a
# raw batched UPSERT of the same rows on that server
# (tests/bench/upsert_pg.c: 64 rows a prepared statement, one
# transaction).
#
# Environment: BENCH_DURATION (5 s a run), BENCH_ROUNDS (3), BENCH_CONNS
# (16).  Writes build/bench/postgres.md and copies it to
# tests/bench/latest/.
set -u
cd "$(dirname "$0")/../.."
DUR=${BENCH_DURATION:-5}
ROUNDS=${BENCH_ROUNDS:-3}
CONNS=${BENCH_CONNS:-16}
THREADS=2
OUT=build/bench
mkdir -p "$OUT" tests/bench/latest

say() { printf 'bench-pg: %s\n' "$*"; }
die() { printf 'bench-pg: FAILED: %s\n' "$*" >&2; exit 1; }
calc() { awk "BEGIN { printf \"%.4f\", $1 }"; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for p in wrk redis-cli curl psql; do
	command -v "$p" >/dev/null 2>&1 || die "$p not found (scripts/deps.sh bench)"
done
[ -x bin/tally-run ] || die "build tally first (make all)"
cc -O2 -Wall -Wextra -Werror -o "$OUT/freeport" tests/bench/freeport.c ||
    die "freeport"
cc -O2 -Wall -Wextra -Werror -I/usr/include/postgresql -o "$OUT/upsert_pg" \
    tests/bench/upsert_pg.c -lpq || die "upsert_pg"
cc -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Ishared -I/usr/include/postgresql \
    -o "$OUT/cload" tests/bench/cload.c build/libtally.a ${LDLIBS:--lhiredis -lsqlite3 -lpq -lsodium -ljansson -lm -pthread} ||
    die "cload"

RD=$(mktemp -d /tmp/tally-bench-pg.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 1 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$RD"
}
trap cleanup EXIT

start() {		# start NAME [VAR=value...] -> sets BASE_<NAME>
	local name=$1 port dir
	shift
	port=$("$OUT/freeport") || die "no free port"
	dir=$RD/$name
	mkdir -p "$dir"
	env PORT="$port" RUN_DIR="$dir" DEMO=0 TALLY_PWHASH=min \
	    TALLY_ADMIN_PASSWORD=admin-pass-1 TALLY_WRITE_RATE=0 \
	    TALLY_LOGIN_RATE=6000000r/m TALLY_RECONCILE_EVERY=0 "$@" \
	    bin/tally-run >"$dir/run.log" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 1 300); do
		curl -fs -o /dev/null "http://127.0.0.1:$port/healthz" && break
		sleep 0.1
	done
	curl -fs -o /dev/null "http://127.0.0.1:$port/healthz" ||
	    die "$name did not come up: $(tail -5 "$dir/run.log")"
	printf -v "BASE_$name" '%s' "http://127.0.0.1:$port"
}

signup() {		# signup BASE LOGIN -> "SID CSRF"
	local base=$1 jar=$RD/jar.$2.${1##*:} page=$RD/page csrf sid
	curl -fs -c "$jar" -b "$jar" -o "$page" "$base/signup" || return 1
	csrf=$(grep -o 'name="csrf" value="[^"]*"' "$page" | sed -n '1{s/.*value="//; s/"$//; p}')
	curl -fs -c "$jar" -b "$jar" -o /dev/null --data-urlencode "login=$2" \
	    --data-urlencode "password=password-123" --data-urlencode "name=$2" \
	    --data-urlencode "csrf=$csrf" "$base/signup" || return 1
	sid=$(awk -F'\t' '$6 == "sid" { print $7 }' "$jar")
	curl -fs -b "$jar" -o "$page" "$base/t/general" || return 1
	csrf=$(grep -o 'name="csrf" value="[^"]*"' "$page" | sed -n '1{s/.*value="//; s/"$//; p}')
	[ -n "$sid" ] && [ -n "$csrf" ] || return 1
	echo "$sid $csrf"
}

seed() {		# seed NAME: users, posts; sets SID_, CSRF_, POSTS_ of NAME
	local base b sid csrf posts="" i loc
	base=$(eval echo "\$BASE_$1")
	read -r sid csrf <<<"$(signup "$base" bench)" || die "signup on $1"
	[ -n "$sid" ] || die "signup on $1: no session"
	for i in $(seq 1 40); do
		loc=$(curl -fs -o /dev/null -w '%{redirect_url}' -b "sid=$sid" \
		    --data-urlencode "body=benchmark post $i" --data-urlencode "topic=general" \
		    --data-urlencode "publish=1" --data-urlencode "csrf=$csrf" "$base/posts")
		b=${loc##*/posts/}
		[ -n "$b" ] && posts="$posts${posts:+,}$b"
	done
	printf -v "SID_$1" '%s' "$sid"
	printf -v "CSRF_$1" '%s' "$csrf"
	printf -v "POSTS_$1" '%s' "$posts"
}

wrk_run() {		# wrk_run FILE args... -> sets RPS P99 (ms)
	local f=$OUT/cluster-wrk-$1.txt
	shift
	timeout $((DUR + 30)) wrk --latency -d"${DUR}s" --timeout 10s \
	    -t"$THREADS" -c"$CONNS" "$@" >"$f" 2>&1 || die "wrk: $(tail -3 "$f")"
	! grep -q 'Non-2xx or 3xx\|Socket errors' "$f" || die "wrk: errors (see $f)"
	RPS=$(awk '/^Requests\/sec:/ { print $2 }' "$f")
	P99=$(awk '$1 == "99%" { v = $2; u = v; sub(/^[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
		m = (u == "us") ? 0.001 : (u == "ms") ? 1 : (u == "s") ? 1000 : 1; printf "%.4f", v * m }' "$f")
	[ -n "$RPS" ] && [ -n "$P99" ] || die "wrk: no result in $f"
}

say "starting a stack on SQLite and one on PostgreSQL"
start sqlite
start pg DB=postgres
seed sqlite
seed pg

declare -A R
for r in $(seq 1 "$ROUNDS"); do
	for s in sqlite pg; do
		base=$(eval echo "\$BASE_$s")
		sid=$(eval echo "\$SID_$s")
		SID=$sid CSRF=$(eval echo "\$CSRF_$s") POSTS=$(eval echo "\$POSTS_$s") THREADS=$THREADS \
		    wrk_run "pglike-$s-$r" -s tests/bench/like.lua "$base"
		R[like_rps_$s]="${R[like_rps_$s]:-} $RPS"; R[like_p99_$s]="${R[like_p99_$s]:-} $P99"
		say "$(printf 'round %d %-7s like    %8.1f req/s p99 %6.2f ms' "$r" "$s" "$RPS" "$P99")"
		wrk_run "pgprofile-$s-$r" -H "Cookie: sid=$sid" "$base/u/bench"
		R[profile_rps_$s]="${R[profile_rps_$s]:-} $RPS"; R[profile_p99_$s]="${R[profile_p99_$s]:-} $P99"
		say "$(printf 'round %d %-7s profile %8.1f req/s p99 %6.2f ms' "$r" "$s" "$RPS" "$P99")"
	done
	for k in like profile; do
		rs=$(echo "${R[${k}_rps_sqlite]}" | awk '{ print $NF }')
		rp=$(echo "${R[${k}_rps_pg]}" | awk '{ print $NF }')
		ps=$(echo "${R[${k}_p99_sqlite]}" | awk '{ print $NF }')
		pp=$(echo "${R[${k}_p99_pg]}" | awk '{ print $NF }')
		R[${k}_rps_ratio]="${R[${k}_rps_ratio]:-} $(calc "$rp / $rs")"
		R[${k}_p99_ratio]="${R[${k}_p99_ratio]:-} $(calc "$ps / $pp")"
	done
done

# ---- the flush on PostgreSQL -----------------------------------------------
say "flush: 200000 counters with pending deltas, into PostgreSQL"
URL=$(cat "$RD/pg/database-url")
HOSTQ=${URL#*\?}
psql -X -q -d "$URL" -c "CREATE DATABASE flushbench TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'" ||
    die "create database flushbench"
FB=$RD/fb
mkdir -p "$FB"
redis-server --port 0 --unixsocket "$FB/redis.sock" --unixsocketperm 700 --dir "$FB" \
    --appendonly yes --save '' >"$FB/redis.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do redis-cli -s "$FB/redis.sock" PING >/dev/null 2>&1 && break; sleep 0.1; done
export TALLY_REDIS=$FB/redis.sock TALLY_DB="postgresql:///flushbench?$HOSTQ" RUN_DIR=$FB
read -r F_INCS F_COUNTERS _ <<<"$("$OUT/cload" dirty 100000 2 1 2>>"$FB/cload.out")" ||
    die "cload dirty: $(tail -2 "$FB/cload.out")"
t0=$(date +%s.%N)
bin/tallyctl flush >"$FB/flush.out" 2>&1 || die "tallyctl flush: $(tail -2 "$FB/flush.out")"
t1=$(date +%s.%N)
F_SECS=$(calc "$t1 - $t0")
got=$(psql -X -A -t -q -d "$TALLY_DB" -c "SELECT COUNT(*) || ' ' || COALESCE(SUM(value), 0) FROM counters")
[ "$got" = "$F_COUNTERS $F_INCS" ] || die "flush: PostgreSQL holds $got counters/increments, not $F_COUNTERS $F_INCS"
read -r P_ROWS P_SECS <<<"$("$OUT/upsert_pg" "postgresql:///flushbench?$HOSTQ" 100000 2)" || die "upsert_pg"
unset TALLY_REDIS TALLY_DB RUN_DIR
F_RATE=$(calc "$F_COUNTERS / $F_SECS")
P_RATE=$(calc "$P_ROWS / $P_SECS")

md=$OUT/postgres.md
{
	echo "| measure | SQLite | PostgreSQL | ratio PostgreSQL/SQLite (median of $ROUNDS) |"
	echo "| --- | --- | --- | --- |"
	for k in like profile; do
		printf '| %s req/s | %s | %s | %s |\n' "$k" \
		    "$(echo "${R[${k}_rps_sqlite]}" | median)" "$(echo "${R[${k}_rps_pg]}" | median)" \
		    "$(echo "${R[${k}_rps_ratio]}" | median)"
		printf '| %s p99 ms | %s | %s | %s |\n' "$k" \
		    "$(echo "${R[${k}_p99_sqlite]}" | median)" "$(echo "${R[${k}_p99_pg]}" | median)" \
		    "$(echo "${R[${k}_p99_ratio]}" | median)"
	done
	echo
	echo "| flush into PostgreSQL | tallyctl flush | raw batched UPSERT (64 rows a statement) | ratio |"
	echo "| --- | --- | --- | --- |"
	printf '| counters/s (%s counters, %s increments) | %.0f | %.0f | %s |\n' "$F_COUNTERS" "$F_INCS" \
	    "$F_RATE" "$P_RATE" "$(calc "$F_RATE / $P_RATE")"
} >"$md"
cp "$md" tests/bench/latest/postgres.md
cat "$md"
