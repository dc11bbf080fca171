#!/usr/bin/perl
# lint-layers.pl -- the structure "make lint" enforces (core Perl only).
#
#   1. Layers.  shared/ has one folder per layer, lowest first:
#        base store count social web
#      A file in shared/L/ includes project headers only as "K/name.h"
#      with K at or below L; handlers/ (the top) may include any layer.
#   2. Storage.  SQLite, libpq and hiredis (calls, types, headers) appear only
#      in shared/store/; libfcgi only in shared/web/.
#   3. No include cycle among the project's modules (a .c/.h pair).
#   4. No file of shared/ or handlers/ over 500 lines, unless its opening
#      comment says why it is one concept ("One file: ...").
#   5. Every statement of the table (shared/store/sql.h) is used outside
#      the table: no dead SQL.
#   6. Redis key names ("{tag}..." literals) are built in shared/store/key.c
#      only (log messages may name them).
#   7. The web layer keeps no request's state in a file-level variable: a
#      file-scope static that is not const, in shared/web/, must be one of
#      %PROCESS_STATE below (what a process keeps between requests, each
#      with its reason); a request's own state lives in struct req.
#   8. Handlers read a request's fields only through web/field.h (the
#      field table, base/valid.c's kinds): in handlers/, no kv_* call or
#      struct kv, no r->form, r->query, r->args, r->nargs or r->cookies,
#      no QUERY_STRING or REQUEST_URI through req_param(); and a handler
#      file that serves HTTP (it includes a web/ header) calls no
#      validator itself (valid_check, valid_int, valid_utf8): the programs
#      that serve none (tallyctl, tally-run, the worker) check their
#      arguments and environment with them.
#   9. SQL is the statement table's (shared/store/sql.c, sql_pg.c, sql.h):
#      no string literal elsewhere says SELECT, INSERT INTO, UPDATE ... SET,
#      DELETE FROM, CREATE/DROP/ALTER TABLE..., PRAGMA, BEGIN, COMMIT,
#      ROLLBACK, SAVEPOINT or ON CONFLICT (adjacent literals joined first;
#      log messages may name them), but what %SQL_ELSEWHERE allows, each
#      with its reason; and no statement is prepared from text outside the
#      table (dbq_prepare_once(), for tests' own SQL, is not called).
#  10. No call cycle between the files of one folder (each layer of shared/,
#      and handlers/): file A calls file B when A's .c calls a function B's
#      .c defines at file scope, not static and not defined in A too.  A
#      cycle means one concept cut in two by line count (merge them) or a
#      function in the wrong file (move it so calls go one way).  Calls in
#      macro bodies count; a function's address taken without a call does
#      not.
#  11. A module's names carry its name: every function a header of shared/
#      declares (a prototype or a static inline) is the header's name or
#      starts with it and "_" (timeline.h: timeline_*), or, for a header named
#      FAMILY_PART.h, with "FAMILY_" (view_social.h: view_*, rcl_int.h:
#      rcl_*), but the few names %NAME_ELSEWHERE allows, each with its
#      reason.  So a reader who meets a call knows the header to open, and
#      one prefix means one module.
#  12. Storage is opaque above store/: a file outside shared/store/ reaches,
#      through the headers it includes, no store/*_int.h (the store's
#      inside) and no SQLite, libpq or hiredis header; and the store's
#      handles (struct db, rds, pgdb, pgq, dbq) are defined only in a
#      *_int.h or a .c of store/.
# Comments are not code: a comment may name sqlite3_step.
# Usage: scripts/lint-layers.pl [ROOT]   (exit 1 and one line per fault)
use strict;
use warnings;
use File::Find;

my $root = shift // '.';
chdir $root or die "lint-layers: $root: $!\n";
my @layers = qw(base store count social web);
my %rank;
@rank{@layers} = (0 .. $#layers);
my $MAX_LINES = 500;

# shared/web/ file-scope variables that are the process's, not a request's.
my %PROCESS_STATE = (
	# the kept pages, the invalidation connection, a counter (keep.h)
	'shared/web/keep.c' => [qw(slots track nwholes)],
	# the badge poll's answers as JSON, by value (bjson.h)
	'shared/web/bjson.c' => [qw(slots)],
	# what a program prepares for the requests it takes together,
	# set once at start (serve_together()); whether SIGTERM came
	'shared/web/serve.c' => [qw(together_begin together_end stopping)],
	# the pool's listening socket and the peers it answers, set once at
	# start (peer_setup())
	'shared/web/peer.c' => [qw(listen_fd tcp allow)],
);

# Functions a header of shared/ declares without its name as prefix.
my %NAME_ELSEWHERE = (
	# allocation that exits on failure, named as C programs have long
	# named it (OpenBSD, git): one letter, used in every file
	'shared/base/buf.h' => [qw(xmalloc xcalloc xrealloc xstrdup xstrndup)],
);

# The functions a header declares (comments and literals removed):
# prototypes and static inline definitions, not macros, typedefs or
# pointers to functions.
sub declared_functions {
	my $code = shift;
	$code =~ s{^[ \t]*#(?:[^\n]*\\\n)*[^\n]*}{}mg;	# preprocessor lines
	1 while $code =~ s/\{[^{}]*\}/;/g;	# every block, innermost first
	my @names;
	for my $st (split /;/, $code) {
		next if $st =~ /\btypedef\b/ || $st =~ /=/;
		$st =~ s/\s*__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)\s*$//;
		push @names, $1
		    if $st =~ /(?<![(*]\s)(?<![(*])\b([A-Za-z_]\w*)\s*\((?:[^()]|\([^()]*\))*\)\s*$/;
	}
	return @names;
}

# SQL text outside the statement table: the file, and what its literals
# may start with.
my %SQL_ELSEWHERE = (
	# the schema as numbered migrations is the schema itself (schema.h)
	'shared/store/schema.c' => qr/^/,
	'shared/store/schema_pg.c' => qr/^/,
	# and its one step in C, the search's words folded again (refold.h)
	'shared/store/refold.c' => qr/^/,
	# SQLite's transaction control and a connection's pragmas: the engine
	# runs them as they are (a pragma's value is never a parameter), and
	# PostgreSQL prepares no transaction control
	'shared/store/db.c' => qr/^(?:BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|PRAGMA)\b/,
	# a reader's shared read transaction: its control alone
	'shared/store/dbreads.c' => qr/^(?:BEGIN|COMMIT|ROLLBACK)$/,
	# PostgreSQL's: transaction control (a group's savepoints too) and
	# the texts pg_exec() tells apart, a session's settings
	'shared/store/pg.c' => qr/^(?:BEGIN|COMMIT|ROLLBACK|SAVEPOINT|PRAGMA|SET |SELECT pg_)/,
	# the schema's migration: its transaction (a step's savepoint and lock
	# wait), lock and version table
	'shared/store/pg_run.c' => qr/^(?:BEGIN|COMMIT|ROLLBACK|SAVEPOINT|SET LOCAL|CREATE TABLE IF NOT EXISTS tally_schema|DELETE FROM tally_schema|SELECT (?:pg_advisory_xact_lock|coalesce\(max\(version\), 0\) FROM tally_schema))/,
	# the database and its owner made, and the look for them (names
	# are not parameters)
	'shared/store/pg_create.c' => qr/^(?:DO \$\$|CREATE DATABASE|SELECT pg_get_userbyid)/,
);
my $SQL_WORDS = qr/\b(?:SELECT|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|(?:CREATE|DROP|ALTER)\s+(?:TABLE|(?:UNIQUE\s+)?INDEX|VIEW|TRIGGER|DATABASE|ROLE)|PRAGMA|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|ON\s+CONFLICT)\b/;

# The names of the file-scope objects a C text defines as static and not
# const (functions, prototypes and consts are not).
sub static_objects {
	my $code = shift;
	1 while $code =~ s/\{[^{}]*\}//g;	# every block, innermost first
	my @names;
	for my $st (split /;|/, $code) {
		$st =~ s/^\s+//;
		next unless $st =~ /^static\b/ && $st !~ /^static\s+(const|inline)\b/;
		$st =~ s/=.*//s;			# an initializer
		if ($st =~ /\(\s*\*\s*(\w+)\s*\)\s*\(/) {	# a function pointer
			push @names, $1;
		} elsif ($st !~ /\w\s*\(/) {	# not a function
			push @names, $1 if $st =~ /(\w+)\s*(?:\[[^\]]*\]\s*)*$/;
		}
	}
	return @names;
}

# The functions a C text (comments and literals removed) defines at file
# scope: name => 1 when not static, 0 when static.
sub defined_functions {
	my $code = shift;
	$code =~ s{^[ \t]*#(?:[^\n]*\\\n)*[^\n]*}{}mg;	# preprocessor lines
	1 while $code =~ s/\{[^{}]*\}/\x01/g;	# every block, innermost first
	my %defs;
	while ($code =~ /([^;\x01]*)\x01/g) {
		my $decl = $1;
		next if $decl =~ /=/;
		next unless $decl =~ /\b([A-Za-z_]\w*)\s*\((?:[^()]|\([^()]*\))*\)\s*$/;
		my $name = $1;
		next if $name =~ /^(?:if|while|for|switch|sizeof|return)$/;
		$defs{$name} = $decl =~ /\bstatic\b/ ? 0 : 1;
	}
	return %defs;
}

# The names a C text calls: "name(" not preceded by a type (a
# declaration: "int name(", "char *name(").
sub called_names {
	my $code = shift;
	$code =~ s{^[ \t]*#[ \t]*include\b[^\n]*}{}mg;
	my %calls;
	while ($code =~ /\b([A-Za-z_]\w*)\s*\(/g) {
		my ($name, $at) = ($1, $-[0]);
		my $before = substr($code, $at > 80 ? $at - 80 : 0, $at > 80 ? 80 : $at);
		next if $before =~ /\b(?!(?:return|else|case|sizeof|goto|do)\b)[A-Za-z_]\w*(?:\s+\**|\s*\*+)$/ &&
		    $before !~ /^[ \t]*#[ \t]*define[ \t]+\w+[ \t]+$/m;	# a macro's body
		$calls{$name} = 1;
	}
	return keys %calls;
}

# Strongly connected components of a graph (node => { node => 1 }),
# Tarjan's: the components of more than one node, each sorted.
sub cycles {
	my $g = shift;
	my ($index, %idx, %low, @stack, %on, @found) = (0);
	my $visit;
	$visit = sub {
		my $v = shift;
		$idx{$v} = $low{$v} = $index++;
		push @stack, $v;
		$on{$v} = 1;
		for my $w (sort keys %{ $g->{$v} // {} }) {
			if (!exists $idx{$w}) {
				$visit->($w);
				$low{$v} = $low{$w} if $low{$w} < $low{$v};
			} elsif ($on{$w}) {
				$low{$v} = $idx{$w} if $idx{$w} < $low{$v};
			}
		}
		if ($low{$v} == $idx{$v}) {
			my @comp;
			while (1) {
				my $w = pop @stack;
				delete $on{$w};
				push @comp, $w;
				last if $w eq $v;
			}
			push @found, [sort @comp] if @comp > 1;
		}
	};
	for my $v (sort keys %$g) { $visit->($v) unless exists $idx{$v} }
	undef $visit;
	return @found;
}

# One cycle through the first node of a component: the nodes in order,
# the first again at the end (a shortest one, breadth first).
sub one_cycle {
	my ($g, $comp) = @_;
	my %in = map { $_ => 1 } @$comp;
	my $start = $comp->[0];
	my (%from, @queue);
	for my $w (sort keys %{ $g->{$start} }) {
		next unless $in{$w};
		$from{$w} = $start;
		push @queue, $w;
	}
	while (defined(my $v = shift @queue)) {
		for my $w (sort keys %{ $g->{$v} }) {
			next unless $in{$w};
			if ($w eq $start) {
				my @path = ($start);
				for (my $x = $v; $x ne $start; $x = $from{$x}) { unshift @path, $x }
				unshift @path, $start;
				return @path;
			}
			next if exists $from{$w};
			$from{$w} = $v;
			push @queue, $w;
		}
	}
	return @$comp;
}

my @files;
find(sub { push @files, $File::Find::name if /\.[ch]$/ }, 'shared', 'handlers');
@files = sort @files;

my @faults;
my %hinc;			# file -> [project files it includes]
my %sysinc;			# file -> [system headers it includes]
my %graph;			# module -> { module included }
my %cdefs;			# folder -> function -> [files defining it, not static]
my %cdefined;			# file -> { functions it defines, static or not }
my %ccalls;			# file -> [names it calls]
sub module { my $p = shift; $p =~ s/\.[ch]$//; return $p }

for my $f (@files) {
	open my $fh, '<', $f or die "lint-layers: $f: $!\n";
	my $text = do { local $/; <$fh> };
	close $fh;
	my $lines = () = $text =~ /\n/g;
	# One concept a file: past MAX_LINES its opening comment says why
	# it is one ("One file: ...").
	my ($head) = $text =~ m{\A\s*/\*(.*?)\*/}s;
	push @faults, "$f: $lines lines (at most $MAX_LINES unless its header says \"One file:\" and why)"
	    if $lines > $MAX_LINES && !(defined $head && $head =~ /\bOne file:/);

	my ($layer) = $f =~ m{^shared/([^/]+)/};
	if ($f =~ m{^shared/} && !(defined $layer && exists $rank{$layer})) {
		push @faults, "$f: not in a layer folder (@layers)";
		next;
	}
	$graph{module($f)} //= {};
	# Code without comments and string literals, for the storage rules.
	# (one pass, so that a literal's "/*" opens no comment)
	(my $code = $text) =~ s{(/\*.*?\*/|//[^\n]*)|("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')}{defined $1 ? ($1 =~ m{^/\*} ? ' ' : '') : $2}gse;
	my $nolit = $code;
	$nolit =~ s{"(?:\\.|[^"\\\n])*"}{""}g;
	if ($f =~ m{^(.*)/[^/]+\.c$}) {
		my $dir = $1;
		# calls and definitions: code without any literal
		(my $bare = $code) =~ s{("(?:\\.|[^"\\\n])*")|'(?:\\.|[^'\\\n])*'}{defined $1 ? '""' : "''"}ge;
		my %defs = defined_functions($bare);
		$cdefined{$f} = \%defs;
		push @{ $cdefs{$dir}{$_} }, $f for grep { $defs{$_} && $_ ne 'main' } keys %defs;
		$ccalls{$f} = [called_names($bare)];
	}
	unless ($f =~ m{^shared/store/sql(?:_pg)?\.[ch]$}) {
		my $allow = $SQL_ELSEWHERE{$f};
		my ($c, $end, @lits) = ($code, -1);
		$c =~ s{\blog_\w+\s*\((?:"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|[^;"'])*\);}{}g;
		# string literals, adjacent ones joined ("SELECT " "1"); a
		# character literal ('"') is not one
		while ($c =~ /"((?:\\.|[^"\\\n])*)"|'(?:\\.|[^'\\\n])*'/g) {
			my ($lit, $at, $to) = ($1, $-[0], $+[0]);
			next unless defined $lit;
			if (@lits && substr($c, $end, $at - $end) =~ /^\s*$/) {
				$lits[-1] .= $lit;
			} else {
				push @lits, $lit;
			}
			$end = $to;
		}
		for my $lit (@lits) {
			next unless $lit =~ $SQL_WORDS;
			next if defined $allow && $lit =~ $allow;
			push @faults, "$f: SQL outside the statement table (shared/store/sql.c): \"" .
			    (length $lit > 60 ? substr($lit, 0, 60) . '...' : $lit) . '"';
		}
		push @faults, "$f: a statement prepared outside the table: dbq_prepare_once"
		    if $f !~ m{^shared/store/dbq\.[ch]$} && $nolit =~ /\bdbq_prepare_once\b/;
	}
	if ($f =~ m{^shared/\w+/(\w+)\.h$}) {
		my $base = $1;
		my ($family) = $base =~ /^([a-z]+)_/;
		my %ok = map { $_ => 1 } @{ $NAME_ELSEWHERE{$f} // [] };
		for my $name (declared_functions($nolit)) {
			next if $ok{$name} || $name eq $base || $name =~ /^\Q$base\E_/ ||
			    (defined $family && $name =~ /^\Q$family\E_/);
			push @faults, "$f: declares $name(): a name of this header starts with ${base}_" .
			    (defined $family ? " or ${family}_" : '') . " (or name it in %NAME_ELSEWHERE with why)";
		}
	}
	if ($f =~ m{^shared/web/.*\.c$}) {
		(my $bare = $nolit) =~ s{^\s*#[^\n]*}{}mg;
		my %ok = map { $_ => 1 } @{ $PROCESS_STATE{$f} // [] };
		push @faults, "$f: file-level static \"$_\" in the web layer: a request's state goes in struct req (or name it in %PROCESS_STATE with why)"
		    for grep { !$ok{$_} } static_objects($bare);
	}

	$sysinc{$f} = [$code =~ /^\s*#\s*include\s+<([^>]+)>/mg];
	if ($f =~ m{^shared/store/(?!\w+_int\.h$)[^/]+\.h$}) {
		push @faults, "$f: defines struct $1: the store's handles are defined in a *_int.h or .c of store/"
		    while $nolit =~ /\bstruct\s+(db|rds|pgdb|pgq|dbq)\s*\{/g;
	}
	while ($code =~ /^\s*#\s*include\s+"([^"]+)"/mg) {
		my $inc = $1;
		my $target;
		if ($inc =~ m{^([a-z]+)/[a-z_]+\.h$} && exists $rank{$1}) {
			my $k = $1;
			$target = "shared/$inc";
			if (defined $layer && $rank{$k} > $rank{$layer}) {
				push @faults, "$f: includes \"$inc\": $k is above $layer";
			}
		} elsif ($f =~ m{^handlers/} && -e "handlers/$inc") {
			$target = "handlers/$inc";
		} else {
			push @faults, "$f: includes \"$inc\": not LAYER/name.h";
			next;
		}
		push @faults, "$f: includes \"$inc\": no such file" unless -e $target;
		push @{ $hinc{$f} }, $target;
		my ($m, $t) = (module($f), module($target));
		$graph{$m}{$t} = 1 if $m ne $t;
	}

	unless ($f =~ m{^shared/store/}) {
		for my $re (qr/\bsqlite3_?\w*/, qr/\bSQLITE_\w+/, qr/<hiredis/,
		    qr/<libpq/, qr/\bPQ[a-z]\w*/, qr/\bPG(?:conn|result)\b/,
		    qr/\bredis[A-Z]\w*/, qr/\bfreeReplyObject\b/, qr/\bREDIS_REPLY_\w+/) {
			if ($nolit =~ /($re)/) {
				push @faults, "$f: storage outside shared/store/: $1";
				last;
			}
		}
	}
	unless ($f =~ m{^shared/store/key\.[ch]$}) {
		for my $line (split /\n/, $code) {
			next if $line =~ /\blog_\w+\(/;
			if ($line =~ /("[^"\n]*\{[a-z][a-z0-9%*]*\}[^"\n]*")/) {
				push @faults, "$f: Redis key built outside shared/store/key.c: $1";
				last;
			}
		}
	}
	if ($f =~ m{^handlers/}) {
		for my $re (qr/\bkv_\w+\s*\(/, qr/\bstruct\s+kv(?:list)?\b/,
		    qr/->\s*(?:form|query|args|nargs|cookies)\b/,
		    qr/\breq_param\s*\([^;]*"(?:QUERY_STRING|REQUEST_URI)"/) {
			if ($code =~ /($re)/) {
				push @faults, "$f: a request field read raw: $1 (read it with web/field.h)";
				last;
			}
		}
		if ($code =~ m{^\s*#\s*include\s+"web/}m &&
		    $nolit =~ /(\bvalid_(?:check|int|utf8)\s*\()/) {
			push @faults, "$f: a field validated by hand: $1 (web/field.h validates by the field table)";
		}
	}
	unless ($f =~ m{^shared/web/}) {
		if ($nolit =~ /(\bFCGX_\w+|<fcgiapp\.h>)/) {
			push @faults, "$f: FastCGI outside shared/web/: $1";
		}
	}
}

# Statements nobody runs.
{
	my (%used, @names);
	if (open my $fh, '<', 'shared/store/sql.h') {
		local $/;
		@names = grep { $_ ne 'STMT__MAX' } (<$fh> =~ /^\t(STMT_\w+)/mg);
		close $fh;
	}
	for my $f (@files) {
		next if $f =~ m{^shared/store/sql\.[ch]$};
		open my $fh, '<', $f or next;
		my $t = do { local $/; <$fh> };
		close $fh;
		$used{$1} = 1 while $t =~ /\b(STMT_\w+)\b/g;
	}
	push @faults, "shared/store/sql.h: $_ is never used" for grep { !$used{$_} } @names;
}

# Include cycles.
push @faults, "include cycle: " . join(' -> ', @$_) for cycles(\%graph);

# Call cycles between the files of one folder.
{
	my (%calls, %why);		# file -> { file it calls }; "A B" -> names
	for my $f (sort keys %ccalls) {
		my ($dir) = $f =~ m{^(.*)/[^/]+$};
		for my $name (@{ $ccalls{$f} }) {
			next if exists $cdefined{$f}{$name};
			for my $t (@{ $cdefs{$dir}{$name} // [] }) {
				$calls{$f}{$t} = 1;
				push @{ $why{"$f $t"} }, $name;
			}
		}
	}
	for my $comp (cycles(\%calls)) {
		my @path = one_cycle(\%calls, $comp);
		my @edges = map {
			my @n = sort @{ $why{"$path[$_] $path[$_ + 1]"} };
			my $more = @n > 3 ? ', ...' : '';
			"$path[$_] calls $path[$_ + 1] (" . join(', ', @n[0 .. ($#n < 2 ? $#n : 2)]) . "$more)";
		} 0 .. $#path - 1;
		push @faults, "call cycle: " . join(' -> ', @path) . ": " . join('; ', @edges) .
		    (@$comp > @path - 1 ? " (the cycle's files: @$comp)" : '');
	}
}

# Storage is opaque above store/: what a file outside it reaches through
# headers.
for my $f (grep { !m{^shared/store/} } @files) {
	my (%seen, @todo);
	@todo = map { [$_, $_] } @{ $hinc{$f} // [] };
	while (my $t = shift @todo) {
		my ($h, $via) = @$t;
		next if $seen{$h}++ || $h !~ /\.h$/;
		if ($h =~ m{^shared/store/\w+_int\.h$}) {
			push @faults, "$f: reaches the store's inside $h" .
			    ($via ne $h ? " (through $via)" : '');
		}
		if ($h =~ m{^shared/store/}) {
			for my $sys (@{ $sysinc{$h} // [] }) {
				push @faults, "$f: reaches a storage header <$sys> through $h"
				    if $sys =~ m{^(?:sqlite3|hiredis/|libpq|postgresql/)};
			}
		}
		push @todo, map { [$_, $via] } @{ $hinc{$h} // [] };
	}
}

# The module map (the first code block of docs/ARCHITECTURE.md) names every
# module of shared/: a line "  <module>  <what it is>" under its layer.
if (open my $fh, '<', 'docs/ARCHITECTURE.md') {
	my ($in, %mapped) = (0);
	while (my $l = <$fh>) {
		if ($l =~ /^```/) { last if $in; $in = 1; next }
		$mapped{$1} = 1 if $in && $l =~ /^  +(\w+)(\s|$)/;
	}
	close $fh;
	for my $f (sort grep { m{^shared/\w+/\w+\.c$} } @files) {
		my ($m) = $f =~ m{/(\w+)\.c$};
		push @faults, "$f: not in the module map of docs/ARCHITECTURE.md"
		    unless $mapped{$m};
	}
} else {
	push @faults, "docs/ARCHITECTURE.md: missing (the module map)";
}

if (@faults) {
	print "lint: $_\n" for @faults;
	exit 1;
}
printf "lint: layers ok (%d files, %d modules, no include or call cycle)\n", scalar @files,
    scalar keys %graph;
exit 0;
