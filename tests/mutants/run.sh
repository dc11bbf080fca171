#!/usr/bin/env bash
# run.sh -- the mutation check ("make mutants"; not part of "make test").
#
# For each mutant of tests/mutants/mutants.txt (a plausible logic bug,
# written as exact text replacements): copy the working tree into a
# temporary directory, apply the mutant, build it ("make -s all"), run
# the mutant's tests in order until one fails.  KILLED: a test failed (or
# the tests timed out: "KILLED (timeout)"); SURVIVED: every test passed;
# BROKEN: the mutant could not be tried (a replacement's text not found,
# or found more than once, in the current tree; a listed test missing;
# the mutated tree did not build).  One line per mutant, then
#   mutants: K killed, S survived[, B broken]
# and the exit status is non-zero when any survived or broke.
#
# Usage: tests/mutants/run.sh [--check | --list | --baseline]
#   --check     only verify that every replacement applies exactly once to
#               the current tree and that every listed test exists (no build)
#   --list      the mutants, what each breaks, and their tests
#   --baseline  only run the selected mutants' tests on an unmutated copy
# Environment:
#   MUTANTS=a,b          only these mutants
#   MUTANT_JOBS=1|2      mutants tried at once (default 1; at most 2)
#   MUTANT_TIMEOUT=600   seconds for one mutant's tests (build not counted)
#   MUTANT_ALL_TESTS=1   run every listed test even after one failed (shows
#                        which of them catch the mutant; slower)
#   MUTANT_BASELINE=1    first run the selected mutants' tests on an
#                        unmutated copy; stop if any fails there (a red
#                        suite would "kill" every mutant)
#   MUTANT_LOGS=DIR      keep each mutant's build log and test output in DIR
#   MUTANTS_FILE=FILE    another list (default tests/mutants/mutants.txt)
#
# Every copy lives under the system temporary directory and is removed;
# the stacks the integration tests start (bin/tally-run of the copy, on a
# free loopback port) run with TMPDIR inside the copy, and whatever still
# mentions it when the tests end is stopped by its PID.  The tree itself
# is only read.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
list=${MUTANTS_FILE:-$here/mutants.txt}
timeout_s=${MUTANT_TIMEOUT:-600}
jobs_max=${MUTANT_JOBS:-1}
all_tests=${MUTANT_ALL_TESTS:-0}
baseline=${MUTANT_BASELINE:-0}
logs=${MUTANT_LOGS:-}

usage() {
	sed -n '/^# Usage:/,/^# Every copy/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit "${1:-0}"
}

mode=run
case ${1:-} in
"") ;;
--check) mode=check ;;
--list) mode=list ;;
--baseline) mode=baseline baseline=1 ;;
-h|--help) usage 0 ;;
*) echo "run.sh: unknown argument: $1" >&2; usage 2 >&2 ;;
esac
case $jobs_max in 1|2) ;; *) echo "run.sh: MUTANT_JOBS must be 1 or 2" >&2; exit 2 ;; esac
case $timeout_s in ''|*[!0-9]*) echo "run.sh: MUTANT_TIMEOUT must be a number of seconds" >&2; exit 2 ;; esac

# The list's parser and the replacements (perl: in "make test"'s
# dependencies; core perl only).
#   list FILE                -> name TAB tests TAB what, per mutant
#   apply FILE ROOT NAME     -> applies NAME's replacements under ROOT
#   check FILE ROOT NAME     -> the same, nothing written
#   procs DIR                -> PIDs of processes whose command line or
#                               environment names DIR, or that hold a file
#                               under DIR open
PL=$(cat <<'EOF'
use strict;
use warnings;

sub parse {
	my ($file) = @_;
	open(my $f, '<', $file) or die "run.sh: $file: $!\n";
	my (@ms, %seen, $cur, @old, @new);
	my $state = 'top';
	while (my $l = <$f>) {
		chomp $l;
		$l =~ s/\r$//;
		my $where = "$file:$.";
		die "$where: \"$1\" inside a replacement (its >>> lost?)\n"
		    if $state ne 'top' && $l =~ /^(mutant|what|tests|file) /;
		if ($state eq 'old') {
			if ($l eq '===') { $state = 'new'; @new = (); }
			else { push @old, $l; }
			next;
		}
		if ($state eq 'new') {
			if ($l eq '>>>') {
				die "$where: empty text to find\n" unless @old;
				my $o = join('', map { "$_\n" } @old);
				my $n = join('', map { "$_\n" } @new);
				die "$where: the replacement changes nothing\n" if $o eq $n;
				push @{$cur->{subs}}, [$cur->{file}, $o, $n];
				$state = 'top';
			} else { push @new, $l; }
			next;
		}
		next if $l =~ /^\s*(#.*)?$/;
		if ($l =~ /^mutant\s+([A-Za-z0-9_-]+)\s*$/) {
			die "$where: mutant $1 twice\n" if $seen{$1}++;
			$cur = { name => $1, tests => [], subs => [], what => '' };
			push @ms, $cur;
			next;
		}
		die "$where: \"mutant NAME\" expected first\n" unless $cur;
		if ($l =~ /^file\s+(\S+)\s*$/) { $cur->{file} = $1; }
		elsif ($l =~ /^tests\s+(.*\S)\s*$/) { push @{$cur->{tests}}, split(' ', $1); }
		elsif ($l =~ /^what\s+(.*\S)\s*$/) { $cur->{what} = $1; }
		elsif ($l eq '<<<') {
			die "$where: \"file PATH\" expected before <<<\n" unless $cur->{file};
			$state = 'old';
			@old = ();
		} else { die "$where: cannot parse: $l\n"; }
	}
	die "$file: unterminated replacement (<<< ... === ... >>>)\n" if $state ne 'top';
	for my $m (@ms) {
		die "$file: mutant $m->{name}: no replacement\n" unless @{$m->{subs}};
		die "$file: mutant $m->{name}: no tests\n" unless @{$m->{tests}};
	}
	return @ms;
}

sub count {
	my ($hay, $needle) = @_;
	my ($n, $at) = (0, 0);
	while (($at = index($hay, $needle, $at)) >= 0) { $n++; $at += length($needle); }
	return $n;
}

# Applies (or, dry, checks) mutant $m under $root; dies with the reason.
sub apply {
	my ($root, $m, $dry) = @_;
	my (%text, @order);
	for my $s (@{$m->{subs}}) {
		my ($file, $old, $new) = @$s;
		my $path = "$root/$file";
		if (!exists $text{$file}) {
			open(my $f, '<', $path) or die "$file: $!\n";
			local $/;
			$text{$file} = <$f>;
			close $f;
			push @order, $file;
		}
		my $n = count($text{$file}, $old);
		my $first = (split /\n/, $old)[0];
		$first =~ s/^\s+//;
		die "pattern not found in $file: $first\n" if $n == 0;
		die "pattern found $n times in $file: $first\n" if $n > 1;
		my $at = index($text{$file}, $old);
		substr($text{$file}, $at, length($old)) = $new;
	}
	return if $dry;
	for my $file (@order) {
		my $path = "$root/$file";
		open(my $f, '>', "$path.mutant") or die "$file: $!\n";
		print $f $text{$file};
		close($f) or die "$file: $!\n";
		my $mode = (stat $path)[2] & 07777;
		chmod $mode, "$path.mutant";
		rename("$path.mutant", $path) or die "$file: $!\n";
	}
}

sub procs {
	my ($dir) = @_;
	my $me = $$;
	my $parent = getppid();
	my $under = sub { my $t = shift; defined $t && ($t eq $dir || index($t, "$dir/") == 0) };
	opendir(my $d, '/proc') or return;
	for my $pid (grep { /^\d+$/ } readdir $d) {
		next if $pid == $me || $pid == $parent;
		my $hit = 0;
		for my $what ('cmdline', 'environ') {
			if (open(my $f, '<', "/proc/$pid/$what")) {
				local $/;
				my $t = <$f>;
				$hit = 1 if defined $t && index($t, $dir) >= 0;
			}
			last if $hit;
		}
		if (!$hit && opendir(my $fd, "/proc/$pid/fd")) {
			for my $n (readdir $fd) {
				next if $n =~ /^\./;
				if ($under->(readlink("/proc/$pid/fd/$n"))) { $hit = 1; last; }
			}
		}
		print "$pid\n" if $hit;
	}
}

my ($cmd, @a) = @ARGV;
$cmd //= '';
if ($cmd eq 'procs') { procs($a[0]); exit 0; }
my @ms = eval { parse($a[0]) };
if ($@) { print STDERR $@; exit 2; }
if ($cmd eq 'list') {
	print join("\t", $_->{name}, join(' ', @{$_->{tests}}), $_->{what}), "\n" for @ms;
	exit 0;
}
if ($cmd eq 'apply' || $cmd eq 'check') {
	my ($m) = grep { $_->{name} eq $a[2] } @ms;
	if (!$m) { print STDERR "no mutant $a[2]\n"; exit 2; }
	eval { apply($a[1], $m, $cmd eq 'check') };
	if ($@) { print $@; exit 3; }
	exit 0;
}
print STDERR "run.sh helper: unknown command $cmd\n";
exit 2;
EOF
)

helper() { perl -e "$PL" "$@"; }

# ---- the list, and the selection ----------------------------------------

mlist=$(helper list "$list") || exit 2
declare -A tests_of what_of
names=()
while IFS=$'\t' read -r n t w; do
	names+=("$n")
	tests_of[$n]=$t
	what_of[$n]=$w
done <<<"$mlist"

selected=()
if [ -n "${MUTANTS:-}" ]; then
	IFS=, read -r -a want <<<"$MUTANTS"
	for n in "${want[@]}"; do
		[ -n "$n" ] || continue
		if [ -z "${tests_of[$n]+x}" ]; then
			echo "run.sh: no mutant \"$n\" in $list (have: ${names[*]})" >&2
			exit 2
		fi
		selected+=("$n")
	done
else
	selected=("${names[@]}")
fi
[ "${#selected[@]}" -gt 0 ] || { echo "run.sh: no mutant selected" >&2; exit 2; }

if [ "$mode" = list ]; then
	for n in "${selected[@]}"; do
		printf '%s\n    %s\n    tests: %s\n' "$n" "${what_of[$n]}" "${tests_of[$n]}"
	done
	exit 0
fi

# A listed test that does not exist: integration files by path, unit
# programs by their source.
test_missing() {
	case $1 in
	build/unit/*) [ -f "$root/tests/unit/${1#build/unit/}.c" ] || echo "$1" ;;
	cluster:*) [ -f "$root/${1#cluster:}" ] || echo "$1" ;;
	*) [ -f "$root/$1" ] || echo "$1" ;;
	esac
}

if [ "$mode" = check ]; then
	bad=0
	for n in "${selected[@]}"; do
		why=$(helper check "$list" "$root" "$n")
		for t in ${tests_of[$n]}; do
			m=$(test_missing "$t")
			[ -z "$m" ] || why="${why:+$why; }test file missing: $m"
		done
		if [ -z "$why" ]; then
			printf '%-28s ok\n' "$n"
		else
			printf '%-28s BROKEN (%s)\n' "$n" "$why"
			bad=$((bad + 1))
		fi
	done
	echo "mutants --check: $(( ${#selected[@]} - bad )) ok, $bad broken"
	[ "$bad" -eq 0 ]
	exit
fi

# ---- running -------------------------------------------------------------

tmp_base=${TMPDIR:-/tmp}
results=$(mktemp -d "$tmp_base/tally-mutants.XXXXXX") || exit 2
[ -z "$logs" ] || mkdir -p "$logs" || exit 2

# Copies the working tree (tracked and untracked-but-not-ignored files as
# they are on disk now) to $1, with tests/node_modules linked.
copy_tree() {
	local dst=$1
	mkdir -p "$dst" || return 1
	if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$root" && git ls-files -z -co --exclude-standard |
			while IFS= read -r -d '' f; do
				[ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
			done | tar --null -T - -cf -) | tar -xf - -C "$dst" || return 1
	else
		(cd "$root" && tar --exclude=./build --exclude=./bin --exclude=./run \
			--exclude=node_modules -cf - .) | tar -xf - -C "$dst" || return 1
	fi
	if [ -d "$root/tests/node_modules" ] && [ ! -e "$dst/tests/node_modules" ]; then
		ln -s "$root/tests/node_modules" "$dst/tests/node_modules" || return 1
	fi
}

# Stops (TERM, then KILL) every process that mentions directory $1: what
# a mutant's tests started and left behind.
sweep() {
	local dir=$1 pids i
	pids=$(helper procs "$dir")
	[ -n "$pids" ] || return 0
	echo "  (stopping processes left under $dir: $(echo $pids))" >&2
	kill -TERM $pids 2>/dev/null
	for i in 1 2 3 4 5 6 7 8 9 10; do
		pids=$(helper procs "$dir")
		[ -n "$pids" ] || return 0
		sleep 1
	done
	kill -KILL $pids 2>/dev/null
	return 0
}

# The first few "not ok" lines of a TAP file, on one line.
first_failures() {
	grep -E '^ *not ok' "$1" 2>/dev/null | sed 's/^ *//' | head -3 | paste -sd';' - | cut -c1-240
}

# Runs the tests "$2..." in the built tree $1 with TMPDIR $w/tmp, until
# one fails (or all, with MUTANT_ALL_TESTS=1).  Sets outcome (pass, fail,
# timeout) and detail.
child=
run_tests() {
	local src=$1; shift
	local deadline=$(( $(date +%s) + timeout_s )) t left rc out why
	outcome=pass
	detail=
	for t in "$@"; do
		left=$(( deadline - $(date +%s) ))
		if [ "$left" -le 0 ]; then
			outcome=timeout
			detail="${detail:+$detail; }no time left for $t"
			break
		fi
		out="$w/out/$(basename "$t").out"
		case $t in
		build/unit/*)
			(cd "$src" && make -s "$t" >"$out" 2>&1 &&
			 CMOCKA_MESSAGE_OUTPUT=TAP TMPDIR="$w/tmp" \
			 exec timeout -k 10 "$left" "./$t") >>"$out" 2>&1 &
			;;
		cluster:*)	# the file again on a Redis Cluster of six nodes
			(cd "$src" && TMPDIR="$w/tmp" TALLY_TEST_CLUSTER=1 \
			 exec timeout -k 30 "$left" node --test \
			 --test-reporter=tap --test-concurrency=1 "${t#cluster:}") \
			 >"$out" 2>&1 &
			;;
		*)
			(cd "$src" && TMPDIR="$w/tmp" exec timeout -k 30 "$left" \
			 node --test --test-reporter=tap --test-concurrency=1 "$t") \
			 >"$out" 2>&1 &
			;;
		esac
		child=$!
		wait "$child"
		rc=$?
		child=
		sweep "$w/tmp"
		[ -z "$logs" ] || cp "$out" "$logs/$name.$(basename "$t").out" 2>/dev/null
		[ "$rc" -eq 0 ] && continue
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			outcome=timeout
			detail="${detail:+$detail; }$t timed out"
			break
		fi
		outcome=fail
		why=$(first_failures "$out")
		[ -n "$why" ] || why="exit $rc: $(tail -n 2 "$out" | paste -sd' ' - | cut -c1-200)"
		detail="${detail:+$detail; }$t: $why"
		[ "$all_tests" = 1 ] || break
	done
}

# One mutant: prints its line and leaves "STATUS name" in $results/name.
try_mutant() {
	name=$1
	local src status why t m started=$(date +%s)
	w=$(mktemp -d "$tmp_base/tally-mutant-$name.XXXXXX") || {
		echo "BROKEN $name" >"$results/$name"; return; }
	# the stack's own user (run as root: run_user.h) reaches the copy
	chmod 755 "$w"
	mkdir -p "$w/tmp" "$w/out"
	src=$w/src
	trap '[ -z "$child" ] || kill -TERM "$child" 2>/dev/null; wait 2>/dev/null;
	      sweep "$w/tmp"; rm -rf "$w"; exit 130' TERM INT
	why=
	for t in ${tests_of[$name]}; do
		m=$(test_missing "$t")
		[ -z "$m" ] || why="${why:+$why; }test file missing: $m"
	done
	if [ -n "$why" ]; then
		status=BROKEN
	elif ! copy_tree "$src"; then
		status=BROKEN why="copying the tree failed"
	elif ! why=$(helper apply "$list" "$src" "$name"); then
		status=BROKEN
	elif ! (cd "$src" && timeout -k 10 "$timeout_s" make -s -j2 all) >"$w/out/build.log" 2>&1; then
		status=BROKEN
		why="build failed: $(grep -m1 -E 'error|Error' "$w/out/build.log" | cut -c1-200)"
		[ -z "$logs" ] || cp "$w/out/build.log" "$logs/$name.build.log"
	else
		run_tests "$src" ${tests_of[$name]}
		case $outcome in
		pass) status=SURVIVED why="all passed: ${tests_of[$name]}" ;;
		timeout) status="KILLED (timeout)" why=$detail ;;
		fail) status=KILLED why=$detail ;;
		esac
	fi
	printf '%-18s %-28s %4ss  %s\n' "$status" "$name" "$(( $(date +%s) - started ))" "$why"
	echo "${status%% *} $name" >"$results/$name"
	sweep "$w/tmp"
	rm -rf "$w"
	trap - TERM INT
}

cleanup() {
	local p
	for p in $(jobs -p); do kill -TERM "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ -n "${w:-}" ]; then sweep "$w/tmp"; rm -rf "$w"; fi
	rm -rf "$results"
	exit 130
}
trap cleanup INT TERM

if [ "$baseline" = 1 ]; then
	# Every selected mutant's tests, once, on the unmutated tree.
	declare -A seen_t
	base_tests=()
	for n in "${selected[@]}"; do
		for t in ${tests_of[$n]}; do
			[ -n "${seen_t[$t]+x}" ] || { seen_t[$t]=1; base_tests+=("$t"); }
		done
	done
	name=baseline
	w=$(mktemp -d "$tmp_base/tally-mutant-baseline.XXXXXX") || exit 2
	chmod 755 "$w"
	mkdir -p "$w/tmp" "$w/out"
	echo "baseline: the unmutated tree, ${#base_tests[@]} test files"
	if ! copy_tree "$w/src" || ! (cd "$w/src" && make -s -j2 all) >"$w/out/build.log" 2>&1; then
		echo "baseline: the unmutated tree does not build"; tail -n 5 "$w/out/build.log"
		rm -rf "$w" "$results"; exit 1
	fi
	saved_timeout=$timeout_s
	timeout_s=$(( timeout_s * ${#base_tests[@]} ))
	all_tests=1 run_tests "$w/src" "${base_tests[@]}"
	timeout_s=$saved_timeout
	sweep "$w/tmp"
	rm -rf "$w"
	if [ "$outcome" != pass ]; then
		echo "baseline: FAILED without any mutant: $detail"
		rm -rf "$results"; exit 1
	fi
	echo "baseline: all passed"
	if [ "$mode" = baseline ]; then rm -rf "$results"; exit 0; fi
fi

for n in "${selected[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
		wait -n 2>/dev/null || true
	done
	try_mutant "$n" &
done
wait

killed=0 survived=0 broken=0
for n in "${selected[@]}"; do
	read -r st _ <"$results/$n" 2>/dev/null || st=BROKEN
	case $st in
	KILLED) killed=$((killed + 1)) ;;
	SURVIVED) survived=$((survived + 1)) ;;
	*) broken=$((broken + 1)) ;;
	esac
done
rm -rf "$results"
echo
if [ "$broken" -gt 0 ]; then
	echo "mutants: $killed killed, $survived survived, $broken broken"
else
	echo "mutants: $killed killed, $survived survived"
fi
[ "$survived" -eq 0 ] && [ "$broken" -eq 0 ]
