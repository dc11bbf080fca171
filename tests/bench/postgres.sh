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

NAME=pg
# shellcheck source=tests/bench/stacks.sh
. tests/bench/stacks.sh
stacks_init wrk redis-cli curl psql
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
	echo "| flush into PostgreSQL | tallyctl flush | raw batched UPSERT (64 rows a statement) | ratio |"
	echo "| --- | --- | --- | --- |"
	printf '| counters/s (%s counters, %s increments) | %.0f | %.0f | %s |\n' "$F_COUNTERS" "$F_INCS" \
	    "$F_RATE" "$P_RATE" "$(calc "$F_RATE / $P_RATE")"
} >"$md"
cp "$md" tests/bench/latest/postgres.md
cat "$md"
