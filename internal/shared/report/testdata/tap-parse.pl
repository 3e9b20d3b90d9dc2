#!/usr/bin/perl
# Reads TAP on stdin with Perl's TAP::Parser (the parser prove uses) and
# prints what it understood as JSON, for formats_test.go to compare with
# the report the TAP was rendered from.
use strict;
use warnings;
use TAP::Parser;
use JSON::PP;

binmode STDIN, ':raw';
my $tap = do { local $/; <STDIN> };
my $p = TAP::Parser->new({ tap => $tap });
my (@tests, $last);
while (my $r = $p->next) {
    if ($r->is_test) {
        $last = {
            number      => $r->number + 0,
            ok          => $r->is_ok ? JSON::PP::true : JSON::PP::false,
            actual_ok   => $r->is_actual_ok ? JSON::PP::true : JSON::PP::false,
            description => $r->description,
            directive   => $r->directive,
            explanation => $r->explanation,
        };
        push @tests, $last;
    } elsif ($r->is_yaml) {
        die "YAML block before any test point\n" unless $last;
        $last->{yaml} = $r->data;
    } elsif ($r->is_unknown) {
        die "line TAP::Parser does not understand: " . $r->as_string . "\n";
    }
}
print JSON::PP->new->canonical->encode({
    version      => $p->version + 0,
    plan         => $p->plan,
    tests_planned => $p->tests_planned,
    passed       => [ map { $_ + 0 } $p->passed ],
    failed       => [ map { $_ + 0 } $p->failed ],
    skipped      => [ map { $_ + 0 } $p->skipped ],
    parse_errors => [ $p->parse_errors ],
    has_problems => $p->has_problems ? JSON::PP::true : JSON::PP::false,
    tests        => \@tests,
}), "\n";
