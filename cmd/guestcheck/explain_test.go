package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/docs"
	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestExplainEveryCode runs `guestcheck explain CODE` on every code a
// report can carry: each registered check's codes and the runner's own
// (runner.Codes). Each answers, exit 0, with the code, who reports
// it, its meaning, its fix and its reference page, in prose, with the
// fix's placeholders as metavariables and no stub.
func TestExplainEveryCode(t *testing.T) {
	stubPages(t, docs.InstalledDir)
	codes := codeNames(checks.All)
	for _, code := range runner.IDs(runner.Codes) {
		if !slices.Contains(codes, code) {
			t.Errorf("completion of explain does not offer the runner's %s", code)
		}
	}
	for _, code := range codes {
		var out, errb bytes.Buffer
		if exit := run([]string{"explain", code}, &out, &errb, checks.All); exit != 0 || errb.Len() != 0 {
			t.Errorf("explain %s: exit %d: %s", code, exit, errb.String())
			continue
		}
		text := out.String()
		head, _, _ := strings.Cut(text, "\n")
		who := "(check "
		if slices.Contains(runner.IDs(runner.Codes), code) {
			who = "(reported by guestcheck itself on any check, "
		}
		if !strings.HasPrefix(head, code+" "+who) || !strings.Contains(text, "\nReference: /usr/share/doc/guestcheck/checks/") {
			t.Errorf("explain %s:\n%s", code, text)
		}
		if c, _, _ := findCode(checks.All, code); c.Fix != "" && !strings.Contains(text, "\nFix: ") {
			t.Errorf("explain %s prints no fix:\n%s", code, text)
		}
		if len(runner.Placeholders(text)) > 0 {
			t.Errorf("explain %s shows a placeholder unfilled:\n%s", code, text)
		}
		for _, p := range testenv.NotProse(text, nil) {
			t.Errorf("explain %s does not read as prose: %s", code, p)
		}
	}
}

// stubPages makes the reference pages under dir the only ones that
// exist ("" for none), for the rest of the test.
func stubPages(t *testing.T, dir string) {
	old := pageExists
	pageExists = func(p string) bool { return dir != "" && strings.HasPrefix(p, dir+"/") }
	t.Cleanup(func() { pageExists = old })
}

// TestExplainReferencePage: explain names the installed page when the
// package installed it, and otherwise the page's place in the source
// tree, saying it is not installed, never a path that is not there.
func TestExplainReferencePage(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{
		{docs.InstalledDir, "\nReference: /usr/share/doc/guestcheck/checks/dns.md\n"},
		{"", "\nReference: docs/checks/dns.md in guestcheck's source tree (not installed here; the packages install it as /usr/share/doc/guestcheck/checks/dns.md)\n"},
	} {
		stubPages(t, tc.dir)
		for _, arg := range []string{"dns", "dns-no-nameserver"} {
			var out, errb bytes.Buffer
			exit := run([]string{"explain", arg}, &out, &errb, checks.All)
			// The last paragraph, unwrapped: its line breaks move with the text before it.
			got := out.String()
			if i := strings.LastIndex(got, "\n\n"); i >= 0 {
				got = "\n" + strings.Join(strings.Fields(got[i:]), " ") + "\n"
			}
			if exit != 0 || got != tc.want {
				t.Errorf("pages in %q: explain %s: exit %d, ends %q; want %q", tc.dir, arg, exit, got, tc.want)
			}
		}
	}
}

// TestExplainNearMiss: a mistyped code gets the code it was meant to be.
func TestExplainNearMiss(t *testing.T) {
	var out, errb bytes.Buffer
	if exit := run([]string{"explain", "fstab-kernel-devname"}, &out, &errb, checks.All); exit != 3 {
		t.Fatalf("exit %d, want 3", exit)
	}
	if !strings.Contains(errb.String(), "did you mean fstab-kernel-device-name?") {
		t.Errorf("no did-you-mean: %s", errb.String())
	}
}
