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
# median of the rounds'.
#
# Then many users (the realistic case): 300 on each store, every request
# a random user's, likes and unlikes of random posts, the spread feed and
# the mix of traffic.sh (reads and writes together, no goal of its own);
# and likes on PostgreSQL with 1 against 4 writer processes.  Goals
# (issue 49): PostgreSQL's spread like >= 0.5x SQLite's, p99 too; its
# spread feed >= 0.5x; 4 writers >= 1.8x one.  Then the same likes on
# three handler hosts (HOSTS=3: three supervisors, every pool on FastCGI
# over TCP, one PostgreSQL) on the same cores, against the one host of
# that round: docs/SCALING.md's 3-host row.
#
# Then the flush: 200,000 counters given pending deltas in a Redis of its
# own (tests/bench/cload.c, through tally's cstore), moved into a fresh
# database on the same PostgreSQL server by "tallyctl flush", against a
# raw batched UPSERT of the same rows on that server
# (tests/bench/upsert_pg.c: 64 rows a prepared statement, one
# transaction).
#
# Environment: BENCH_DURATION (5 s a run), BENCH_ROUNDS (3), BENCH_CONNS
# (16), BENCH_HOLD=1 (set the two stacks and their many users up, print
# where they are, and wait an hour instead of measuring: to profile them
# by hand).  Writes build/bench/postgres.md and copies it to
# tests/bench/latest/.
set -u
cd "$(dirname "$0")/../.."
DUR=${BENCH_DURATION:-5}
ROUNDS=${BENCH_ROUNDS:-3}
CONNS=${BENCH_CONNS:-16}
THREADS=2
OUT=build/bench
mkdir -p "$OUT" tests/bench/latest

NAME=pg
# shellcheck source=tests/bench/stacks.sh
. tests/bench/stacks.sh
stacks_init wrk redis-cli curl psql sqlite3 node
cc -O2 -Wall -Wextra -Werror -I/usr/include/postgresql -o "$OUT/upsert_pg" \
    tests/bench/upsert_pg.c -lpq || die "upsert_pg"
cc -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Ishared -I/usr/include/postgresql \
    -o "$OUT/cload" tests/bench/cload.c build/libtally.a ${LDLIBS:--lhiredis -lsqlite3 -lpq -lsodium -ljansson -lm -pthread} ||
    die "cload"

say "starting a stack on SQLite and one on PostgreSQL"
start sqlite
start pg DB=postgres
seed sqlite
seed pg

declare -A R
hold() {		# BENCH_HOLD=1: the stacks with many users, no runs
	[ "${BENCH_HOLD:-0}" = 1 ] || return 0
	spread_prepare sqlite
	spread_prepare pg
	say "holding: sqlite $BASE_sqlite, pg $BASE_pg (RUN_DIRs under $RD); stop with kill $$"
	sleep 3600
	exit 0
}
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

# ---- many users: like/unlike and the spread feed, and writers ---------------
# SPREAD_USERS (300) users seeded on each store (posts, follows, likes),
# all signed in; from CONNS_SPREAD (64) connections every request is a
# random user's (tests/bench/traffic.lua): "like" likes or unlikes a
# random post, "feed" reads the user's /feed, "mix" is traffic.sh's (40 %
# feed, 20 % profile, 15 % post, 15 % badges, 10 % like/unlike).  Then the likes on
# PostgreSQL with 1 and with 4 writer processes (TALLY_WRITERS): writers
# that run at once should scale where one lock made them take turns;
# and on three hosts (pgh3, each with its default 4 writers).
SPREAD_USERS=${BENCH_SPREAD_USERS:-300}
CONNS_SPREAD=${BENCH_CONNS_SPREAD:-64}

sq() {			# sq NAME SQL: one query on NAME's store, rows a line
	local dir=$RD/$1
	if [ -f "$dir/database-url" ]; then
		psql -X -A -t -q -d "$(cat "$dir/database-url")" -c "$2"
	else
		sqlite3 -cmd '.timeout 10000' "$dir/tally.db" "$2"
	fi
}

spread_prepare() {	# spread_prepare NAME: users, sessions, warm homes
	local name=$1 dir=$RD/$1 base
	base=$(eval echo "\$BASE_$name")
	RUN_DIR=$dir TALLY_PWHASH=min bin/tallyctl seed --users "$SPREAD_USERS" \
	    --posts $((SPREAD_USERS * 3)) --follows $((SPREAD_USERS * 20)) \
	    --likes $((SPREAD_USERS * 5)) --comments 0 --seed 49 \
	    >"$dir/spread-seed.log" 2>&1 || die "seed $name: $(tail -3 "$dir/spread-seed.log")"
	sq "$name" "SELECT login FROM users WHERE login NOT IN ('admin', 'bench')
	    ORDER BY id" >"$dir/logins" || die "logins of $name"
	sq "$name" "SELECT id FROM posts WHERE status = 1 AND is_deleted = 0
	    ORDER BY id" >"$dir/spread-posts" || die "posts of $name"
	node tests/bench/sessions.mjs "$base" "$dir/logins" "$dir/sessions" 32 \
	    >"$dir/sessions.log" 2>&1 || die "sessions of $name: $(grep -m1 Error "$dir/sessions.log" || tail -3 "$dir/sessions.log")"
	xargs -n 500 env RUN_DIR="$dir" bin/tallyctl warm <"$dir/logins" \
	    >"$dir/warm.log" 2>&1 || die "warm $name: $(tail -3 "$dir/warm.log")"
}

spread_run() {		# spread_run NAME MODE TAG -> RPS P99 (ms) STMTS TRIPS (a request)
	local name=$1 f=$OUT/pgspread-$3.txt base st0 tr0 n
	base=$(eval echo "\$BASE_$name")
	st0=$(metric tally_sqlite_statements_total "$base")
	tr0=$(metric tally_sql_round_trips_total "$base")
	SESSIONS=$RD/$name/sessions POSTS=$RD/$name/spread-posts MODE=$2 \
	    THREADS=$THREADS SEED=$RANDOM timeout $((DUR + 30)) wrk --latency \
	    -d"${DUR}s" --timeout 10s -t"$THREADS" -c"$CONNS_SPREAD" \
	    -s tests/bench/traffic.lua "$base" >"$f" 2>&1 || die "wrk: $(tail -3 "$f")"
	! grep -q 'Non-2xx or 3xx\|Socket errors' "$f" ||
	    die "wrk $3: answers other than 2xx/3xx: $(grep 'Non-2xx\|Socket' "$f")"
	RPS=$(awk '/^Requests\/sec:/ { print $2 }' "$f")
	P99=$(awk '$1 == "99%" { v = $2; u = v; sub(/^[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
		m = (u == "us") ? 0.001 : (u == "ms") ? 1 : (u == "s") ? 1000 : 1; printf "%.4f", v * m }' "$f")
	[ -n "$RPS" ] && [ -n "$P99" ] || die "wrk: no result in $f"
	n=$(awk '/requests in/ { print $1 }' "$f")
	STMTS=$(calc "($(metric tally_sqlite_statements_total "$base") - $st0) / $n")
	TRIPS=$(calc "($(metric tally_sql_round_trips_total "$base") - $tr0) / $n")
}

cpu_run() {		# cpu_run NAME TAG: spread likes -> spread_run's, US (µs of the stack a like), CORES (busy), ALL (the machine's cores busy, wrk's and the kernel's too), BY, GROUP (requests a commit)
	local k0 k1 n c0 c1 base m0 m1
	base=$(eval echo "\$BASE_$1")
	c0=$(metric tally_sql_commits_total "$base")
	ROOTS=$(eval echo "\$PID_$1") k0=$(tree_cpu)
	m0=$(machine_ticks)
	spread_run "$1" like "$2"
	m1=$(machine_ticks)
	k1=$(tree_cpu)
	ALL=$(calc "(${m1%% *} - ${m0%% *}) / (${m1##* } - ${m0##* }) * $(nproc)")
	n=$(awk '/requests in/ { print $1 }' "$OUT/pgspread-$2.txt")
	c1=$(metric tally_sql_commits_total "$base")
	GROUP=$(calc "($c1 > $c0 ? $n / ($c1 - $c0) : 0)")
	US=$(calc "(${k1%% *} - ${k0%% *}) * $TICK_US / $n")
	CORES=$(calc "(${k1%% *} - ${k0%% *}) * $TICK_US / ($DUR * 1000000)")
	BY=$(cpu_diff "$k0" "$k1" | per_req "$n")
}

hold
say "spread: $SPREAD_USERS users on each store"
start pg1 DB=postgres TALLY_WRITERS=1
start pg4 DB=postgres TALLY_WRITERS=4
start pgh3 DB=postgres HOSTS=3
for s in sqlite pg pg1 pg4 pgh3; do spread_prepare "$s"; done
for r in $(seq 1 "$ROUNDS"); do
	for k in like feed mix; do
		for s in sqlite pg; do
			spread_run "$s" "$k" "$k-$s-$r"
			R[s${k}_rps_$s]="${R[s${k}_rps_$s]:-} $RPS"; R[s${k}_p99_$s]="${R[s${k}_p99_$s]:-} $P99"
			R[s${k}_st_$s]="${R[s${k}_st_$s]:-} $STMTS"
			R[s${k}_tr_$s]="${R[s${k}_tr_$s]:-} $TRIPS"
			say "$(printf 'round %d %-7s %-5s spread %8.1f req/s p99 %6.2f ms' "$r" "$s" "$k" "$RPS" "$P99")"
		done
		R[s${k}_rps_ratio]="${R[s${k}_rps_ratio]:-} $(calc "$(echo "${R[s${k}_rps_pg]}" | awk '{ print $NF }') / $(echo "${R[s${k}_rps_sqlite]}" | awk '{ print $NF }')")"
		R[s${k}_p99_ratio]="${R[s${k}_p99_ratio]:-} $(calc "$(echo "${R[s${k}_p99_sqlite]}" | awk '{ print $NF }') / $(echo "${R[s${k}_p99_pg]}" | awk '{ print $NF }')")"
	done
	for s in pg1 pg4; do
		cpu_run "$s" "writers-$s-$r"
		R[w_rps_$s]="${R[w_rps_$s]:-} $RPS"
		R[w_us_$s]="${R[w_us_$s]:-} $US"; R[w_cores_$s]="${R[w_cores_$s]:-} $CORES"
		R[w_all_$s]="${R[w_all_$s]:-} $ALL"
		R[w_group_$s]="${R[w_group_$s]:-} $GROUP"
		say "$(printf 'round %d %-7s likes, %s writer processes: %8.1f req/s p99 %6.2f ms, %s cores busy (the machine %s), %.1f requests a commit | %s' "$r" "$s" "${s#pg}" "$RPS" "$P99" "$CORES" "$ALL" "$GROUP" "$BY")"
	done
	R[w_ratio]="${R[w_ratio]:-} $(calc "$(echo "${R[w_rps_pg4]}" | awk '{ print $NF }') / $(echo "${R[w_rps_pg1]}" | awk '{ print $NF }')")"
	cpu_run pgh3 "hosts-$r"
	R[h_rps]="${R[h_rps]:-} $RPS"; R[h_p99]="${R[h_p99]:-} $P99"
	R[h_ratio]="${R[h_ratio]:-} $(calc "$RPS / $(echo "${R[slike_rps_pg]}" | awk '{ print $NF }')")"
	H_CPU=$BY
	say "$(printf 'round %d pgh3    likes, 3 hosts: %8.1f req/s p99 %6.2f ms | %s' "$r" "$RPS" "$P99" "$H_CPU")"
done

# ---- the flush on PostgreSQL -----------------------------------------------
say "flush: 200000 counters with pending deltas, into PostgreSQL"
URL=$(cat "$RD/pg/database-url")
HOSTQ=${URL#*\?}
# made by the server's superuser (the programs' role creates no
# database), owned by the programs' role as tally's own is
psql -X -q -d "${URL/user=tally_app/user=tally}" -c "CREATE DATABASE flushbench TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' OWNER tally_app" ||
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
	echo "$SPREAD_USERS users, $CONNS_SPREAD connections, every request a random user's (median of $ROUNDS):"
	echo
	echo "| spread | SQLite | PostgreSQL | ratio PostgreSQL/SQLite |"
	echo "| --- | --- | --- | --- |"
	for k in like feed mix; do
		printf '| %s req/s | %s | %s | %s |\n' "$k" \
		    "$(echo "${R[s${k}_rps_sqlite]}" | median)" "$(echo "${R[s${k}_rps_pg]}" | median)" \
		    "$(echo "${R[s${k}_rps_ratio]}" | median)"
		printf '| %s p99 ms | %s | %s | %s |\n' "$k" \
		    "$(echo "${R[s${k}_p99_sqlite]}" | median)" "$(echo "${R[s${k}_p99_pg]}" | median)" \
		    "$(echo "${R[s${k}_p99_ratio]}" | median)"
		printf '| %s SQL statements a request | %s | %s | |\n' "$k" \
		    "$(echo "${R[s${k}_st_sqlite]}" | median)" "$(echo "${R[s${k}_st_pg]}" | median)"
		printf '| %s round trips to the database a request | %s | %s | |\n' "$k" \
		    "$(echo "${R[s${k}_tr_sqlite]}" | median)" "$(echo "${R[s${k}_tr_pg]}" | median)"
	done
	echo
	echo "On PostgreSQL each statement is a round trip to the server (a"
	echo "write transaction's BEGIN and transaction id ride with its first"
	echo "statement, an action's COMMIT with its outbox row, its last; in a"
	echo "group, each action's savepoint rides with its call, and the"
	echo "group's outbox rows are one statement with its COMMIT); SQLite"
	echo "runs in the process."
	echo
	echo "| likes on PostgreSQL | 1 writer process | 4 writer processes | ratio 4/1 |"
	echo "| --- | --- | --- | --- |"
	printf '| req/s | %s | %s | %s |\n' "$(echo "${R[w_rps_pg1]}" | median)" \
	    "$(echo "${R[w_rps_pg4]}" | median)" "$(echo "${R[w_ratio]}" | median)"
	printf '| the stack'"'"'s CPU a like, µs | %s | %s | |\n' "$(echo "${R[w_us_pg1]}" | median)" \
	    "$(echo "${R[w_us_pg4]}" | median)"
	printf '| cores busy (of %s) | %s | %s | |\n' "$(nproc)" "$(echo "${R[w_cores_pg1]}" | median)" \
	    "$(echo "${R[w_cores_pg4]}" | median)"
	printf '| requests a commit (a group shares one) | %s | %s | |\n' "$(echo "${R[w_group_pg1]}" | median)" \
	    "$(echo "${R[w_group_pg4]}" | median)"
	printf '| the machine'"'"'s cores busy (every process: wrk, the kernel) | %s | %s | |\n' \
	    "$(echo "${R[w_all_pg1]}" | median)" "$(echo "${R[w_all_pg4]}" | median)"
	echo
	W_CEIL=$(calc "$(nproc) / $(echo "${R[w_all_pg1]}" | median)")
	echo "At the CPU a like costs with one writer, these $(nproc) cores allow 4 writers"
	echo "at most ${W_CEIL}x one (the cores over those one writer keeps busy)."
	awk "BEGIN { exit !($W_CEIL < 1.8) }" &&
	    echo "The goal, 1.8x, is above that: more cores than this machine has."
	echo
	echo "| spread likes on PostgreSQL | 1 host | 3 hosts (FastCGI over TCP), the same cores | ratio 3/1 |"
	echo "| --- | --- | --- | --- |"
	printf '| req/s | %s | %s | %s |\n' "$(echo "${R[slike_rps_pg]}" | median)" \
	    "$(echo "${R[h_rps]}" | median)" "$(echo "${R[h_ratio]}" | median)"
	printf '| p99 ms | %s | %s | |\n' "$(echo "${R[slike_p99_pg]}" | median)" "$(echo "${R[h_p99]}" | median)"
	echo
	echo "3 hosts, stack CPU a like by process (the last round): $H_CPU."
	echo
	echo "| flush into PostgreSQL | tallyctl flush | raw batched UPSERT (64 rows a statement) | ratio |"
	echo "| --- | --- | --- | --- |"
	printf '| counters/s (%s counters, %s increments) | %.0f | %.0f | %s |\n' "$F_COUNTERS" "$F_INCS" \
	    "$F_RATE" "$P_RATE" "$(calc "$F_RATE / $P_RATE")"
} >"$md"
cp "$md" tests/bench/latest/postgres.md
cat "$md"
