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
#   6. Redis key names ("{tag}..." literals) are built in shared/store/keys.c
#      only (log messages may name them).
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

my @files;
find(sub { push @files, $File::Find::name if /\.[ch]$/ }, 'shared', 'handlers');
@files = sort @files;

my @faults;
my %graph;			# module -> { module included }
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
	(my $code = $text) =~ s{/\*.*?\*/}{ }gs;
	$code =~ s{//[^\n]*}{}g;
	my $nolit = $code;
	$nolit =~ s{"(?:\\.|[^"\\\n])*"}{""}g;

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
	unless ($f =~ m{^shared/store/keys\.[ch]$}) {
		for my $line (split /\n/, $code) {
			next if $line =~ /\blog_\w+\(/;
			if ($line =~ /("[^"\n]*\{[a-z][a-z0-9%*]*\}[^"\n]*")/) {
				push @faults, "$f: Redis key built outside shared/store/keys.c: $1";
				last;
			}
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

# Cycles: Tarjan's strongly connected components.
my ($index, %idx, %low, @stack, %on) = (0);
sub scc {
	my $v = shift;
	$idx{$v} = $low{$v} = $index++;
	push @stack, $v;
	$on{$v} = 1;
	for my $w (sort keys %{ $graph{$v} // {} }) {
		if (!exists $idx{$w}) {
			scc($w);
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
		push @faults, "include cycle: " . join(' -> ', sort @comp) if @comp > 1;
	}
}
for my $v (sort keys %graph) { scc($v) unless exists $idx{$v} }

if (@faults) {
	print "lint: $_\n" for @faults;
	exit 1;
}
printf "lint: layers ok (%d files, %d modules, no cycle)\n", scalar @files,
    scalar keys %graph;
exit 0;
