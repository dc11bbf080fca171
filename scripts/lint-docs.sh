#!/bin/sh
# lint-docs.sh -- the docs a newcomer reads (make lint, and the lint group
# of make test through tests/lint/layers.sh): README.md at most 12 KB with
# the two commands in its first 40 lines, docs/BENCHMARKS.md a reference
# of at most 30 KB, the interface in the repository (docs/INTERFACE.md),
# and no source citing a document outside it.  Prints what is wrong, one
# reason a line, and exits 1; silent and 0 when all holds.  Run from the
# repository's top.
why=""
[ "$(wc -c <README.md)" -le 12000 ] || why="$why README.md over 12 KB (12,000 bytes);"
head -40 README.md | grep -q '^make run' && head -40 README.md | grep -q '^make test' ||
    why="$why the two commands not in README.md's first 40 lines;"
[ "$(wc -c <docs/BENCHMARKS.md)" -le 30000 ] || why="$why docs/BENCHMARKS.md over 30 KB (30,000 bytes);"
[ -s docs/INTERFACE.md ] || why="$why no docs/INTERFACE.md;"
cites=$(grep -rlE 'CONTRACT|\.\./shared/' shared handlers www nginx-conf scripts tests/unit tests/integration tests/browser tests/lib 2>/dev/null |
    grep -v -e layers.sh -e lint-docs.sh)
[ -z "$cites" ] || why="$why sources cite a document outside the repository: $(echo $cites);"
[ -z "$why" ] && exit 0
echo "$why"
exit 1
