#!/bin/bash
# rcdata.sh -- the data set of the reconciliation benchmark (run.sh starts
# it in the background, next to the main seeding: both are single-threaded
# SQLite writers and the machine has two cores).
#
#   rcdata.sh USERS POSTS FOLLOWS LIKES
#
# Environment: TALLY_DB (a new database file), TALLY_REDIS (a running
# redis-server of its own), RUN_DIR.
#
# Users, posts (5% drafts) and comments come from tallyctl seed; follows
# and likes from bulk SQL (tallyctl seed draws them one statement at a
# time through an 8 MB page cache: about a minute for 2M rows, where
# INSERT ... SELECT with a large cache takes seconds).  Both are skewed
# like the seed's power law: followee = users * u^4 and liked post =
# posts * u^3 (u uniform in [0, 1)), so a few stars collect most follows
# and likes, while followers and likers are uniform.  A pair drawn twice
# is one row (INSERT OR IGNORE), so the draws are topped up until the
# exact counts are reached.  Then every counter is recounted by the
# catalog's own recount (a tiny second seed): the counters are exact and
# a reconciliation finds no drift.  Prints "<follows> <likes> <counters>".
set -euo pipefail
cd "$(dirname "$0")/../.."
NU=$1 NP=$2 NF=$3 NL=$4
# Our children die with us (run.sh stops this script by its PID).
PD=()
[ -x /usr/bin/setpriv ] && PD=(/usr/bin/setpriv --pdeathsig TERM)
sq() { "${PD[@]}" sqlite3 -cmd '.timeout 10000' "$TALLY_DB" "$@"; }
bulk() {	# SQL: one transaction, a page cache that holds the database
	"${PD[@]}" sqlite3 -cmd '.timeout 10000' -cmd 'PRAGMA cache_size = -1000000' \
	    -cmd 'PRAGMA synchronous = OFF' "$TALLY_DB" "$@"
}
counts() { sq "SELECT (SELECT COUNT(*) FROM follows) || ' ' || (SELECT COUNT(*) FROM likes)"; }

"${PD[@]}" bin/tallyctl seed --users "$NU" --posts "$NP" --follows 0 --likes 0 \
    --comments $((NP / 10)) --seed 11
read -r u0 p0 <<<"$(sq "SELECT MIN(id) || ' ' || (SELECT MIN(id) FROM posts) FROM users")"
NOW=$(($(date +%s) * 1000))
for _ in 1 2 3 4 5 6; do
	read -r f l <<<"$(counts)"
	[ "$f" -lt "$NF" ] || [ "$l" -lt "$NL" ] || break
	# As many draws as rows are missing, inserted sorted (the primary
	# keys are written in order); collisions are topped up next round.
	sql="BEGIN;"
	[ "$f" -ge "$NF" ] || sql="$sql
	CREATE TEMP TABLE df AS
	WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n
	    WHERE x < $((NF - f)))
	SELECT $u0 + abs(random()) % $NU AS a,
	    $u0 + CAST($NU * pow((abs(random()) % 1000000000) / 1e9, 4) AS INTEGER) AS b,
	    $NOW - 86400000 + x AS t FROM n;
	INSERT OR IGNORE INTO follows(follower_id, followee_id, created_at)
	SELECT a, b, t FROM df WHERE a != b ORDER BY a, b;"
	[ "$l" -ge "$NL" ] || sql="$sql
	CREATE TEMP TABLE dl AS
	WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n
	    WHERE x < $((NL - l)))
	SELECT $p0 + CAST($NP * pow((abs(random()) % 1000000000) / 1e9, 3) AS INTEGER) AS p,
	    $u0 + abs(random()) % $NU AS u, $NOW - 86400000 + x AS t FROM n;
	INSERT OR IGNORE INTO likes(post_id, user_id, created_at)
	SELECT p, u, t FROM dl ORDER BY p, u;"
	bulk "$sql
	COMMIT;"
done
read -r f l <<<"$(counts)"
[ "$f" -ge "$NF" ] && [ "$l" -ge "$NL" ] ||
    { echo "rcdata: only $f follows and $l likes" >&2; exit 1; }
# The recount of every counter (and posts.like_count).
"${PD[@]}" bin/tallyctl seed --users 2 --posts 0 --follows 0 --likes 0 --comments 0 \
    --seed 424242
sq "SELECT (SELECT COUNT(*) FROM follows) || ' ' || (SELECT COUNT(*) FROM likes)
    || ' ' || (SELECT COUNT(*) FROM counters)"
