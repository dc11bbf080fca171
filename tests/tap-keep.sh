#!/bin/sh
# tap-keep.sh -- runs one test program for prove (the command, then the
# test file), keeps its whole TAP in $TAP_KEEP/<file>.tap and hands prove
# the TAP without its YAML blocks.  prove's YAML reader gives up on
# node's multi-line error blocks ("Badly formed hash line") and then
# stops counting the file's tests; run-all.sh prints the kept failures'
# blocks (the assertion's expected and actual values) instead.
[ -n "${TAP_KEEP:-}" ] || exec "$@"
for last; do :; done
out="$TAP_KEEP/$(basename "$last").tap"
"$@" >"$out"
st=$?
# (a block ends at the "..." indented as its "---"; lines of a multi-line
# value inside are indented deeper)
awk '!yaml && /^ *---$/ { yaml = 1; ind = index($0, "-"); next }
	yaml { if ($0 ~ /^ *\.\.\.$/ && index($0, ".") == ind) yaml = 0; next }
	{ print }' "$out"
exit "$st"
