package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/shared/report"
)

// sampleConfigs are files check-config and the run must judge alike:
// mistakes of every kind (structure, values the checks' rules refuse, the
// registry's IDs and codes, YAML syntax) and valid files near them.
var sampleConfigs = []struct {
	body  string
	valid bool
}{
	{"", true},
	{"timeout: 2m\n", true},
	{"hostname:\n  expected: web-1.example.org.\n", true},
	{"routes:\n  targets: [192.0.2.1, \"2001:db8::1\"]\n", true},
	{"disk:\n  warn_percent: 95\n  fail_percent: 95\n", true},
	{"probe:\n  timeout: 10s\n", true},
	{"waivers:\n  - {check: time-sync, code: time-sync-clock-unsynced, reason: lab, expires: 2001-01-01}\n", true},
	{"hostname:\n  expected: \"bad_name!\"\n", false},
	{"hostname:\n  expected: -web\n", false},
	{"routes:\n  targets: [not-an-ip]\n", false},
	{"disk:\n  warn_percent: 99\n  fail_percent: 90\n", false},
	{"disk:\n  fail_percent: 80\n", false},
	{"probe:\n  timeout: 2m\n", false},
	{"probe:\n  checks: [fstab, dns]\n", false},
	{"probe:\n  checks: [fstab, fstab]\n", false},
	{"probe:\n  checks: [fstab, hostnam]\n", false},
	{"timout: 5s\n", false},
	{"checks:\n  dsn: {enabled: false}\n", false},
	{"waivers:\n  - {check: time-sync, code: time-sync-unsynced, reason: lab}\n", false},
	{"waivers:\n  - {check: time-sync, code: time-sync-clock-unsynced}\n", false},
	{"a: 1\nb: 2\nc: [1, 2\n", false},
	{"timeout: 1m\n---\ntimeout: 2m\n", false},
}

// TestRunAndCheckConfigAgree feeds each sample to guestcheck, guestcheck
// probe and guestcheck check-config: the three refuse exactly the same
// files (the run exits 3, the probe says "config error", check-config
// exits 3), with the same first message, and accept the rest.
func TestRunAndCheckConfigAgree(t *testing.T) {
	for _, s := range sampleConfigs {
		p := writeConfig(t, s.body)
		var out, errb bytes.Buffer
		ccCode := run([]string{"check-config", p}, &out, &errb, checks.All)
		// The run says the first mistake; notes are check-config's alone.
		var ccFirst string
		for _, l := range strings.Split(errb.String(), "\n") {
			if !strings.Contains(l, ": note: ") {
				ccFirst = l
				break
			}
		}
		out.Reset()
		errb.Reset()
		runCode := run([]string{"--root", t.TempDir(), "--config", p, "--only", "fstab", "--format", "json"}, &out, &errb, checks.All)
		runSaid := errb.String()
		out.Reset()
		run([]string{"probe", "--config", p}, &out, &errb, checks.All)
		probeRefused := strings.Contains(out.String(), "config error")

		ccRefused, runRefused := ccCode == report.ExitUsage, runCode == report.ExitUsage
		if ccRefused != !s.valid || runRefused != ccRefused || probeRefused != ccRefused {
			t.Errorf("%q: check-config exit %d, run exit %d, probe refused %v; want all to refuse: %v", s.body, ccCode, runCode, probeRefused, !s.valid)
		}
		if ccRefused && !strings.Contains(runSaid, ccFirst) {
			t.Errorf("%q: the run said %q, check-config first %q", s.body, runSaid, ccFirst)
		}
		if s.valid && !slices.Contains([]int{report.ExitOK, report.ExitWarn}, ccCode) {
			t.Errorf("%q: check-config exit %d for a valid file", s.body, ccCode)
		}
	}
}

// TestCheckConfigNotes: an expired waiver is a note, not a mistake: exit
// 2 (the run's "warnings"), the file still OK on stdout, and the note on
// stderr names the waiver and its date; one not yet expired says nothing.
func TestCheckConfigNotes(t *testing.T) {
	for _, tc := range []struct {
		expires string
		code    int
		stderr  string
	}{
		{"2001-01-01", report.ExitWarn, ":2: note: waivers[0]: expired on 2001-01-01, so it no longer waives time-sync-clock-unsynced of time-sync"},
		{"2999-01-01", report.ExitOK, ""},
	} {
		p := writeConfig(t, "waivers:\n  - {check: time-sync, code: time-sync-clock-unsynced, reason: lab, expires: "+tc.expires+"}\n")
		var out, errb bytes.Buffer
		code := run([]string{"check-config", p}, &out, &errb, checks.All)
		if code != tc.code || !strings.HasPrefix(out.String(), p+": OK") ||
			(tc.stderr == "") != (errb.Len() == 0) || !strings.Contains(errb.String(), tc.stderr) {
			t.Errorf("expires %s: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.expires, code, out.String(), errb.String(), tc.code, tc.stderr)
		}
	}
}
