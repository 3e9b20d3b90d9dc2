package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/internal/shared/buildinfo"
)

type fakeLive struct{ calls []string }

func (l *fakeLive) StopUnit(ctx context.Context, name string) error {
	l.calls = append(l.calls, "stop "+name)
	return nil
}
func (l *fakeLive) RelinquishJournal(ctx context.Context) error {
	l.calls = append(l.calls, "relinquish")
	return nil
}
func (l *fakeLive) RunHook(ctx context.Context, p string) error {
	l.calls = append(l.calls, "hook "+p)
	return nil
}

// testEnv never touches the host: no power-off, no container hints, stdin
// is a terminal only when tty is true.
func testEnv(tty bool, powered *bool) env {
	return env{
		all:  seal.All,
		live: &fakeLive{},
		powerOff: func(context.Context) error {
			*powered = true
			return nil
		},
		hostRead:   func(string) ([]byte, error) { return nil, os.ErrNotExist },
		isTerminal: func(io.Reader) bool { return tty },
		booted:     func() bool { return false },
		ctx:        context.Background(),
	}
}

func runCmd(t *testing.T, stdin string, tty bool, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	var powered bool
	code := run(args, strings.NewReader(stdin), &out, &errb, testEnv(tty, &powered))
	if powered {
		t.Fatal("powered off in a test")
	}
	return code, out.String(), errb.String()
}

func TestUsage(t *testing.T) {
	dir := scratch(t)
	makeTree(t, dir, 3, 3)
	for _, args := range [][]string{
		{}, {"frobnicate"}, {"plan", "--format", "xml"}, {"plan", "--machine-id-mode", "remove"},
		{"plan", "--ops", "nope"}, {"plan", "extra"}, {"verify", "--poweroff"},
		{"plan", "--root", filepath.Join(dir, "missing")},
		{"apply", "--yes", "--poweroff", "--root", dir}, // offline: nothing to power off
	} {
		if code, _, _ := runCmd(t, "", false, args...); code != seal.ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, seal.ExitUsage)
		}
	}
	if code, out, _ := runCmd(t, "", false, "--help"); code != 0 || !strings.Contains(out, "Usage: sealprep") {
		t.Errorf("--help: %d", code)
	}
	if code, out, _ := runCmd(t, "", false, "--version"); code != 0 || !strings.HasPrefix(out, "sealprep ") {
		t.Errorf("--version: %d %q", code, out)
	}
}

// TestListFitsEightyColumns: sealprep list stays in 80 columns, ends no
// line in a space, and lists the defaults (machine-id too) before the
// opt-in operations.
func TestListFitsEightyColumns(t *testing.T) {
	code, out, _ := runCmd(t, "", false, "list", "--ops", "-tmp,+resolv-conf")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	optIn := false // an opt-in row was seen
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 80 {
			t.Errorf("line over 80 columns: %q", line)
		}
		if strings.HasSuffix(line, " ") {
			t.Errorf("line ends in a space: %q", line)
		}
		optIn = optIn || strings.HasSuffix(line, " opt-in")
		if optIn && strings.HasSuffix(line, " default") {
			t.Errorf("a default operation after the opt-in ones: %q", line)
		}
	}
	if !optIn {
		t.Errorf("no opt-in row:\n%s", out)
	}
	if !strings.Contains(out, "  tmp ") || !strings.Contains(out, "* resolv-conf") {
		t.Errorf("selection not shown:\n%s", out)
	}
	code, out, _ = runCmd(t, "", false, "list", "--format", "json")
	var l seal.ListReport
	if code != 0 || json.Unmarshal([]byte(out), &l) != nil || l.SchemaVersion != seal.SchemaVersion || len(l.Operations) != len(seal.All) {
		t.Errorf("list json: %d %q", code, out)
	}
}

// TestPlanApplyVerify is the whole CLI contract on one offline root.
func TestPlanApplyVerify(t *testing.T) {
	dir := scratch(t)
	makeTree(t, dir, 20, 10)
	before, _ := os.ReadFile(filepath.Join(dir, "etc/machine-id"))

	code, out, _ := runCmd(t, "", false, "plan", "--root", dir, "--format", "json")
	var r seal.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("plan: %d %v", code, err)
	}
	if r.SchemaVersion != 1 || r.Status != seal.StatusPlanned || len(r.Actions) == 0 || r.Live || r.Version != buildinfo.Version {
		t.Errorf("plan report: %+v", r.Summary)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "etc/machine-id")); !bytes.Equal(before, after) {
		t.Fatal("plan changed the root")
	}
	code, out, _ = runCmd(t, "", false, "plan", "--root", dir)
	if code != 0 || !strings.Contains(out, "why:") {
		t.Errorf("plan text: %d\n%s", code, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 80 && !strings.Contains(line, "/") {
			t.Errorf("plan line over 80 columns: %q", line)
		}
	}
	if code, _, _ := runCmd(t, "", false, "verify", "--root", dir); code != seal.ExitProblem {
		t.Errorf("verify before apply: exit %d, want 1", code)
	}
	// No terminal and no --yes: refused, nothing changed.
	if code, out, _ := runCmd(t, "", false, "apply", "--root", dir); code != seal.ExitUsage || !strings.Contains(out, "not a terminal") {
		t.Errorf("apply without --yes: %d\n%s", code, out)
	}
	// A terminal, answered no: refused.
	if code, _, _ := runCmd(t, "n\n", true, "apply", "--root", dir); code != seal.ExitUsage {
		t.Errorf("apply declined: %d", code)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "etc/machine-id")); !bytes.Equal(before, after) {
		t.Fatal("a refused apply changed the root")
	}
	// A terminal, answered yes.
	code, out, errOut := runCmd(t, "yes\n", true, "apply", "--root", dir)
	if code != 0 || !strings.Contains(out, "SEALED") {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "\nmachine-id: 2 done, 0 unchanged, 0 failed (") {
		t.Errorf("no progress lines on stderr:\n%s", errOut)
	}
	if code, out, _ := runCmd(t, "", false, "verify", "--root", dir, "--format", "json"); code != 0 || !strings.Contains(out, `"status": "sealed"`) {
		t.Errorf("verify after apply: %d\n%s", code, out)
	}
	if code, out, _ := runCmd(t, "", false, "plan", "--root", dir); code != 0 || !strings.Contains(out, "Nothing to do.") {
		t.Errorf("plan after apply: %d\n%s", code, out)
	}
}

func TestPowerOffOnlyAfterSuccess(t *testing.T) {
	// --poweroff on the live system is refused up front when not booted
	// with systemd; the real power-off path is injected and never reached
	// with an image root.
	var powered bool
	e := testEnv(false, &powered)
	var out, errb bytes.Buffer
	dir := scratch(t)
	makeTree(t, dir, 1, 1)
	if code := run([]string{"apply", "--yes", "--poweroff", "--root", dir}, strings.NewReader(""), &out, &errb, e); code != seal.ExitUsage || powered {
		t.Errorf("offline --poweroff: %d powered=%v", code, powered)
	}
	e.powerOff = func(context.Context) error { return errors.New("must not be called") }
	if code := run([]string{"apply", "--yes", "--root", dir}, strings.NewReader(""), &out, &errb, e); code != 0 {
		t.Errorf("apply: %d\n%s", code, errb.String())
	}
}
