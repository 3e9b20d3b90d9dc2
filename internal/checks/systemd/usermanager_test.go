package systemd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	systemdfact "github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// userUnits is a start-up with a chain (a, then b, then c, beside d), an
// ordering cycle (x and y) and a unit that fails, all wanted by the user
// manager's default.target.
var userUnits = map[string]string{
	"a.service":      "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sleep 0.3\n",
	"b.service":      "[Unit]\nAfter=a.service\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sleep 0.4\n",
	"c.service":      "[Unit]\nAfter=b.service\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sleep 0.2\n",
	"d.service":      "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sleep 0.1\n",
	"chain.target":   "[Unit]\nWants=a.service b.service c.service d.service\nAfter=c.service d.service\n",
	"x.service":      "[Unit]\nAfter=y.service\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n",
	"y.service":      "[Unit]\nAfter=x.service\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n",
	"broken.service": "[Service]\nType=oneshot\nExecStart=/bin/false\n",
}

func systemdBinary(t *testing.T) string {
	for _, p := range []string{"/usr/lib/systemd/systemd", "/lib/systemd/systemd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	testenv.Missing(t, "tool:systemd", "systemd not found: install the Debian package systemd")
	return ""
}

// startUserManager runs `systemd --user` in a private mount namespace whose
// /run has systemd/system (sd_booted's test), with its runtime directory
// and units under dir, and returns the private socket's path.
func startUserManager(t *testing.T, dir string, units map[string]string, wanted []string) (socket string, env []string, log *syncBuffer) {
	t.Helper()
	sd := systemdBinary(t)
	unshare := testenv.Tool(t, "unshare", "util-linux")
	runtime := filepath.Join(dir, "run")
	unitDir := filepath.Join(dir, "config", "systemd", "user")
	wants := filepath.Join(unitDir, "default.target.wants")
	for _, d := range []string{runtime, wants} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range units {
		if err := os.WriteFile(filepath.Join(unitDir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range wanted {
		if err := os.Symlink(filepath.Join(unitDir, name), filepath.Join(wants, name)); err != nil {
			t.Fatal(err)
		}
	}
	env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "HOME="+dir)
	// The console target is /dev/console, not stderr; stderr keeps what
	// sh and unshare say if the start fails.
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", "sh", "-c",
		"mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system && exec "+sd+" --user --log-target=null")
	cmd.Env = env
	log = &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// SIGTERM lets the manager stop its units; unshare and sh exec'd
		// into it, so the pid is the manager's.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("systemd --user:\n%s", log.String())
		}
	})
	return filepath.Join(runtime, "systemd", "private"), env, log
}

// syncBuffer is a bytes.Buffer the manager's output goroutines and the
// test may use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// analyzeLink is one line of systemd-analyze critical-chain.
type analyzeLink struct {
	level    int
	unit     string
	at, took time.Duration
	hasTook  bool
}

func parseSpan(s string) (time.Duration, error) {
	var total time.Duration
	for _, tok := range strings.Fields(s) {
		i := strings.IndexFunc(tok, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' })
		if i <= 0 {
			return 0, fmt.Errorf("bad span %q", s)
		}
		n, err := strconv.ParseFloat(tok[:i], 64)
		if err != nil {
			return 0, err
		}
		unit := map[string]time.Duration{"min": time.Minute, "s": time.Second, "ms": time.Millisecond, "us": time.Microsecond, "μs": time.Microsecond}[tok[i:]]
		if unit == 0 {
			return 0, fmt.Errorf("bad unit in %q", s)
		}
		total += time.Duration(n * float64(unit))
	}
	return total, nil
}

func parseAnalyze(t *testing.T, out string) []analyzeLink {
	var links []analyzeLink
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		i := strings.IndexFunc(l, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' })
		if i < 0 || !strings.Contains(l, "@") {
			continue
		}
		// Each level indents by two cells ("└─", "│ ", "  ").
		level := len([]rune(l[:i])) / 2
		rest := l[i:]
		name, spans, _ := strings.Cut(rest, " @")
		at, took, hasTook := spans, "", false
		if a, b, ok := strings.Cut(spans, " +"); ok {
			at, took, hasTook = a, b, true
		}
		al := analyzeLink{level: level, unit: name, hasTook: hasTook}
		var err error
		if al.at, err = parseSpan(at); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if hasTook {
			if al.took, err = parseSpan(took); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
		}
		links = append(links, al)
	}
	return links
}

// TestAgainstUserManager compares the check with a real systemd: the
// critical chain with `systemd-analyze critical-chain`, the failed unit
// and the degraded state with `systemctl`, and the ordering cycle that
// systemd itself reports ("Found ordering cycle") with Cycles.
func TestAgainstUserManager(t *testing.T) {
	testenv.RequireRoot(t, "a private mount namespace for systemd --user needs root")
	analyze := testenv.Tool(t, "systemd-analyze", "systemd")
	socket, env, _ := startUserManager(t, t.TempDir(), userUnits, []string{"chain.target", "x.service", "y.service", "broken.service"})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, f := gatherFinished(ctx, t, socket)

	ours := sameChainAsAnalyze(ctx, t, analyze, env, f)
	onChain := map[string]bool{}
	for _, l := range ours {
		onChain[l.Unit] = true
	}
	for _, u := range []string{"chain.target", "c.service", "b.service", "a.service"} {
		if !onChain[u] {
			t.Errorf("%s is not on our chain %v", u, ours)
		}
	}

	out2 := Judge(f)
	validate(t, out2)
	want(t, out2, CodeDegraded.ID, runner.Fail, "broken.service (exit-code)")
	failed := want(t, out2, CodeUnitFailed.ID, runner.Fail, "broken.service failed (result: exit-code)")
	if failed.Detail["journal"] != "journalctl -b -u broken.service" {
		t.Errorf("journal detail = %q", failed.Detail["journal"])
	}
	want(t, out2, CodeCycle.ID, runner.Fail, "ordering cycle: x.service, y.service")
	// systemd itself found it and broke it by deleting one of the two
	// start jobs (what the journal's "Found ordering cycle" reports): one
	// unit ran, the other never began activating.
	// Gather read only the timestamps its verdicts need: read x's and y's.
	ts, err := c.ReadTimes(ctx, map[string]systemdfact.TimeFields{"x.service": systemdfact.AllTimes, "y.service": systemdfact.AllTimes})
	if err != nil {
		t.Fatal(err)
	}
	x, y := f.Units["x.service"].WithTimes(ts["x.service"]), f.Units["y.service"].WithTimes(ts["y.service"])
	if (x.ActiveState == "active") == (y.ActiveState == "active") || min(x.InactiveExitMono, y.InactiveExitMono) != 0 {
		t.Errorf("systemd did not break the x/y cycle: x %s (%d), y %s (%d)", x.ActiveState, x.InactiveExitMono, y.ActiveState, y.InactiveExitMono)
	}
	want(t, out2, CodeBootFinished.ID, runner.Pass)
}

// TestGeneratedAgainstUserManager runs a start-up of 120 generated units
// (seeded: services ordered after a few earlier ones, some slow) and
// checks that the timestamps Gather reads on demand give systemd-analyze's
// critical chain, and the same findings as reading every unit's.
func TestGeneratedAgainstUserManager(t *testing.T) {
	testenv.RequireRoot(t, "a private mount namespace for systemd --user needs root")
	analyze := testenv.Tool(t, "systemd-analyze", "systemd")
	r := rand.New(rand.NewPCG(7, 7))
	units := map[string]string{}
	var wanted []string
	const n = 120
	for i := range n {
		var after []string
		for range r.IntN(4) {
			if i > 0 {
				after = append(after, fmt.Sprintf("g%03d.service", r.IntN(i)))
			}
		}
		run := "/bin/true"
		if r.IntN(5) == 0 {
			run = fmt.Sprintf("/bin/sleep 0.0%d", 1+r.IntN(5))
		}
		name := fmt.Sprintf("g%03d.service", i)
		units[name] = "[Unit]\nAfter=" + strings.Join(after, " ") + "\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=" + run + "\n"
		wanted = append(wanted, name)
	}
	socket, env, _ := startUserManager(t, t.TempDir(), units, wanted)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, lazy := gatherFinished(ctx, t, socket)
	sameChainAsAnalyze(ctx, t, analyze, env, lazy)

	full := lazy
	full.Units = map[string]systemdfact.UnitInfo{}
	all := map[string]systemdfact.TimeFields{}
	for name := range lazy.Units {
		all[name] = systemdfact.AllTimes
	}
	ts, err := c.ReadTimes(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for name, u := range lazy.Units {
		full.Units[name] = u.WithTimes(ts[name])
		if u.Read != 0 {
			read++
		}
	}
	if diff := cmp.Diff(Judge(full), Judge(lazy)); diff != "" {
		t.Errorf("findings (-every timestamp +read on demand):\n%s", diff)
	}
	t.Logf("timestamps read of %d of %d loaded units", read, len(lazy.Units))
}

// gatherFinished connects to the user manager at socket once it has
// finished starting and gathers the facts.
func gatherFinished(ctx context.Context, t *testing.T, socket string) (*systemdfact.Client, Facts) {
	t.Helper()
	waitSocket(ctx, t, socket)
	// A Client keeps its first dial's outcome, and the socket file exists
	// (bound) a moment before the manager listens: dial afresh until the
	// manager answers and has finished starting.
	var c *systemdfact.Client
	for {
		c = systemdfact.NewPrivate(socket)
		st, err := c.State(ctx)
		if err == nil && st.FinishMonotonic > 0 {
			break
		}
		_ = c.Close()
		if ctx.Err() != nil {
			t.Fatalf("user manager did not finish starting: %+v %v", st, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Cleanup(func() { _ = c.Close() })

	root, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	f := Gather(ctx, &runner.Env{Root: root, Live: true, Systemd: c})
	if f.Err != nil || f.UnitsErr != nil {
		t.Fatalf("Gather: %v %v", f.Err, f.UnitsErr)
	}
	return c, f
}

// sameChainAsAnalyze checks our critical chain of f against
// `systemd-analyze --user critical-chain` and returns ours.
func sameChainAsAnalyze(ctx context.Context, t *testing.T, analyze string, env []string, f Facts) []Link {
	t.Helper()
	cmd := exec.CommandContext(ctx, analyze, "--user", "critical-chain", "--no-pager")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze: %v\n%s", err, out)
	}
	real := parseAnalyze(t, string(out))
	ours := CriticalChain(f.Units, f.DefaultTarget, f.State.UserspaceMonotonic, f.State.FinishMonotonic)
	t.Logf("systemd-analyze --user critical-chain:\n%s", out)
	if len(real) == 0 || len(ours) == 0 {
		t.Fatalf("empty chain: ours %v", ours)
	}
	// Walk systemd-analyze's tree along our chain: at each level our unit
	// must be one it printed there (several only on exact ties), with the
	// same times to its millisecond rounding.
	for i, l := range ours {
		var match *analyzeLink
		for j := range real {
			if real[j].level == i && real[j].unit == l.Unit {
				match = &real[j]
			}
		}
		if match == nil {
			t.Errorf("link %d: ours %s, systemd-analyze has no such unit at that level", i, l.Unit)
			continue
		}
		at := time.Duration(l.At) * time.Microsecond
		if d := at - match.at; d > time.Millisecond || d < -time.Millisecond {
			t.Errorf("%s: @%s, systemd-analyze @%s", l.Unit, at, match.at)
		}
		took := time.Duration(l.Took) * time.Microsecond
		if match.hasTook {
			if d := took - match.took; d > time.Millisecond || d < -time.Millisecond {
				t.Errorf("%s: +%s, systemd-analyze +%s", l.Unit, took, match.took)
			}
		} else if took >= time.Millisecond {
			t.Errorf("%s: +%s, systemd-analyze prints none", l.Unit, took)
		}
	}
	maxLevel := 0
	for _, r := range real {
		maxLevel = max(maxLevel, r.level)
	}
	if maxLevel != len(ours)-1 {
		t.Errorf("systemd-analyze's chain is %d deep, ours %d", maxLevel+1, len(ours))
	}
	return ours
}

// waitSocket waits for the manager's private socket file.
func waitSocket(ctx context.Context, t *testing.T, socket string) {
	t.Helper()
	for {
		if _, err := os.Stat(socket); err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatal("systemd --user did not create its private socket")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStuckJobAgainstUserManager starts a user manager whose start-up
// waits on a 30-second unit, and checks the jobs and their age as a real
// systemd reports them: within the budget the boot is in progress; past
// it, the running start job is stuck, aged on CLOCK_MONOTONIC against the
// unit's InactiveExitTimestampMonotonic.
func TestStuckJobAgainstUserManager(t *testing.T) {
	testenv.RequireRoot(t, "a private mount namespace for systemd --user needs root")
	units := map[string]string{"slow.service": "[Service]\nType=oneshot\nExecStart=/bin/sleep 30\n"}
	socket, _, _ := startUserManager(t, t.TempDir(), units, []string{"slow.service"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitSocket(ctx, t, socket)
	var c *systemdfact.Client
	for {
		c = systemdfact.NewPrivate(socket)
		js, err := c.Jobs(ctx)
		running := false
		for _, j := range js {
			running = running || (j.Unit == "slow.service" && j.State == "running")
		}
		if err == nil && running {
			break
		}
		_ = c.Close()
		if ctx.Err() != nil {
			t.Fatalf("slow.service's start job never ran: %v %v", js, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Cleanup(func() { _ = c.Close() })
	root, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	env := &runner.Env{Root: root, Live: true, Systemd: c}

	f := Gather(ctx, env)
	if f.Err != nil || f.UnitsErr != nil {
		t.Fatalf("Gather: %v %v", f.Err, f.UnitsErr)
	}
	if f.State.FinishMonotonic != 0 || f.State.SystemState != "starting" {
		t.Fatalf("state %+v, want a start-up in progress", f.State)
	}
	f.Budget = time.Minute
	out := Judge(f)
	validate(t, out)
	want(t, out, CodeBootInProgress.ID, runner.Warn, "has not finished yet", "1 job(s) running")

	time.Sleep(1200 * time.Millisecond)
	f = Gather(ctx, env)
	f.Budget = time.Second
	out = Judge(f)
	validate(t, out)
	st := want(t, out, CodeJobStuck.ID, runner.Fail, "start job for slow.service has been running for")
	age, err := time.ParseDuration(st.Detail["age"])
	if err != nil || age < time.Second || age > 25*time.Second {
		t.Errorf("age %q (%v), want between 1s and 25s", st.Detail["age"], err)
	}
}
