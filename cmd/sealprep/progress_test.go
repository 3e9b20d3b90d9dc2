package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/internal/shared/tty/ttytest"
)

// The tree: 10,000 logs and 1,000 files in /tmp wrote 11,002
// progress lines to a non-terminal stderr, a Packer build log.
const bigLogs, bigTmp = 10000, 1000

// planned is the JSON plan of dir: its actions and its operations with
// at least one action, in order.
func planned(t *testing.T, bin, dir string) ([]seal.Result, []string) {
	t.Helper()
	out, err := exec.Command(bin, "plan", "--root", dir, "--format", "json").Output()
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	var r seal.Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for i, a := range r.Actions {
		if i == 0 || a.Op != r.Actions[i-1].Op {
			ops = append(ops, a.Op)
		}
	}
	return r.Actions, ops
}

// sealprepCmd is the binary with TERM set, so that only the stream
// decides between the terminal line and log lines.
func sealprepCmd(bin, term string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "TERM="+term)
	return cmd
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

var opLine = regexp.MustCompile(`^([a-z0-9-]+): (\d+) done, (\d+) unchanged, (\d+) failed \(`)

// checkOpLines: stderr off a terminal is one line per operation with its
// counts (no failures here), adding up to every action.
func checkOpLines(t *testing.T, stderr string, acts []seal.Result, ops []string) {
	t.Helper()
	ls := lines(stderr)
	if len(ls) > len(ops)+3 {
		t.Errorf("%d stderr lines for %d operations and no failure (want at most %d):\n%s",
			len(ls), len(ops), len(ops)+3, lastLines([]byte(stderr), 20))
	}
	var seen []string
	total := 0
	for _, l := range ls {
		m := opLine.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("unexpected stderr line %q", l)
			continue
		}
		seen = append(seen, m[1])
		var done int
		fmt.Sscan(m[2], &done)
		total += done
		if m[4] != "0" {
			t.Errorf("failures reported: %q", l)
		}
	}
	if strings.Join(seen, ",") != strings.Join(ops, ",") {
		t.Errorf("operation lines %v, want one for each of %v", seen, ops)
	}
	if total != len(acts) {
		t.Errorf("operation lines add up to %d done, want %d", total, len(acts))
	}
}

// TestApplyProgressOffTerminal: apply with stderr on a pipe (as in a
// Packer shutdown_command) writes a line per operation, not per action,
// and the text report on stdout stays short too.
func TestApplyProgressOffTerminal(t *testing.T) {
	bin := sealprepBinary(t)
	dir := scratch(t)
	makeTree(t, dir, bigLogs, bigTmp)
	acts, ops := planned(t, bin, dir)
	if len(acts) < bigLogs {
		t.Fatalf("only %d actions planned", len(acts))
	}
	cmd := sealprepCmd(bin, "xterm", "apply", "--yes", "--root", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("apply: %v\n%s", err, lastLines(stderr.Bytes(), 20))
	}
	checkOpLines(t, stderr.String(), acts, ops)
	if n := len(lines(stdout.String())); n > 200 {
		t.Errorf("text report of %d lines for %d actions:\n%s", n, len(acts), lastLines(stdout.Bytes(), 40))
	}
	if !strings.Contains(stdout.String(), fmt.Sprintf("SEALED: %d actions, %d done", len(acts), len(acts))) {
		t.Errorf("report:\n%s", lastLines(stdout.Bytes(), 5))
	}
}

// TestApplyJSONListsEveryAction: with --format json the report on stdout
// still has every action, in plan order, while stderr stays short.
func TestApplyJSONListsEveryAction(t *testing.T) {
	bin := sealprepBinary(t)
	dir := scratch(t)
	makeTree(t, dir, bigLogs, bigTmp)
	acts, ops := planned(t, bin, dir)
	cmd := sealprepCmd(bin, "xterm", "apply", "--yes", "--root", dir, "--format", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("apply: %v\n%s", err, lastLines(stderr.Bytes(), 20))
	}
	var r seal.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("stdout is not one JSON report: %v", err)
	}
	if len(r.Actions) != len(acts) || r.Summary.Done != len(acts) || r.Status != seal.StatusSealed {
		t.Fatalf("%d actions in the report (%d done, %s), want %d", len(r.Actions), r.Summary.Done, r.Status, len(acts))
	}
	for i, a := range r.Actions {
		if p := acts[i]; a.Op != p.Op || a.Kind != p.Kind || a.Path != p.Path || a.Status != seal.Done {
			t.Fatalf("action %d: %s %s %s %s, planned %s %s %s", i, a.Op, a.Kind, a.Path, a.Status, p.Op, p.Kind, p.Path)
		}
	}
	checkOpLines(t, stderr.String(), acts, ops)
}

// TestPlanVerifyOutputBounded: plan and verify print nothing on stderr,
// and their text reports group the 10,000 logs instead of listing them.
func TestPlanVerifyOutputBounded(t *testing.T) {
	bin := sealprepBinary(t)
	dir := scratch(t)
	makeTree(t, dir, bigLogs, bigTmp)
	for _, c := range []string{"plan", "verify"} {
		cmd := sealprepCmd(bin, "xterm", c, "--root", dir)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != map[string]int{"plan": 0, "verify": 1}[c] {
			t.Errorf("%s: %v", c, err)
		}
		if stderr.Len() > 0 {
			t.Errorf("%s wrote to stderr:\n%s", c, lastLines(stderr.Bytes(), 10))
		}
		if n := len(lines(stdout.String())); n > 150 {
			t.Errorf("%s: %d lines of text report:\n%s", c, n, lastLines(stdout.Bytes(), 40))
		}
	}
}

// capture reads a pseudo-terminal (or pipe) while a process writes to
// it, and says when some text has appeared.
type capture struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	done chan struct{}
}

func startCapture(t *testing.T, r *os.File, want string) *capture {
	c := &capture{want: want, seen: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		b := make([]byte, 32<<10)
		signalled := false
		for {
			n, err := r.Read(b)
			c.mu.Lock()
			c.buf.Write(b[:n])
			if !signalled && want != "" && strings.Contains(c.buf.String(), want) {
				signalled = true
				close(c.seen)
			}
			c.mu.Unlock()
			if err != nil {
				return // EOF on a pipe, EIO on a pty: the writers are gone
			}
		}
	}()
	return c
}

func (c *capture) wait(t *testing.T) string {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(time.Minute):
		t.Fatal("output never ended")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// screen splits terminal output into what each redraw or line left on
// screen, the clear-to-end-of-line escape removed.
func screen(out string) []string {
	out = strings.ReplaceAll(out, "\x1b[K", "")
	return strings.FieldsFunc(out, func(r rune) bool { return r == '\r' || r == '\n' })
}

// TestApplyProgressOnTerminal runs apply with stderr on an 80-column
// pseudo-terminal: one line rewritten in place, throttled, fitting the
// console, and finished with a newline; with TERM=dumb, log lines.
func TestApplyProgressOnTerminal(t *testing.T) {
	bin := sealprepBinary(t)
	dir := scratch(t)
	makeTree(t, dir, bigLogs, bigTmp)
	acts, ops := planned(t, bin, dir)

	ctl, term := ttytest.Open(t, 80, 24)
	cmd := sealprepCmd(bin, "xterm", "apply", "--yes", "--root", dir)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, term
	c := startCapture(t, ctl, "")
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	term.Close()
	out := c.wait(t)
	if err != nil {
		t.Fatalf("apply: %v\n%q", err, out)
	}
	redraws := strings.Count(out, "\r")
	if redraws < 2 {
		t.Fatalf("the line is not rewritten (%d carriage returns):\n%q", redraws, out)
	}
	// Ten a second, plus one at each operation's start and the summary.
	if limit := int(wall/(100*time.Millisecond)) + len(ops) + 3; redraws > limit {
		t.Errorf("%d redraws in %v for %d operations: not throttled (limit %d)", redraws, wall, len(ops), limit)
	}
	if n := strings.Count(out, "\n"); n > len(ops) {
		t.Errorf("%d newlines for %d operations:\n%q", n, len(ops), out)
	}
	if !strings.HasSuffix(out, "\n") {
		t.Errorf("the terminal line is not ended: %q", out[max(0, len(out)-200):])
	}
	for _, s := range screen(out) {
		if len(s) > 79 {
			t.Errorf("%d columns on an 80-column terminal: %q", len(s), s)
		}
	}
	want := fmt.Sprintf("\r\x1b[Ksealprep: %d actions: %d done, 0 unchanged, 0 failed (", len(acts), len(acts))
	if !strings.Contains(out, want) {
		t.Errorf("no summary %q:\n%q", want, out[max(0, len(out)-300):])
	}

	// TERM=dumb cannot clear a line: log lines, as off a terminal.
	dir = scratch(t)
	makeTree(t, dir, 20, 10)
	acts, ops = planned(t, bin, dir)
	ctl, term = ttytest.Open(t, 80, 24)
	cmd = sealprepCmd(bin, "dumb", "apply", "--yes", "--root", dir)
	cmd.Stdout, cmd.Stderr = &stdout, term
	c = startCapture(t, ctl, "")
	err = cmd.Run()
	term.Close()
	out = c.wait(t)
	if err != nil || strings.Contains(out, "\r") || strings.Contains(out, "\x1b") {
		t.Errorf("TERM=dumb: %v\n%q", err, out)
	}
	checkOpLines(t, out, acts, ops)
}

// TestApplyInterruptedProgress stops apply with SIGINT on a terminal and
// SIGTERM off one, in the middle of the logs: the output ends with a
// newline and says what was reached, the JSON report still lists every
// action, and a second apply finishes the job.
func TestApplyInterruptedProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 30,000-file trees; skipped with -short")
	}
	bin := sealprepBinary(t)
	for _, c := range []struct {
		name     string
		sig      syscall.Signal
		terminal bool
		cause    string
	}{
		{"SIGINT on a terminal", syscall.SIGINT, true, "interrupt signal received"},
		{"SIGTERM off a terminal", syscall.SIGTERM, false, "terminated signal received"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := scratch(t)
			// Three times the logs: the signal must land while they run.
			makeTree(t, dir, 3*bigLogs, bigTmp)
			acts, ops := planned(t, bin, dir)
			cmd := sealprepCmd(bin, "xterm", "apply", "--yes", "--root", dir, "--format", "json")
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			var cap *capture
			if c.terminal {
				ctl, term := ttytest.Open(t, 80, 24)
				cmd.Stderr = term
				cap = startCapture(t, ctl, "] logfiles: ")
				defer term.Close()
			} else {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				defer w.Close()
				cmd.Stderr = w
				// login-records runs just before logfiles.
				cap = startCapture(t, r, "\nlogin-records: ")
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmd.Stderr.(*os.File).Close() // the child has its own copy
			select {
			case <-cap.seen:
			case <-time.After(time.Minute):
				t.Fatal("the logs never started")
			}
			if !c.terminal {
				// login-records' line comes when it ends; logfiles may
				// not have begun yet, and a signal in that gap leaves it
				// "not reached". Wait until it has touched a log.
				waitLogsTouched(t, filepath.Join(dir, "var/log/app00"))
			}
			cmd.Process.Signal(c.sig)
			cmd.Wait()
			out := cap.wait(t)
			if code := cmd.ProcessState.ExitCode(); code != seal.ExitProblem {
				t.Fatalf("exit %d after %v, want %d (did the signal come too late?)\n%q", code, c.sig, seal.ExitProblem, out)
			}
			if !strings.HasSuffix(out, "\n") {
				t.Errorf("output not ended with a newline: %q", out[max(0, len(out)-200):])
			}
			var r seal.Report
			if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || len(r.Actions) != len(acts) {
				t.Fatalf("the JSON report does not list all %d actions: %d, %v", len(acts), len(r.Actions), err)
			}
			if r.Summary.Done == 0 || r.Summary.Failed == 0 || r.Summary.Done+r.Summary.Failed != len(acts) {
				t.Errorf("summary %+v: want some done, the rest not attempted", r.Summary)
			}
			if last := r.Actions[len(r.Actions)-1]; last.Status != seal.Failed || last.Error != "not attempted: "+c.cause {
				t.Errorf("last action: %s %q", last.Status, last.Error)
			}
			if c.terminal {
				tail := screen(out[strings.LastIndex(out, "\r"):])
				want := []string{
					fmt.Sprintf("sealprep: interrupted (%s) after %d of %d actions:", c.cause, r.Summary.Done, len(acts)),
					fmt.Sprintf("  %d done, 0 unchanged, 0 failed; run apply again to finish", r.Summary.Done),
				}
				if strings.Join(tail, "\n") != strings.Join(want, "\n") {
					t.Errorf("terminal ends with\n%s\nwant\n%s", strings.Join(tail, "\n"), strings.Join(want, "\n"))
				}
				if n := strings.Count(out, "\n"); n > len(ops) {
					t.Errorf("%d newlines on the terminal", n)
				}
			} else {
				ls := lines(out)
				if len(ls) > len(ops)+3 {
					t.Errorf("%d lines for %d operations:\n%s", len(ls), len(ops), out)
				}
				for _, re := range []string{
					`(?m)^logfiles: \d+ done, 0 unchanged, 0 failed; \d+ not attempted$`,
					`(?m)^not reached: [a-z, -]*machine-id$`,
					fmt.Sprintf(`(?m)^sealprep: interrupted \(%s\): %d of %d actions not attempted; run apply again to finish$`,
						c.cause, r.Summary.Failed, len(acts)),
				} {
					if !regexp.MustCompile(re).MatchString(out) {
						t.Errorf("no line matching %s:\n%s", re, out)
					}
				}
			}
			if out, err := exec.Command(bin, "apply", "--yes", "--root", dir).CombinedOutput(); err != nil {
				t.Fatalf("second apply: %v\n%s", err, lastLines(out, 20))
			}
		})
	}
}

// waitLogsTouched waits until logfiles has truncated a log or removed a
// rotated one in dir, the first directory it walks.
func waitLogsTouched(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := len(ents)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) < start {
			return
		}
		for _, e := range ents {
			if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
				return
			}
		}
	}
	t.Fatal("logfiles never touched " + dir)
}
