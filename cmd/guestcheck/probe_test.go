package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/probe"
)

// invokeProbe runs `guestcheck probe` with a private config. The fakes it
// is given never read the machine.
func invokeProbe(t *testing.T, all []runner.Check, cfg string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"probe", "--config", writeConfig(t, cfg)}, args...), &out, &errb, all)
	return code, out.String(), errb.String()
}

// probeOK asserts the probe's output contract: exactly one line on
// stdout, at most probe.MaxLine bytes plus the newline, printable UTF-8.
func probeOK(t *testing.T, out string) string {
	t.Helper()
	line, ok := strings.CutSuffix(out, "\n")
	if !ok || strings.Contains(line, "\n") {
		t.Fatalf("probe output is not exactly one line: %q", out)
	}
	if len(line) > probe.MaxLine || !utf8.ValidString(line) {
		t.Errorf("probe line is %d bytes (max %d) or not UTF-8", len(line), probe.MaxLine)
	}
	for _, r := range line {
		if r < 0x20 || r == 0x7f {
			t.Errorf("probe line has control character %U: %q", r, line)
			break
		}
	}
	if !strings.HasPrefix(line, "guestcheck probe: READY ") && !strings.HasPrefix(line, "guestcheck probe: NOT READY ") {
		t.Errorf("probe line does not start with the verdict: %q", line)
	}
	return line
}

func findingCheck(id string, fs ...runner.Finding) runner.Check {
	return runner.Check{ID: id, Title: id, Run: func(context.Context, *runner.Env) []runner.Finding { return fs }}
}

func TestProbeVerdicts(t *testing.T) {
	warnPending := findingCheck("c", runner.New(runner.Warn, "cloud-init-running", "cloud-init is still running (stage init)", nil, "wait"))
	skipPending := findingCheck("c", runner.Skipf("cloud-init-not-started", "no record of a run", nil))
	// The codes are pending because the check says so, as the registry's
	// cloud-init check does (runner.Check.Pending).
	warnPending.Pending = []string{"cloud-init-running"}
	skipPending.Pending = []string{"cloud-init-not-started"}
	for _, tc := range []struct {
		name     string
		checks   []runner.Check
		cfg      string
		ready    bool
		contains []string
		absent   []string
	}{
		{"all pass", []runner.Check{fake("a", runner.Pass), fake("b", runner.Skip)}, "probe: {checks: [a, b]}\n", true,
			[]string{"READY 2 checks (a,b) in "}, nil},
		{"warn is ready", []runner.Check{fake("a", runner.Pass), fake("b", runner.Warn)}, "probe: {checks: [a, b]}\n", true, nil, nil},
		{"warn_not_ready", []runner.Check{fake("a", runner.Pass), fake("b", runner.Warn)}, "probe: {checks: [a, b], warn_not_ready: true}\n", false,
			[]string{"NOT READY warning: b (b: warn: b says warn)"}, nil},
		{"fail and error", []runner.Check{fake("a", runner.Fail), fake("b", runner.Pass), fake("c", runner.Error)}, "probe: {checks: [c, b, a]}\n", false,
			[]string{"NOT READY failing: a,c (a: fail: a says fail; c: error: c says error)"}, []string{"b:"}},
		{"only probe.checks count", []runner.Check{fake("a", runner.Fail), fake("b", runner.Pass)}, "probe: {checks: [b]}\n", true,
			[]string{"READY 1 check (b)"}, nil},
		{"cloud-init running is not ready", []runner.Check{warnPending}, "probe: {checks: [c]}\n", false,
			[]string{"NOT READY warning: c (c: warn: cloud-init is still running (stage init))"}, nil},
		{"cloud-init not started is not ready", []runner.Check{skipPending}, "probe: {checks: [c]}\n", false,
			[]string{"NOT READY pending: c (c: skip: no record of a run)"}, nil},
		{"default checks without a probe section", []runner.Check{fake("cloud-init", runner.Pass), fake("hostname", runner.Pass),
			fake("fstab", runner.Pass), fake("disk-size", runner.Pass), fake("dns", runner.Fail), fake("routes", runner.Fail)}, "", true,
			[]string{"READY 4 checks (cloud-init,hostname,fstab,disk-size)"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := invokeProbe(t, tc.checks, tc.cfg)
			line := probeOK(t, out)
			if want := map[bool]int{true: 0, false: 1}[tc.ready]; code != want {
				t.Errorf("exit %d, want %d: %s", code, want, line)
			}
			if errs != "" {
				t.Errorf("stderr not empty: %q", errs)
			}
			for _, s := range tc.contains {
				if !strings.Contains(line, s) {
					t.Errorf("line %q does not contain %q", line, s)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(line, s) {
					t.Errorf("line %q contains %q", line, s)
				}
			}
		})
	}
}

// Configuration and usage errors exit 1, not 3: any non-zero exit fails
// the probe, and stdout (all KubeVirt keeps) says why, with file and line.
func TestProbeConfigAndUsageErrors(t *testing.T) {
	all := []runner.Check{fake("a", runner.Pass)}
	for _, tc := range []struct {
		cfg     string
		args    []string
		want    string
		wantErr bool
	}{
		{"timeout: 1m\nprobe:\n  checks:\n    - a\n    - nope\n", nil, `config error: ` + "%CFG%" + `:5: probe.checks[1]: unknown check ID "nope"`, false},
		{"probe:\n  checks: [a, dns]\n", nil, "config error: %CFG%:2: probe.checks: dns cannot count towards a probe", false},
		{"probe: {timeout: soon}\n", nil, "config error: %CFG%:1:", false},
		{"bogus: 1\n", nil, "config error: %CFG%:1: bogus: unknown key (known here: timeout,", false},
		{"", []string{"--bogus"}, "usage error: --bogus: unknown option (see guestcheck probe --help)", true},
		{"", []string{"extra"}, `usage error: "extra": unexpected argument (see guestcheck probe --help)`, true},
	} {
		cfgPath := writeConfig(t, tc.cfg)
		var out, errb bytes.Buffer
		code := run(append([]string{"probe", "--config", cfgPath}, tc.args...), &out, &errb, all)
		line := probeOK(t, out.String())
		want := strings.ReplaceAll(tc.want, "%CFG%", cfgPath)
		if code != 1 || !strings.Contains(line, "NOT READY "+strings.SplitN(want, ":", 2)[0]) || !strings.Contains(line, want) {
			t.Errorf("%q %v: exit %d, line %q, want exit 1 and %q", tc.cfg, tc.args, code, line, want)
		}
		if gotErr := errb.Len() > 0; gotErr != tc.wantErr {
			t.Errorf("%q %v: stderr %q", tc.cfg, tc.args, errb.String())
		}
	}
	var out bytes.Buffer
	if code := run([]string{"probe", "--config", "/nonexistent/guestcheck.yaml"}, &out, io.Discard, all); code != 1 ||
		!strings.Contains(out.String(), "config error: /nonexistent/guestcheck.yaml: cannot read the configuration: no such file") {
		t.Errorf("missing explicit config: exit %d, %q", code, out.String())
	}
	out.Reset()
	if code := run([]string{"probe", "--help"}, &out, io.Discard, all); code != 0 || !strings.Contains(out.String(), `"/usr/bin/guestcheck", "probe"`) {
		t.Errorf("probe --help: exit %d\n%s", code, out.String())
	}
}

// The probe answers within its deadline even when a check ignores its
// context and hangs.
func TestProbeDeadline(t *testing.T) {
	hang := runner.Check{ID: "hang", Title: "hang", Run: func(context.Context, *runner.Env) []runner.Finding {
		time.Sleep(10 * time.Second)
		return nil
	}}
	for _, tc := range []struct {
		cfg  string
		args []string
		max  time.Duration
		want string
	}{
		{"probe: {checks: [a, hang], timeout: 150ms}\n", nil, 150 * time.Millisecond, "guestcheck probe: NOT READY timed out after 150ms (raise --timeout or probe.timeout): hang did not finish"},
		{"probe: {checks: [a, hang]}\n", []string{"--timeout", "100ms"}, 100 * time.Millisecond, "guestcheck probe: NOT READY timed out after 100ms (--timeout): hang did not finish"},
		{"probe: {checks: [b, hang]}\n", []string{"--timeout", "100ms"}, 100 * time.Millisecond, "guestcheck probe: NOT READY timed out after 100ms (--timeout): hang did not finish; failing: b (b: fail: b says fail)"},
	} {
		start := time.Now()
		code, out, _ := invokeProbe(t, []runner.Check{fake("a", runner.Pass), fake("b", runner.Fail), hang}, tc.cfg, tc.args...)
		took := time.Since(start)
		line := probeOK(t, out)
		if code != 1 || line != tc.want || strings.Contains(line, "deadline exceeded") {
			t.Errorf("exit %d, line\n %q\nwant\n %q", code, line, tc.want)
		}
		if took > tc.max+100*time.Millisecond {
			t.Errorf("probe took %s, deadline %s", took, tc.max)
		}
	}
}

// Whatever the checks say, stdout stays one short line without control
// characters (no colour, no line breaks the kubelet would mangle).
func TestProbeLineIsBounded(t *testing.T) {
	long := strings.Repeat("é long message\x1b[31m red\r\n", 2000)
	code, out, _ := invokeProbe(t, []runner.Check{findingCheck("x", runner.New(runner.Fail, "x-bad", long, nil, "fix"))}, "probe: {checks: [x]}\n")
	line := probeOK(t, out)
	if code != 1 || !strings.HasSuffix(line, " ...") || !strings.Contains(line, "failing: x (x: fail: é long") {
		t.Errorf("exit %d, line %q", code, line[:min(len(line), 120)])
	}
}

// The probe's checks get no systemd client, no resolver and a dialer
// that refuses: no D-Bus, no DNS, no network probe.
func TestProbeEnvIsLocal(t *testing.T) {
	var seen *runner.Env
	spy := runner.Check{ID: "spy", Title: "spy", Run: func(ctx context.Context, env *runner.Env) []runner.Finding {
		seen = env
		return []runner.Finding{runner.Passf("spy-ok", "looked", nil)}
	}}
	if code, out, _ := invokeProbe(t, []runner.Check{spy}, "probe: {checks: [spy]}\n"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if seen == nil || !seen.Live || seen.Systemd != nil || seen.Resolver != nil || seen.Netlink != nil || seen.Dialer == nil || seen.Config == nil {
		t.Fatalf("probe env %+v", seen)
	}
	if c, err := seen.Dialer.DialContext(context.Background(), "udp", "192.0.2.1:53"); err == nil {
		c.Close()
		t.Error("the probe's dialer connected")
	}
}

// The registry's real checks named in DefaultProbeChecks exist, and none
// of them is one that makes network probes.
func TestDefaultProbeChecksExist(t *testing.T) {
	p := config.Default().Probe
	sel, err := probe.Select(checks.All, &p)
	if err != nil || len(sel) != len(p.Checks) {
		t.Fatalf("default probe checks %v: %v (%d selected)", p.Checks, err, len(sel))
	}
}

// BenchmarkProbe runs the real probe on this machine: where its time goes
// outside a guest. scripts/bench.sh compares it with cloud-init itself.
func BenchmarkProbe(b *testing.B) {
	for b.Loop() {
		run([]string{"probe"}, io.Discard, io.Discard, checks.All)
	}
}
