#!/bin/sh
# layers.sh -- "make lint" fails on every structural fault it promises to
# catch (scripts/lint-layers.pl), and passes on the tree.  Each fault is
# planted alone in a copy of shared/, handlers/, scripts/, docs/ and the
# Makefile;
# the copy's "make lint-quick" (make lint without clang's analyzer, which
# no planted fault needs) must fail naming it.  TAP.
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0; bad=0

fresh() {
	rm -rf "$tmp/t"
	mkdir -p "$tmp/t"
	cp -R "$root/shared" "$root/handlers" "$root/scripts" "$root/docs" "$root/Makefile" "$root/README.md" "$tmp/t/"
}

# expect_fail NAME PATTERN: the copy's make lint-quick fails and says PATTERN.
expect_fail() {
	n=$((n + 1))
	if out=$(make -s -C "$tmp/t" lint-quick 2>&1); then
		echo "not ok $n - $1: make lint passed"; bad=1
	elif printf '%s\n' "$out" | grep -q -- "$2"; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1: no \"$2\" in:"; printf '%s\n' "$out" | sed 's/^/# /'
		bad=1
	fi
}

# before LINE FILE: inserts LINE before the first #include of FILE.
before() {
	awk -v l="$1" '!done && /^#include/ { print l; done = 1 } { print }' \
	    "$tmp/t/$2" >"$tmp/x" && mv "$tmp/x" "$tmp/t/$2"
}

echo "1..35"
fresh
n=$((n + 1))
# The structural checker passes on the untouched copy ("make lint-quick",
# cppcheck too, runs on the tree itself before "make test" runs this, and
# CI runs scan-build after it: running them again here cost a minute and
# a half).
if out=$(cd "$tmp/t" && perl scripts/lint-layers.pl . 2>&1); then echo "ok $n - the tree passes"
else echo "not ok $n - the tree fails:"; printf '%s\n' "$out" | sed 's/^/# /'; bad=1; fi

fresh; before '#include "web/html.h"' shared/base/buf.c
expect_fail "an include from a higher layer (base -> web)" 'web is above base'

fresh; before '#include "social/post.h"' shared/store/db.c
expect_fail "an include from a higher layer (store -> social)" 'social is above store'

fresh; before '#include "post.h"' shared/social/follow.c
expect_fail "an include without its layer folder" 'not LAYER/name.h'

fresh; printf 'static int x(void *s) { return sqlite3_step(s); }\n' >>"$tmp/t/shared/social/post.c"
expect_fail "a SQLite call outside the store layer" 'storage outside shared/store/: sqlite3_step'

fresh; printf 'static void *y(void *c) { return redisCommand(c, "PING"); }\n' >>"$tmp/t/handlers/admin_pages.c"
expect_fail "a hiredis call in a handler" 'storage outside shared/store/: redisCommand'
fresh; printf 'static int z(void *c) { return PQstatus(c); }\n' >>"$tmp/t/shared/count/flush.c"
expect_fail "a libpq call in the counting engine" 'storage outside shared/store/: PQstatus'

fresh; before '#include <sqlite3.h>' shared/count/lb.c
expect_fail "the SQLite header outside the store layer" 'storage outside shared/store/'

fresh; printf 'static int z(void *r) { return FCGX_GetError(r); }\n' >>"$tmp/t/shared/count/flush.c"
expect_fail "libfcgi outside the web layer" 'FastCGI outside shared/web/'

fresh; before '#include "social/follow.h"' shared/social/post.h
before '#include "social/post.h"' shared/social/follow.h
expect_fail "an include cycle inside a layer" 'include cycle: shared/social/follow -> shared/social/post'

# Files of one folder that call each other in a circle: one concept cut
# in two, or a function in the wrong file.  A call in a comment or a
# string is none.
fresh; printf '\n/* rcl_cmd(cl, ...) */\nstatic redisReply *\nping(struct rcl *cl)\n{\n\treturn rcl_cmd(cl, 1, (const char *[]){ "PING" }, NULL);\n}\n' >>"$tmp/t/shared/store/rcl_map.c"
expect_fail "a call cycle between two files (rcl_map.c -> rcl.c)" 'call cycle: shared/store/rcl.c -> shared/store/rcl_map.c -> shared/store/rcl.c'
fresh
printf '\nint\npost_planted(int n)\n{\n\treturn n > 0 ? follow_planted(n - 1) : 0;\n}\n' >>"$tmp/t/shared/social/post.c"
printf '\nint\nfollow_planted(int n)\n{\n\treturn n > 0 ? timeline_planted(n - 1) : 0;\n}\n' >>"$tmp/t/shared/social/follow.c"
printf '\nint\ntimeline_planted(int n)\n{\n\treturn n > 0 ? post_planted(n - 1) : 0;\n}\n' >>"$tmp/t/shared/social/timeline.c"
expect_fail "a call cycle through three files" 'call cycle: shared/social/follow.c -> shared/social/timeline.c -> shared/social/post.c -> shared/social/follow.c'

fresh; awk '{ print } END { for (i = 0; i < 600; i++) print "/* padding */" }' \
    "$root/shared/base/log.c" >"$tmp/t/shared/base/log.c"
expect_fail "a file over 500 lines" 'shared/base/log.c: [0-9]* lines'

fresh; sed 's/^\tSTMT_PING,$/\tSTMT_PING,\n\tSTMT_NOBODY_RUNS,/' "$root/shared/store/sql.h" >"$tmp/t/shared/store/sql.h"
expect_fail "a statement nobody runs" 'STMT_NOBODY_RUNS is never used'

fresh; printf '/* orphan.c -- a module nobody mapped. */\nint orphan_x;\n' >"$tmp/t/shared/base/orphan.c"
expect_fail "a module missing from the module map" 'shared/base/orphan.c: not in the module map'

# A module's names carry its name: a header declares only names of its
# own prefix (a prototype or a static inline); a family's header may use
# the family's (view_social.h: view_*), and no other module's.
fresh; sed 's/^#endif/int\tcstore_planted(int);\n#endif/' "$root/shared/count/cname.h" >"$tmp/t/shared/count/cname.h"
expect_fail "a header declaring another module's name" 'shared/count/cname.h: declares cstore_planted()'
fresh; sed 's/^#endif/static inline int\nfeed_planted(int n)\n{\n\treturn n;\n}\n#endif/' "$root/shared/web/view_social.h" >"$tmp/t/shared/web/view_social.h"
expect_fail "a static inline without its header's prefix" 'shared/web/view_social.h: declares feed_planted()'

# Storage is opaque above store/: no SQLite, libpq or hiredis header and
# no store/*_int.h is reached from outside it, through any header; the
# store's handles are defined only inside.
fresh; sed 's/^#include <stddef.h>$/#include <stddef.h>\n#include <hiredis\/hiredis.h>/' "$root/shared/store/rds.h" >"$tmp/t/shared/store/rds.h"
expect_fail "a storage header reached through a store header" 'reaches a storage header <hiredis/hiredis.h> through shared/store/rds.h'
fresh; before '#include "store/db_int.h"' shared/social/seed.c
expect_fail "the store's inside included above it" "shared/social/seed.c: reaches the store's inside shared/store/db_int.h"
fresh; sed 's/^struct db;$/struct db { int planted; };/' "$root/shared/store/db.h" >"$tmp/t/shared/store/db.h"
expect_fail "a store handle defined in a public header" 'shared/store/db.h: defines struct db'

fresh; printf 'static const char *k = "{lb}:secret";\n' >>"$tmp/t/shared/count/lb.c"
expect_fail "a Redis key built outside the key module" 'Redis key built outside shared/store/key.c'

# SQL is the statement table's (shared/store/sql.c): a literal split in
# two is one text; the store's own exceptions are only what they say.
fresh; printf 'static const char *q = "SELECT id FROM posts "\n    "WHERE user_id = ?1";\n' >>"$tmp/t/shared/social/post.c"
expect_fail "SQL text outside the statement table" 'shared/social/post.c: SQL outside the statement table.*SELECT id FROM posts WHERE'
fresh; printf 'static const char *q = "UPDATE posts "\n    "SET body = ?2 WHERE id = ?1";\n' >>"$tmp/t/handlers/admin_pages.c"
expect_fail "SQL split over two literals in a handler" 'handlers/admin_pages.c: SQL outside the statement table.*UPDATE posts SET'
fresh; printf 'static const char *q = "DELETE FROM sessions WHERE user_id = ?1";\n' >>"$tmp/t/shared/store/db.c"
expect_fail "a statement of the program among the engine's own (db.c)" 'shared/store/db.c: SQL outside the statement table.*DELETE FROM sessions'
fresh; printf 'static void *w(void *d, const char *q) { return dbq_prepare_once(d, q); }\n' >>"$tmp/t/shared/count/recount.c"
expect_fail "a statement prepared from text outside the table" 'shared/count/recount.c: a statement prepared outside the table'

fresh; head -c 31000 /dev/zero | tr '\0' x >>"$tmp/t/docs/BENCHMARKS.md"
expect_fail "docs/BENCHMARKS.md grown past its bound (make lint, not only make test)" 'docs/BENCHMARKS.md over 30 KB'

fresh; printf 'static int last_status;\nstatic struct req *current = NULL;\n' >>"$tmp/t/shared/web/resp.c"
expect_fail "a request's state in a file-level static of the web layer" 'shared/web/resp.c: file-level static "last_status"'
fresh; printf 'static void (*hook)(struct req *);\n' >>"$tmp/t/shared/web/keep.c"
expect_fail "a function pointer kept in a web file" 'shared/web/keep.c: file-level static "hook"'

# Handlers read request fields through web/field.h only (the field table).
fresh; printf 'static const char *q(struct req *r) { const struct kv *k = kv_get(&r->query, "q"); return k ? k->val : 0; }\n' >>"$tmp/t/handlers/find_pages.c"
expect_fail "a query field read raw in a handler" 'handlers/find_pages.c: a request field read raw: kv_get'
fresh; printf 'static const char *a(struct req *r) { return r->args[0]; }\n' >>"$tmp/t/handlers/profile_pages.c"
expect_fail "a path argument read raw in a handler" 'handlers/profile_pages.c: a request field read raw: ->args'
fresh; printf 'static int v(struct req *r) { return valid_check(VALID_LOGIN, r->path, 3, 0); }\n' >>"$tmp/t/handlers/web.c"
expect_fail "a field validated by hand in a handler" 'handlers/web.c: a field validated by hand: valid_check'

# Every page a handler declares (web/page.h) has its render tested with a
# fixed model: the render of each "struct page ... = { size, load, render,
# done }" is called in a unit test.  A page whose render is NULL answers
# in its load, always (/badges/live hands its stream to nginx): nothing
# to render.
n=$((n + 1))
renders=$(perl -0777 -ne 'while (/struct page\s+\w+\s*=\s*\{\s*[^,]+,\s*\w+,\s*(\w+),/g) { print "$1\n" }' handlers/*.c | grep -vx NULL | sort -u)
missing=""
for f in $renders; do
	grep -q "\b$f(" tests/unit/test-*.c || missing="$missing $f"
done
if [ -z "$renders" ]; then echo "not ok $n - no page found in handlers/"; bad=1
elif [ -z "$missing" ]; then echo "ok $n - every page's render ($(echo $renders | wc -w)) is unit-tested with a fixed model"
else echo "not ok $n - page renders no unit test calls:$missing"; bad=1; fi

# The programs that serve no HTTP hold no web-layer code (built by make).
n=$((n + 1))
syms=$(for p in bin/tally-worker bin/tallyctl bin/tally-run; do
	nm "$p" | awk -v p="$p" '$2 ~ /^[TtUu]$/ && $NF ~ /^(route_|resp_|layout_|layout_begin|layout_end|serve_|req_|field_|FCGX_)/ { print p ": " $NF }'
done)
if [ ! -x bin/tally-worker ]; then echo "not ok $n - bin/ not built"; bad=1
elif [ -z "$syms" ]; then echo "ok $n - worker, tallyctl and tally-run link no routing, response, layout or FastCGI symbol"
else echo "not ok $n - web symbols in programs that serve no HTTP:"; printf '%s\n' "$syms" | sed 's/^/# /'; bad=1; fi

# Every mutant of "make mutants" still applies to the tree (a refactor
# that moves the code it mutates must move the mutant too).
n=$((n + 1))
if out=$(tests/mutants/run.sh --check 2>&1); then echo "ok $n - every mutant of make mutants applies to the tree"
else echo "not ok $n - mutants that no longer apply:"; printf '%s\n' "$out" | grep -v ' ok$' | sed 's/^/# /'; bad=1; fi
# The docs a newcomer reads (scripts/lint-docs.sh, which make lint runs
# too): README.md's size and its two commands, docs/BENCHMARKS.md's size,
# docs/INTERFACE.md, no source citing a document outside the repository.
n=$((n + 1))
if why=$(scripts/lint-docs.sh); then echo "ok $n - README.md, docs/BENCHMARKS.md and docs/INTERFACE.md are what a newcomer reads"
else echo "not ok $n -$why"; bad=1; fi
exit $bad
