#!/bin/bash
# stacks.sh -- what the side-by-side benchmarks share (sourced by cluster.sh
# and postgres.sh): messages, arithmetic, a private RUN_DIR root removed on
# exit with every stack started in it, starting a stack under
# bin/tally-run, a user with 40 posts on it, one wrk run.
#
# Before sourcing: NAME (messages, file names), OUT, DUR, THREADS, CONNS.
# stacks_init TOOL... checks the tools and builds freeport.

say() { printf 'bench-%s: %s\n' "$NAME" "$*"; }
die() { printf 'bench-%s: FAILED: %s\n' "$NAME" "$*" >&2; exit 1; }
calc() { awk "BEGIN { printf \"%.4f\", $1 }"; }
# metric NAME BASE: the sum over handlers of a cost counter of /metrics
metric() {
	curl -fs "$2/metrics" | awk -v m="$1" 'index($1, m "{") == 1 { s += $2 }
	    END { printf "%d", s }'
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

stacks_init() {		# stacks_init TOOL...
	local p
	for p in "$@"; do
		command -v "$p" >/dev/null 2>&1 || die "$p not found (scripts/deps.sh bench)"
	done
	[ -x bin/tally-run ] || die "build tally first (make all)"
	cc -O2 -Wall -Wextra -Werror -o "$OUT/freeport" tests/bench/freeport.c ||
	    die "freeport"
}

RD=$(mktemp -d /tmp/tally-bench-$NAME.XXXXXX)
# searchable by the stacks' own user (handlers/run_user.h): a stack run
# as root gives its processes a user of their own
chmod 711 "$RD"
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

# shellcheck source=tests/bench/cpu.sh
. tests/bench/cpu.sh

wait_url() {		# wait_url URL TRIES: until it answers 2xx, 0.1 s apart
	local i
	for ((i = 0; i < $2; i++)); do
		curl -fs -o /dev/null "$1" && return 0
		sleep 0.1
	done
	return 1
}

# start NAME [VAR=value...] -> sets BASE_<NAME>, PID_<NAME>; the programs
# are bin/'s, or STACK_BIN's (a directory of them: tally-run starts its
# handlers from beside itself)
start() {
	local name=$1 port dir
	shift
	port=$("$OUT/freeport") || die "no free port"
	dir=$RD/$name
	mkdir -p "$dir"
	env PORT="$port" RUN_DIR="$dir" DEMO=0 TALLY_PWHASH=min \
	    TALLY_ADMIN_PASSWORD=admin-pass-1 TALLY_WRITE_RATE=0 \
	    TALLY_LOGIN_RATE=6000000r/m TALLY_RECONCILE_EVERY=0 "$@" \
	    "${STACK_BIN:-bin}/tally-run" >"$dir/run.log" 2>&1 &
	PIDS+=($!)
	printf -v "PID_$name" '%s' "$!"
	wait_url "http://127.0.0.1:$port/healthz" 300 ||
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

seed() {		# seed NAME [AUTHORS]: users, posts; sets SID_, CSRF_, POSTS_ of NAME
	# 40 posts, round robin over AUTHORS authors (1: the liker's own);
	# the liker is user "bench", who writes the first author's share.
	local base b sid csrf posts="" i loc n=${2:-1} k
	local -a sids csrfs
	base=$(eval echo "\$BASE_$1")
	read -r sid csrf <<<"$(signup "$base" bench)" || die "signup on $1"
	[ -n "$sid" ] || die "signup on $1: no session"
	sids[0]=$sid; csrfs[0]=$csrf
	for ((k = 1; k < n; k++)); do
		read -r "sids[$k]" "csrfs[$k]" <<<"$(signup "$base" "author$k")" ||
		    die "signup of author$k on $1"
	done
	for i in $(seq 1 40); do
		k=$(((i - 1) % n))
		loc=$(curl -fs -o /dev/null -w '%{redirect_url}' -b "sid=${sids[$k]}" \
		    --data-urlencode "body=benchmark post $i" --data-urlencode "topic=general" \
		    --data-urlencode "publish=1" --data-urlencode "csrf=${csrfs[$k]}" "$base/posts")
		b=${loc##*/posts/}
		[ -n "$b" ] && posts="$posts${posts:+,}$b"
	done
	printf -v "SID_$1" '%s' "$sid"
	printf -v "CSRF_$1" '%s' "$csrf"
	printf -v "POSTS_$1" '%s' "$posts"
}

wrk_run() {		# wrk_run FILE args... -> sets RPS P99 (ms)
	local f=$OUT/$NAME-wrk-$1.txt
	shift
	timeout $((DUR + 30)) wrk --latency -d"${DUR}s" --timeout 10s \
	    -t"$THREADS" -c"$CONNS" "$@" >"$f" 2>&1 || die "wrk: $(tail -3 "$f")"
	! grep -q 'Non-2xx or 3xx\|Socket errors' "$f" || die "wrk: errors (see $f)"
	RPS=$(awk '/^Requests\/sec:/ { print $2 }' "$f")
	P99=$(awk '$1 == "99%" { v = $2; u = v; sub(/^[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
		m = (u == "us") ? 0.001 : (u == "ms") ? 1 : (u == "s") ? 1000 : 1; printf "%.4f", v * m }' "$f")
	[ -n "$RPS" ] && [ -n "$P99" ] || die "wrk: no result in $f"
}


hello_beside() {	# hello_beside NAME -> sets BASEH_<NAME>, PIDH_<NAME>, PIDHN_<NAME>
	# The 1 KB hello (tests/bench/hello.c, built as $OUT/hello) beside a
	# stack: a second nginx from a copy of the stack's rendered
	# nginx.conf, on a port of its own, with one more location,
	# /__hello; tally and hello are measured through it.
	local name=$1 dir=$RD/$1 n2=$RD/$1/nginx2 port ngx
	ngx=$(command -v nginx || echo /usr/sbin/nginx)
	port=$("$OUT/freeport") || die "no free port"
	mkdir -p "$n2"
	"$OUT/hello" "$dir/hello.sock" 2 >"$dir/hello.log" 2>&1 &
	PIDS+=($!)
	printf -v "PIDH_$name" '%s' "$!"
	for _ in $(seq 1 50); do [ -S "$dir/hello.sock" ] && break; sleep 0.1; done
	{ tests/bench/nginx-user.sh "$dir"
	sed -e "s#listen 127.0.0.1:[0-9]*;#listen 127.0.0.1:$port;#" \
	    -e "s#^pid .*#pid $n2/nginx.pid;#" \
	    -e "s#\([a-z_]*\)_temp_path [^;]*;#\1_temp_path $n2/\1;#" \
	    -e "s#access_log [^;]*;#access_log $n2/access.log;#" \
	    -e "\#include .*/tally-live.conf;#d" \
	    -e "\#include $dir/nginx/tally.conf;#a\\
        location = /__hello {\\
            include $dir/nginx/tally-fastcgi.conf;\\
            fastcgi_pass unix:$dir/hello.sock;\\
        }" "$dir/nginx/nginx.conf"; } >"$n2/nginx.conf"
	grep -q "location = /__hello" "$n2/nginx.conf" &&
	    grep -q "listen 127.0.0.1:$port;" "$n2/nginx.conf" ||
	    die "could not derive a second nginx.conf from $dir/nginx/nginx.conf"
	"$ngx" -q -p "$n2/" -c "$n2/nginx.conf" -e "$n2/error.log" \
	    -g 'daemon off;' &
	PIDS+=($!)
	printf -v "PIDHN_$name" '%s' "$!"
	wait_url "http://127.0.0.1:$port/__hello" 100 ||
	    die "$name: the second nginx or hello does not answer"
	printf -v "BASEH_$name" '%s' "http://127.0.0.1:$port"
}
