//go:build vmtest

package vm

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// KubeVirt's exec probe as virt-probe runs it: guest-exec of the command
// with its output captured, then guest-exec-status every 100 ms until the
// process exits or timeoutSeconds (default 1) passes; the verdict is the
// exit code alone, and only stdout is kept.
const (
	virtProbePoll     = 100 * time.Millisecond
	virtProbeDeadline = 1 * time.Second
	// probeGoal is the target for guestcheck probe through
	// guest-exec under TCG, with room to spare inside the 1 s deadline.
	probeGoal = 150 * time.Millisecond
	// nominalTrue is /bin/true through guest-exec on an unloaded host
	// (the middle of the 0.03 to 0.06 s).
	nominalTrue = 45 * time.Millisecond
)

var probeCommand = []string{"/usr/bin/guestcheck", "probe"}

// probeResult is one exec probe as virt-probe sees it.
type probeResult struct {
	exited bool
	exit   int
	stdout string
	took   time.Duration // guest-exec sent to the status that said exited
}

// execTimed runs path through guest-exec and polls guest-exec-status every
// poll (first after one poll interval when sleepFirst, as virt-probe does;
// at once otherwise, to measure), until it exits or deadline passes.
func execTimed(ctx context.Context, v *VM, deadline, poll time.Duration, sleepFirst bool, path string, args ...string) (probeResult, error) {
	a, err := v.Agent(ctx)
	if err != nil {
		return probeResult{}, err
	}
	start := time.Now()
	var started struct {
		PID int `json:"pid"`
	}
	if err := a.Exec(ctx, "guest-exec", map[string]any{"path": path, "arg": args, "capture-output": true}, &started); err != nil {
		return probeResult{}, fmt.Errorf("guest-exec %s: %w", path, err)
	}
	for first := true; ; first = false {
		if !first || sleepFirst {
			wait := poll
			if left := deadline - time.Since(start); left < wait {
				wait = left
			}
			if wait <= 0 {
				return probeResult{took: time.Since(start)}, nil // timed out: the probe fails
			}
			select {
			case <-ctx.Done():
				return probeResult{}, ctx.Err()
			case <-time.After(wait):
			}
		}
		var st struct {
			Exited   bool   `json:"exited"`
			ExitCode *int   `json:"exitcode"`
			OutData  string `json:"out-data"`
		}
		if err := a.Exec(ctx, "guest-exec-status", map[string]int{"pid": started.PID}, &st); err != nil {
			return probeResult{}, fmt.Errorf("guest-exec-status %s: %w", path, err)
		}
		if st.Exited {
			r := probeResult{exited: true, exit: -1, took: time.Since(start)}
			if st.ExitCode != nil {
				r.exit = *st.ExitCode
			}
			out, _ := base64.StdEncoding.DecodeString(st.OutData)
			r.stdout = string(out)
			return r, nil
		}
		if time.Since(start) >= deadline {
			return probeResult{took: time.Since(start)}, nil
		}
	}
}

// virtProbe is one readiness probe exactly as virt-probe runs it.
func virtProbe(ctx context.Context, v *VM, cmd []string) (probeResult, error) {
	return execTimed(ctx, v, virtProbeDeadline, virtProbePoll, true, cmd[0], cmd[1:]...)
}

// timing measures a command through guest-exec n times, polling every
// 5 ms from the start, and returns the sorted durations.
func timing(ctx context.Context, t *testing.T, v *VM, n int, cmd ...string) []time.Duration {
	t.Helper()
	var ds []time.Duration
	for range n {
		r, err := execTimed(ctx, v, 30*time.Second, 5*time.Millisecond, false, cmd[0], cmd[1:]...)
		if err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		if !r.exited {
			t.Fatalf("%v did not finish in 30 s", cmd)
		}
		ds = append(ds, r.took)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds
}

func spread(ds []time.Duration) string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
	return fmt.Sprintf("min %s median %s max %s s (n=%d)", ms(ds[0]), ms(ds[len(ds)/2]), ms(ds[len(ds)-1]), len(ds))
}

var probeLineRE = regexp.MustCompile(`^guestcheck probe: (READY|NOT READY) [^\n]*\n$`)

// The probe's two NOT READY forms: the checks it judged, in groups
// ("failing:", "warning:", "pending:"), and the whole probe's deadline
// passing with the unfinished checks named first.
var (
	probeGroupRE    = regexp.MustCompile(`(?:NOT READY |; )(?:failing|warning|pending): ([a-z0-9,-]+) \(`)
	probeTimedOutRE = regexp.MustCompile(`^guestcheck probe: NOT READY timed out after [^:]*: ([a-z0-9,-]+) did not finish(?:; |$)`)
)

// parseProbeLine reads a NOT READY verdict: the checks named as not
// ready, whatever their group, those cut off by a deadline (the probe's
// or their own), and whether the line names any check at all.
func parseProbeLine(line string) (failing, timedOut []string, named bool) {
	line = strings.TrimSpace(line)
	if m := probeTimedOutRE.FindStringSubmatch(line); m != nil {
		timedOut = strings.Split(m[1], ",")
		named = true
	}
	for _, m := range probeGroupRE.FindAllStringSubmatch(line, -1) {
		named = true
		for _, id := range strings.Split(m[1], ",") {
			failing = append(failing, id)
			if strings.Contains(line, "("+id+": error: did not finish") || strings.Contains(line, "; "+id+": error: did not finish") {
				timedOut = append(timedOut, id)
			}
		}
	}
	return failing, timedOut, named
}

// probeScenario runs the exec readiness probe on a booted guest the way
// KubeVirt does, several times, and checks the verdict, the one line on
// stdout, the deadline and the boot run's sentinel. notReady lists the
// check IDs that must be named as failing; empty means the guest must be
// ready. The healthy guest also reports how long the probe takes through
// guest-exec next to /bin/true and a whole run.
func probeScenario(ctx context.Context, t *testing.T, v *VM, notReady ...string) {
	ready := len(notReady) == 0
	sctx, cancel := step(ctx, stepTimeout)
	defer cancel()
	const runs = 5
	overran := 0 // runs in which a check hit the probe's own deadline
	for i := range runs {
		r, err := virtProbe(sctx, v, probeCommand)
		if err != nil {
			t.Fatalf("%s: virt-probe %v: %v", v.spec.Name, probeCommand, err)
		}
		if !r.exited {
			t.Fatalf("%s: %v did not exit within virt-probe's %s deadline (run %d)", v.spec.Name, probeCommand, virtProbeDeadline, i+1)
		}
		t.Logf("%s: virt-probe run %d: exit %d after %s (100 ms polling): %s", v.spec.Name, i+1, r.exit, r.took.Round(time.Millisecond), strings.TrimSpace(r.stdout))
		if !probeLineRE.MatchString(r.stdout) {
			t.Errorf("%s: probe stdout is not one verdict line: %q", v.spec.Name, r.stdout)
		}
		if r.exit != 0 && r.exit != 1 {
			t.Errorf("%s: probe exit %d, want 0 or 1", v.spec.Name, r.exit)
		}
		// A check that did not finish within the probe's deadline (a
		// loaded host) makes the probe not ready: never a false "ready",
		// but not this guest's fault either.
		failing, timedOut, named := parseProbeLine(r.stdout)
		if len(timedOut) > 0 {
			overran++
		}
		switch {
		case ready && r.exit != 0 && len(timedOut) == 0:
			t.Errorf("%s: probe not ready on a healthy guest: %s", v.spec.Name, r.stdout)
		case !ready && r.exit != 1:
			t.Errorf("%s: probe ready on a broken guest: %s", v.spec.Name, r.stdout)
		case !ready && !named:
			t.Errorf("%s: no failing IDs in %q", v.spec.Name, r.stdout)
		case !ready:
			got := append(slices.Clone(failing), timedOut...)
			for _, id := range notReady {
				if !slices.Contains(got, id) {
					t.Errorf("%s: failing IDs %v do not name %s: %s", v.spec.Name, got, id, r.stdout)
				}
			}
			for _, id := range got {
				if !slices.Contains(notReady, id) && !slices.Contains(timedOut, id) {
					t.Errorf("%s: %s named as failing: %s", v.spec.Name, id, r.stdout)
				}
			}
		}
	}
	if overran > runs/2 {
		t.Errorf("%s: in %d of %d probes a check overran the probe's deadline", v.spec.Name, overran, runs)
	}

	// The boot run's sentinel agrees with its verdict.
	st := mustExec(ctx, t, v, "/usr/bin/cat", "/run/guestcheck/ready")
	switch {
	case ready && (st.Exit != 0 || !summaryLine.MatchString(strings.TrimSpace(st.Stdout)+" (report: /run/guestcheck/report.txt)")):
		t.Errorf("%s: cat /run/guestcheck/ready: exit %d %q %q, want the boot run's summary", v.spec.Name, st.Exit, st.Stdout, st.Stderr)
	case !ready && st.Exit == 0:
		t.Errorf("%s: /run/guestcheck/ready exists after a failing boot run: %q", v.spec.Name, st.Stdout)
	}

	if !ready {
		return
	}
	tctx, cancel := step(ctx, 2*stepTimeout)
	defer cancel()
	tr := timing(tctx, t, v, 7, "/bin/true")
	pr := timing(tctx, t, v, 7, probeCommand...)
	fr := timing(tctx, t, v, 3, "/usr/bin/guestcheck", "--summary")
	t.Logf("%s: through guest-exec (5 ms polling): /bin/true %s", v.spec.Name, spread(tr))
	t.Logf("%s: through guest-exec (5 ms polling): guestcheck probe %s", v.spec.Name, spread(pr))
	t.Logf("%s: through guest-exec (5 ms polling): guestcheck --summary %s", v.spec.Name, spread(fr))
	// The goal holds for today's TCG guests, where /bin/true takes
	// 0.03 to 0.06 s through guest-exec; a host that is slower now (other
	// guests share its cores) scales it by /bin/true's median.
	load := max(1, float64(tr[len(tr)/2])/float64(nominalTrue))
	goal := time.Duration(float64(probeGoal) * load)
	med := pr[len(pr)/2]
	// The speed aim is a measurement, reported here and in make bench,
	// not a test verdict: a shared host's load moves it. What must hold is
	// KubeVirt's 1 s default deadline, which every probe run above met.
	t.Logf("%s: probe median %s; aim %s (%s scaled by this host's load %.1fx)", v.spec.Name, med.Round(time.Millisecond), goal.Round(time.Millisecond), probeGoal, load)
	if slowest := pr[len(pr)-1]; slowest >= time.Second {
		t.Errorf("%s: guestcheck probe took %s through guest-exec, over KubeVirt's 1 s default timeoutSeconds", v.spec.Name, slowest.Round(time.Millisecond))
	}
}

// The harness must read both NOT READY forms the probe prints; under a
// loaded CI host the whole probe's deadline is what usually passes.
func TestParseProbeLine(t *testing.T) {
	for _, tc := range []struct {
		line              string
		failing, timedOut []string
		named             bool
	}{
		{"guestcheck probe: READY 4 checks (a,b,c,d) in 80 ms\n", nil, nil, false},
		{"guestcheck probe: NOT READY failing: cloud-init,fstab (cloud-init: fail: x; fstab: fail: y: z)\n",
			[]string{"cloud-init", "fstab"}, nil, true},
		{"guestcheck probe: NOT READY failing: fstab,ssh (fstab: fail: y; ssh: error: did not finish before the run's deadline)\n",
			[]string{"fstab", "ssh"}, []string{"ssh"}, true},
		{"guestcheck probe: NOT READY timed out after 500ms (raise --timeout or probe.timeout): cloud-init,systemd did not finish; failing: fstab (fstab: fail: y)\n",
			[]string{"fstab"}, []string{"cloud-init", "systemd"}, true},
		{"guestcheck probe: NOT READY timed out after 100ms (--timeout): cloud-init did not finish\n",
			nil, []string{"cloud-init"}, true},
		{"guestcheck probe: NOT READY failing: fstab (fstab: fail: y); warning: cloud-init (cloud-init: warn: cloud-init is still running (stage init))\n",
			[]string{"fstab", "cloud-init"}, nil, true},
	} {
		f, to, named := parseProbeLine(tc.line)
		if !slices.Equal(f, tc.failing) || !slices.Equal(to, tc.timedOut) || named != tc.named {
			t.Errorf("parseProbeLine(%q) = %q, %q, %v; want %q, %q, %v", tc.line, f, to, named, tc.failing, tc.timedOut, tc.named)
		}
	}
}
