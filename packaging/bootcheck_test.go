// Package packaging_test runs the packaged boot script against a stand-in
// guestcheck, to hold its sentinel contract: /run/guestcheck/ready exists,
// whole, exactly when the boot run found nothing failing.
package packaging_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGuestcheck prints summary and exits rc, like guestcheck --summary,
// with stderr (default: a warning) on stderr.
func fakeGuestcheck(t *testing.T, summary string, rc int, stderr string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "guestcheck")
	body := "#!/bin/sh\n"
	if summary != "" {
		body += "echo '" + summary + "'\n"
	}
	if stderr == "" {
		stderr = "a warning on stderr"
	}
	body += "echo '" + stderr + "' >&2\nexit " + string(rune('0'+rc)) + "\n"
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBootCheckSentinel(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal("no sh:", err)
	}
	for _, tc := range []struct {
		name    string
		summary string
		rc      int
		ready   bool
		console string
		stderr  string
	}{
		{"pass", "guestcheck: PASS 9 checks: 0 fail, 0 error, 0 warn, 9 pass, 0 skip (80 ms)", 0, true, "guestcheck: PASS", ""},
		{"warn", "guestcheck: WARN 9 checks: 0 fail, 0 error, 1 warn, 8 pass, 0 skip (80 ms)", 2, true, "guestcheck: WARN", ""},
		{"fail", "guestcheck: FAIL 9 checks: 1 fail, 0 error, 0 warn, 8 pass, 0 skip (80 ms)", 1, false, "guestcheck: FAIL", ""},
		{"config error", "", 3, false, "guestcheck: ERROR exit 3: a warning on stderr", ""},
		{"report lost", "guestcheck: PASS 9 checks: 0 fail, 0 error, 0 warn, 9 pass, 0 skip (80 ms)", 1, false,
			"guestcheck: --output json:/run/guestcheck/report.json: report not written: /run/guestcheck: read-only file system\nguestcheck: PASS",
			"guestcheck: --output json:/run/guestcheck/report.json: report not written: /run/guestcheck: read-only file system"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// A sentinel and a half-written temporary from an earlier run
			// must never survive a run that does not pass.
			for _, f := range []string{"ready", ".ready.tmp"} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("stale\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(sh, "usr/libexec/guestcheck/boot-check")
			cmd.Env = append(os.Environ(), "GUESTCHECK_DIR="+dir, "GUESTCHECK_BIN="+fakeGuestcheck(t, tc.summary, tc.rc, tc.stderr))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("boot-check exited %v (it must always exit 0):\n%s", err, out)
			}
			if !strings.HasPrefix(string(out), tc.console) {
				t.Errorf("console line %q, want it to start with %q", out, tc.console)
			}
			b, err := os.ReadFile(filepath.Join(dir, "ready"))
			switch {
			case tc.ready && (err != nil || string(b) != tc.summary+"\n"):
				t.Errorf("ready = %q, %v; want the summary line", b, err)
			case !tc.ready && !os.IsNotExist(err):
				t.Errorf("ready left behind: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(dir, ".ready.tmp")); !os.IsNotExist(err) {
				t.Errorf(".ready.tmp left behind: %v", err)
			}
		})
	}
}
