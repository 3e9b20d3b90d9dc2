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
	stubPages(t, "") // explain's reference page, as on a machine without the package
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
		{"--output", "/run/r.txt", "--output", "text:/run/../run/r.txt"},
		{"--format", "json", "--output", "/run/r.txt"},
		{"--summary", "--format", "json"},
		{"--summary", "--output", "-"},
		{"--format", "text", "--output", "json:-"},
		{"--output", "-", "--output", "json:-"},
		{"prob"},
		{"nosuch"},
		{"help", "nosuch"},
		{"check-cfg"},
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
		{"explain", "waiver-expired"},
		{"explain", "check-timeout"},
		{"--freeze-test", "/"},
		{"--freeze-test", "data"},
		{"--freeze-test="},
		{"--output", "/run/guestcheck/"},
		{"--output", "json:/run/guestcheck/"},
		{"--root", "/nonexistent"},
		{"--root", "/dev/null"},
		{"--root="},
		{"fleet", "--agent-socket", "/run/a/vm1.qga", "--agent-socket", "/run/b/vm1.qga"},
		{"fleet", "--agent-socket", "/run/a/vm1.qga", "--output", "/run/guestcheck/"},
		{"fleet", "--agent-socket", "/run/a/vm1.qga", "--listen", "localhost"},
		{"fleet", "--agent-socket", "/run/a/vm1.qga", "--output", "/run/f.json", "--output", "json:/run/./f.json"},
		{"fleet", "--agent-socket", "/run/a/vm1.qga", "--output", "-"},
		{"fleet", "--agent-socket", "/run/a/vm1.qga", "--format", "text", "--output", "/run/f.prom"},
		{"freeze-drill"},
		{"freeze-drill", "vm1"},
		{"freeze-drill", "--libvirt", "qemu:///system"},
		{"freeze-drill", "--proxmox"},
		{"freeze-drill", "--proxmox", "--name", "1*"},
		{"freeze-drill", "--name", "vm1"},
		{"freeze-drill", "--agent-socket", "/run/a/vm1.qga", "--agent-socket", "/run/b/vm1.qga"},
		{"freeze-drill", "--agent-socket", "/run/a/vm1.qga", "--deadline", "0s"},
		{"freeze-drill", "--agent-socket", "/run/a/vm1.qga", "--deadline", "soon"},
		{"freeze-drill", "--agent-socket", "/run/a/vm1.qga", "--deadline", "2m", "--vm-timeout", "1m"},
		{"freeze-drill", "--agent-socket", "/run/a/vm1.qga", "--hook-log", "qga.log"},
		{"freeze-drill", "--agent-socket", "/run/a/vm1.qga", "--format", "nagios"},
		{"freeze-drill", "--agent-socket", "/run/a/vm1.qga", "--output", "jsn:/run/r.json"},
		{"freeze-drill", "--agent-socket", "/run/a/vm1.qga", "--format", "text", "--output", "/run/r.json"},
		{"freeze-drill", "--agent-socket", "/run/a/vm1.qga", "--output", "-"},
		{"freeze-drill", "--agent-socket", "/run/a/vm1.qga", "--output", "/run/r.xml", "--output", "junit:/run/./r.xml"},
	}
	var b strings.Builder
	for _, args := range cases {
		var out, errb bytes.Buffer
		full := append([]string{"--root", t.TempDir(), "--config", cfg}, args...)
		if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			full = args // a subcommand comes first
		} else if strings.HasPrefix(args[0], "--root") {
			full = append([]string{"--config", cfg}, args...)
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
	configMessages(t, &b)
	golden(t, "messages.golden", b.String())
}

// configMistakes are configuration files with one mistake each; their
// messages must read the same from guestcheck, guestcheck probe and
// guestcheck check-config.
var configMistakes = []string{
	"timout: 5s\n",
	"checks:\n  dns:\n    timout: 5s\n",
	"checks:\n  dns:\n    timeout: 5\n",
	"timeout: 5sec\n",
	"checks: [dns, routes]\n",
	"checks:\n  dsn: {enabled: false}\n",
	"checks:\n  hostname-etc-missing: {enabled: false}\n",
	"probe:\n  checks: [fstab, hostnam]\n",
	"probe:\n  checks: fstab\n",
	"timeout: 1m\n---\ntimeout: 2m\n",
	"checks:\n\tdns:\n\t\tenabled: false\n",
	"waivers:\n  - {check: time-synk, code: time-sync-clock-unsynced, reason: lab}\n",
	"waivers:\n  - {check: time-sync, code: time-sync-unsynced, reason: lab}\n",
	"waivers:\n  - {check: time-sync, code: time-sync-clock-unsynced}\n",
	// Values the checks' own rules refuse, all found at once (#31).
	"hostname:\n  expected: \"bad_name!\"\nroutes:\n  targets: [not-an-ip]\ndisk:\n  warn_percent: 99\n  fail_percent: 90\nprobe:\n  timeout: 2m\n",
	// An unclosed "[" is told at its own line, in plain words.
	"timeout: 1m\nroutes:\n  targets: [192.0.2.1,\n  default_interface: eth0\n",
	// A typo'd key does not hide the registry's mistakes, and an expired
	// waiver beside mistakes is a note among them.
	"timout: 5s\nchecks:\n  dsn: {enabled: false}\nwaivers:\n  - {check: time-synk, code: time-sync-clock-unsynced, reason: lab}\n  - {check: time-sync, code: time-sync-unsynced, reason: lab}\n  - {check: fstab, code: fstab-absent, reason: lab, expires: 2001-01-01}\n",
}

// configMessages runs each of configMistakes through the three commands
// that read a configuration, with the file's temporary path shown as
// guestcheck.yaml.
func configMessages(t *testing.T, b *strings.Builder) {
	for _, body := range configMistakes {
		p := writeConfig(t, body)
		for _, args := range [][]string{{"--root", t.TempDir(), "--config", p}, {"probe", "--config", p}, {"check-config", p}} {
			var out, errb bytes.Buffer
			code := run(args, &out, &errb, checks.All)
			shown := strings.Join(args, " ")
			if args[0] == "--root" {
				shown = "--config"
			}
			fmt.Fprintf(b, "$ guestcheck %s (%q)\nexit %d\n", strings.ReplaceAll(shown, p, "guestcheck.yaml"), body, code)
			for _, l := range strings.Split(strings.TrimRight(out.String()+errb.String(), "\n"), "\n") {
				fmt.Fprintf(b, "| %s\n", strings.ReplaceAll(l, p, "guestcheck.yaml"))
			}
		}
	}
	missing := filepath.Join(t.TempDir(), "none.yaml")
	for _, args := range [][]string{{"check-config", missing}, {"check-config", "a", "b"}} {
		var out, errb bytes.Buffer
		code := run(args, &out, &errb, checks.All)
		fmt.Fprintf(b, "$ guestcheck %s\nexit %d\n| %s\n", strings.ReplaceAll(strings.Join(args, " "), missing, "none.yaml"), code,
			strings.ReplaceAll(strings.TrimSpace(out.String()+errb.String()), missing, "none.yaml"))
	}
	for _, tc := range []struct{ what, body string }{
		{"valid", "timeout: 2m\nwaivers:\n  - {check: time-sync, code: time-sync-clock-unsynced, reason: lab, expires: 2999-03-01}\n"},
		{"valid, a waiver expired", "timeout: 2m\nwaivers:\n  - {check: time-sync, code: time-sync-clock-unsynced, reason: lab, expires: 2001-03-01}\n"},
	} {
		good := writeConfig(t, tc.body)
		var out, errb bytes.Buffer
		code := run([]string{"check-config", good}, &out, &errb, checks.All)
		fmt.Fprintf(b, "$ guestcheck check-config guestcheck.yaml (%s)\nexit %d\n", tc.what, code)
		for _, l := range strings.Split(strings.TrimSpace(out.String()+errb.String()), "\n") {
			fmt.Fprintf(b, "| %s\n", strings.ReplaceAll(l, good, "guestcheck.yaml"))
		}
	}
}

// TestListFitsConsole: --list of the real checks fits 80 columns, each
// check's ID and title on its first line, the description under them.
func TestListFitsConsole(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"--list"}, &out, &errb, checks.All); code != 0 {
		t.Fatalf("--list: exit %d, %s", code, errb.String())
	}
	for i, l := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		if len(l) > 80 {
			t.Errorf("--list line %d is over 80 columns: %q", i+1, l)
		}
	}
	idw := 0
	for _, c := range checks.All {
		idw = max(idw, len(c.ID))
	}
	for _, c := range checks.All {
		if line := fmt.Sprintf("%-*s  %s\n", idw, c.ID, c.Title); !strings.Contains("\n"+out.String(), "\n"+line) {
			t.Errorf("--list: no line %q", line)
		}
	}
}
