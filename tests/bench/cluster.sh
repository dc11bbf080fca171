#!/bin/bash
# cluster.sh -- the badge poll and a like on a Redis Cluster, as ratios to
# the same on one Redis, measured in the same run ("make bench" runs it
# after run.sh; "make bench-cluster" alone).
#
# Three stacks under bin/tally-run, each in its own RUN_DIR with a user
# and 40 posts by 8 authors (the user and 7 others): one on the single
# Redis (the default), one on the single Redis with its replica
# (REPLICA=1), one with REDIS_CLUSTER=1 (six nodes: 3 masters, 3
# replicas).  Rounds run them back to back; a ratio is the
# median of the rounds' ratios (cluster over single for req/s; single's
# p99 over the cluster's, so that for both "higher is better").  Goals:
# badge >= 0.8, like >= 0.8, against the single Redis alone.
#
# The replicated single Redis is the like-for-like baseline for durability:
# every master of the cluster has a replica that applies each write again,
# as REPLICA=1's replica does for the one master.  Its ratio is reported
# beside the goal's, not instead of it.
#
# Where a poll's work goes: during the cluster's badge runs, the commands
# each master served (INFO commandstats) are read before and after, and
# each master's share is reported.  A poll is one node's work (the
# user's keys share the slot of the user's counters, and the badges'
# global part has a copy on every master: bcache.h), so the polling
# user's master serves all of it; many users spread over the masters.
#
# Environment: BENCH_DURATION (5 s a run), BENCH_ROUNDS (3), BENCH_CONNS
# (16).  Writes build/bench/cluster.md and copies it to tests/bench/latest/.
set -u
cd "$(dirname "$0")/../.."
DUR=${BENCH_DURATION:-5}
ROUNDS=${BENCH_ROUNDS:-3}
CONNS=${BENCH_CONNS:-16}
THREADS=2
OUT=build/bench
mkdir -p "$OUT" tests/bench/latest

NAME=cluster
# shellcheck source=tests/bench/stacks.sh
. tests/bench/stacks.sh
stacks_init wrk redis-cli curl

# A free base port for six nodes whose bus ports (+10000) are free too.
cluster_base() {
	local b k ok
	for _ in $(seq 1 100); do
		b=$((20000 + RANDOM % 9000)); ok=1
		for k in 0 1 2 3 4 5; do
			(exec 3<>"/dev/tcp/127.0.0.1/$((b + k))") 2>/dev/null && ok=0
			(exec 3<>"/dev/tcp/127.0.0.1/$((b + k + 10000))") 2>/dev/null && ok=0
		done
		[ "$ok" = 1 ] && { echo "$b"; return; }
	done
	die "no free ports for a cluster"
}

masters_calls() {	# "host:port calls" of every master of the cluster stack
	local n auth
	auth=$(cat "$RD/cluster/redis-auth")
	while read -r n; do
		REDISCLI_AUTH=$auth redis-cli -h "${n%:*}" -p "${n##*:}" ROLE 2>/dev/null |
		    head -1 | grep -q master || continue
		printf '%s %s\n' "$n" "$(REDISCLI_AUTH=$auth redis-cli -h "${n%:*}" -p "${n##*:}" \
		    INFO commandstats | awk -F'[=,]' '/^cmdstat_/ { s += $2 } END { print s + 0 }')"
	done <"$RD/cluster/redis-cluster/nodes"
}

say "starting a stack on one Redis and one on a 6-node Redis Cluster"
start single
start replica REPLICA=1
start cluster REDIS_CLUSTER=1 REDIS_CLUSTER_PORT="$(cluster_base)"
# the liked posts are 8 authors' (the liker's own and 7 others'), so the
# likes spread over the masters as a real site's do: a post's counters
# live in its author's bucket (count/cname.h)
seed single 8
seed replica 8
seed cluster 8
declare -A R
for r in $(seq 1 "$ROUNDS"); do
	for s in single replica cluster; do
		base=$(eval echo "\$BASE_$s")
		sid=$(eval echo "\$SID_$s")
		[ "$s" = cluster ] && before=$(masters_calls)
		wrk_run "badges-$s-$r" -H "Cookie: sid=$sid" "$base/badges.json"
		[ "$s" = cluster ] && after=$(masters_calls)
		R[badge_rps_$s]="${R[badge_rps_$s]:-} $RPS"; R[badge_p99_$s]="${R[badge_p99_$s]:-} $P99"
		say "$(printf 'round %d %-8s badges %8.1f req/s p99 %6.2f ms' "$r" "$s" "$RPS" "$P99")"
		ROOTS=$(eval echo "\$PID_$s"); c0=$(tree_cpu)
		SID=$sid CSRF=$(eval echo "\$CSRF_$s") POSTS=$(eval echo "\$POSTS_$s") THREADS=$THREADS \
		    wrk_run "like-$s-$r" -s tests/bench/like.lua "$base"
		R[like_cpu_$s]="${R[like_cpu_$s]:-} $(cpu_diff "$c0" "$(tree_cpu)")"
		R[like_n_$s]=$(( ${R[like_n_$s]:-0} + $(awk '/requests in/ { print $1 }' "$OUT/$NAME-wrk-like-$s-$r.txt") ))
		R[like_rps_$s]="${R[like_rps_$s]:-} $RPS"; R[like_p99_$s]="${R[like_p99_$s]:-} $P99"
		say "$(printf 'round %d %-8s like   %8.1f req/s p99 %6.2f ms' "$r" "$s" "$RPS" "$P99")"
	done
	# ratios of this round
	for k in badge like; do
		rc=$(echo "${R[${k}_rps_cluster]}" | awk '{ print $NF }')
		pc=$(echo "${R[${k}_p99_cluster]}" | awk '{ print $NF }')
		for b in single replica; do
			rs=$(echo "${R[${k}_rps_$b]}" | awk '{ print $NF }')
			ps=$(echo "${R[${k}_p99_$b]}" | awk '{ print $NF }')
			R[${k}_rps_ratio_$b]="${R[${k}_rps_ratio_$b]:-} $(calc "$rc / $rs")"
			R[${k}_p99_ratio_$b]="${R[${k}_p99_ratio_$b]:-} $(calc "$ps / $pc")"
		done
	done
	# the masters' share of the cluster's badge run
	R[share]=$(join <(echo "$before" | sort) <(echo "$after" | sort) 2>/dev/null |
	    awk '{ n[$1] = $3 - $2; t += $3 - $2 } END { for (k in n) printf "%s=%.0f%% ", k, 100 * n[k] / t }')
done

md=$OUT/cluster.md
{
	echo "| measure | one Redis | one Redis + replica | cluster | ratio to one Redis (median of $ROUNDS) | goal | ratio to one Redis + replica |"
	echo "| --- | --- | --- | --- | --- | --- | --- |"
	for k in badge like; do
		for m in rps p99; do
			printf '| %s %s | %s | %s | %s | %s | %s | %s |\n' "$k" \
			    "$([ $m = rps ] && echo req/s || echo p99 ms)" \
			    "$(echo "${R[${k}_${m}_single]}" | median)" \
			    "$(echo "${R[${k}_${m}_replica]}" | median)" \
			    "$(echo "${R[${k}_${m}_cluster]}" | median)" \
			    "$(echo "${R[${k}_${m}_ratio_single]}" | median)" \
			    "$([ $m = rps ] && echo '>= 0.8')" \
			    "$(echo "${R[${k}_${m}_ratio_replica]}" | median)"
		done
	done
	echo
	echo "A like's stack CPU by process (all rounds; wrk excluded):"
	echo
	for s in single replica cluster; do
		echo "* $s: $(echo "${R[like_cpu_$s]}" | per_req "${R[like_n_$s]}")"
	done
	echo
	echo "Commands each master served during the last cluster badge run: ${R[share]}"
	echo "(One user polls: a poll is one node's work, so its master serves all of it.)"
} >"$md"
cp "$md" tests/bench/latest/cluster.md
cat "$md"
for k in badge like; do
	v=$(echo "${R[${k}_rps_ratio_single]}" | median)
	awk "BEGIN { exit !($v >= 0.8) }" || say "goal missed: $k req/s on the cluster at ${v}x one Redis"
done
