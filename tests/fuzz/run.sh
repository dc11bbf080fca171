#!/bin/sh
# run.sh -- builds the libFuzzer targets with clang and runs each for
# FUZZ_SECONDS (default 60) over its corpus in tests/fuzz/corpus/NAME.
# New inputs go to build/fuzz/corpus (not the repo); a crash is saved
# under build/fuzz/ and fails the run: add it to tests/fuzz/corpus/NAME
# as a regression input once fixed.  Output: TAP, one test per target.
set -u
cd "$(dirname "$0")/../.."
secs=${FUZZ_SECONDS:-60}
CC=${FUZZ_CC:-clang-14}
out=build/fuzz
mkdir -p "$out"
flags="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -Ishared"
targets="form cookies html valid rcl"
echo "1..$(echo $targets | wc -w)"
i=0; fail=0
for t in $targets; do
	i=$((i + 1))
	srcs="shared/base/buf.c shared/base/log.c shared/base/kv.c shared/web/html.c shared/base/valid.c shared/base/ucd.c"
	libs=""
	# the cluster client's parsers, with hiredis's reader for the input
	[ "$t" = rcl ] && srcs="shared/base/buf.c shared/base/log.c shared/base/clock.c shared/base/shmfile.c
	    shared/store/rcl_map.c shared/store/rcl_slot.c
	    shared/store/rcl.c shared/store/rconn.c shared/store/rhealth.c
	    shared/store/rcmd.c" && libs=-lhiredis
	if ! $CC $flags -fsanitize=fuzzer -o "$out/fuzz_$t" tests/fuzz/fuzz_$t.c $srcs $libs 2>"$out/$t.build.log"; then
		echo "not ok $i - fuzz_$t (build failed: $out/$t.build.log)"; fail=1; continue
	fi
	mkdir -p "$out/corpus/$t"
	if "$out/fuzz_$t" -max_total_time="$secs" -max_len=65536 -timeout=10 \
	    -artifact_prefix="$out/$t-" "$out/corpus/$t" "tests/fuzz/corpus/$t" \
	    >"$out/$t.log" 2>&1; then
		runs=$(grep -o 'Done [0-9]* runs' "$out/$t.log" | tail -1)
		echo "ok $i - fuzz_$t ($runs in ${secs}s)"
	else
		echo "not ok $i - fuzz_$t (crash: see $out/$t.log)"; fail=1
	fi
done
exit $fail
