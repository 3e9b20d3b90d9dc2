package main

import (
	"bytes"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	testenv.Golden(t, filepath.Join("testdata", name), got, *update)
}

// TestMessages holds every usage message of guestcheck, whole, to
// testdata/messages.golden: each is one line, in the user's words, with a
// suggestion where a name is close. A change of wording shows up here.
func TestMessages(t *testing.T) {
	cfg := writeConfig(t, "")
	typo := writeConfig(t, "checks:\n  hostnam:\n    enabled: false\n")
	cases := [][]string{
		{"--versoin"},
		{"--formt", "json"},
		{"-x"},
		{"--timeout", "5"},
		{"--timeout=-1s"},
		{"--timeout"},
		{"--list=yes"},
		{"--format", "jsn"},
		{"--color", "sometimes"},
		{"--exit-codes", "nrpe"},
		{"--only", "hostnam"},
		{"--only", "dsn,routes"},
		{"--only", "hostname-etc-missing"},
		{"--skip", "ssh-host-key-missing"},
		{"--only", "ssh", "--skip", "ssh"},
		{"--output", "foo:/run/r.x"},
		{"--output", "jsn:/run/r.json"},
		{"--output", "json:"},
		{"--format", "json", "--format", "text"},
		{"prob"},
		{"help", "nope"},
		{"help", "prob"},
		{"explain"},
		{"explain", "hostname-etc-mising"},
		{"explain", "no-such-thing-at-all"},
		{"completion", "tcsh"},
		{"--list", "--format", "tap"},
		{"--version", "--format", "nagios"},
		{"probe", "--bogus"},
		{"probe", "--timeout", "soon"},
		{"explain", "hostname-etc-missing"},
		{"explain", "fs-freeze"},
	}
	var b strings.Builder
	for _, args := range cases {
		var out, errb bytes.Buffer
		full := append([]string{"--root", t.TempDir(), "--config", cfg}, args...)
		if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			full = args // a subcommand comes first
		}
		code := run(full, &out, &errb, checks.All)
		fmt.Fprintf(&b, "$ guestcheck %s\nexit %d\n", strings.Join(args, " "), code)
		for _, l := range strings.Split(strings.TrimRight(out.String()+errb.String(), "\n"), "\n") {
			fmt.Fprintf(&b, "| %s\n", l)
		}
		if n := strings.Count(strings.TrimRight(errb.String(), "\n"), "\n"); n > 0 {
			t.Errorf("%q: %d lines on stderr, want one", args, n+1)
		}
	}
	// The configuration file's typo names the file and line.
	var out, errb bytes.Buffer
	code := run([]string{"--root", t.TempDir(), "--config", typo}, &out, &errb, checks.All)
	fmt.Fprintf(&b, "$ guestcheck --config guestcheck.yaml (checks: {hostnam: ...})\nexit %d\n| %s\n", code,
		strings.ReplaceAll(strings.TrimSpace(errb.String()), typo, "guestcheck.yaml"))
	golden(t, "messages.golden", b.String())
}
