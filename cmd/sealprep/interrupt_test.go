package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	iofs "io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/seal"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// sealprepBinary builds this command once per test binary, for the tests
// that need a real process to kill; $SEALPREP_BIN names a prebuilt one.
func sealprepBinary(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("SEALPREP_BIN"); p != "" {
		return p // a prebuilt binary, e.g. for a user without the module cache
	}
	if _, err := exec.LookPath("go"); err != nil {
		tb.Skip("the go tool is not on PATH: cannot build the binary to kill")
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "sealprep-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "sealprep")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		tb.Fatal(binErr)
	}
	return binPath
}

func planCount(t *testing.T, bin, dir string) int {
	t.Helper()
	out, err := exec.Command(bin, "plan", "--root", dir, "--format", "json").Output()
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	var r seal.Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	return len(r.Actions)
}

// opDoneRE is apply's progress line for an operation done, "op: tally
// (duration)".
var opDoneRE = regexp.MustCompile(`^[a-z0-9-]+: .*\(\S+\)\n$`)

// killApply starts apply on dir and SIGKILLs it: after delay, or, when
// afterOps > 0, as soon as apply has reported that many operations done.
// Its progress lines are written unbuffered as each operation finishes,
// so the second way lands inside the run however loaded the machine is,
// where a delay calibrated on a quiet run may fall wholly before the
// first change or after the last.
func killApply(t *testing.T, bin, dir string, delay time.Duration, afterOps int) string {
	t.Helper()
	cmd := exec.Command(bin, "apply", "--yes", "--root", dir)
	progress, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	how := "after " + delay.String()
	if afterOps > 0 {
		how = fmt.Sprintf("after %d operations", afterOps)
		rd := bufio.NewReader(progress)
		for n := 0; n < afterOps; {
			line, err := rd.ReadString('\n')
			if err != nil {
				break // apply ended first: nothing left to interrupt
			}
			if opDoneRE.MatchString(line) {
				n++
			}
		}
	} else {
		go io.Copy(io.Discard, progress)
		time.Sleep(delay)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	return how
}

// TestInterruptedApplyConverges kills `apply` with SIGKILL at 20 random
// points of its run; each time a second apply must finish (exit 0), verify
// must pass and a re-plan must be empty. The seed is fixed and logged;
// SEALPREP_INTERRUPT_SEED overrides it to replay a failure.
func TestInterruptedApplyConverges(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs 60 processes; skipped with -short")
	}
	bin := sealprepBinary(t)
	seed := int64(20260601)
	if s := os.Getenv("SEALPREP_INTERRUPT_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = v
	}
	t.Logf("seed %d (set SEALPREP_INTERRUPT_SEED to replay)", seed)
	rng := rand.New(rand.NewSource(seed))
	const nLogs, nTmp = 3000, 600

	// Calibrate: how long one uninterrupted apply takes here.
	cal := scratch(t)
	makeTree(t, cal, nLogs, nTmp)
	total := planCount(t, bin, cal)
	start := time.Now()
	if out, err := exec.Command(bin, "apply", "--yes", "--root", cal).CombinedOutput(); err != nil {
		t.Fatalf("calibration apply: %v\n%s", err, out)
	}
	full := time.Since(start)
	t.Logf("uninterrupted apply: %v for %d actions", full, total)

	midRun := 0
	for i := 0; i < 20; i++ {
		dir := scratch(t)
		makeTree(t, dir, nLogs, nTmp)
		// Every other kill waits for apply's own progress, so that some
		// land mid-run on a loaded machine too.
		delay, after := time.Duration(rng.Int63n(int64(full))), 0
		if i%2 == 1 {
			after = 1 + rng.Intn(3)
		}
		how := killApply(t, bin, dir, delay, after)
		left := planCount(t, bin, dir)
		if left > 0 && left < total {
			midRun++
		}
		out, err := exec.Command(bin, "apply", "--yes", "--root", dir).CombinedOutput()
		if err != nil {
			t.Fatalf("kill %d %s (%d of %d actions left): second apply failed: %v\n%s", i, how, left, total, err, lastLines(out, 30))
		}
		if out, err := exec.Command(bin, "verify", "--root", dir).CombinedOutput(); err != nil {
			t.Fatalf("kill %d %s: verify failed: %v\n%s", i, how, err, lastLines(out, 30))
		}
		if n := planCount(t, bin, dir); n != 0 {
			t.Fatalf("kill %d: plan after the second apply has %d actions", i, n)
		}
		filepath.WalkDir(dir, func(p string, de iofs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, fs.TempSuffix) {
				t.Errorf("kill %d: temporary file left: %s", i, p)
			}
			return nil
		})
		os.RemoveAll(dir)
	}
	t.Logf("%d of 20 kills landed mid-run", midRun)
	if midRun == 0 {
		t.Fatal("no kill landed while apply was working: the test exercised nothing")
	}
}

func lastLines(b []byte, n int) string {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// BenchmarkApplyBinary runs `sealprep apply --yes --root` as a process on
// a Debian-like tree with 10,000 log files and 1,000 files in /tmp, built
// afresh (untimed) for each iteration. It reports the median wall time
// and the peak RSS of the process (getrusage ru_maxrss).
func BenchmarkApplyBinary(b *testing.B) {
	bin := sealprepBinary(b)
	var walls []time.Duration
	var peak int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := scratch(b)
		makeTree(b, dir, 10000, 1000)
		b.StartTimer()
		start := time.Now()
		cmd := exec.Command(bin, "apply", "--yes", "--root", dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("apply: %v\n%s", err, lastLines(out, 20))
		}
		walls = append(walls, time.Since(start))
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > peak {
			peak = ru.Maxrss
		}
		b.StopTimer()
		os.RemoveAll(dir)
		b.StartTimer()
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	b.ReportMetric(float64(walls[len(walls)/2].Milliseconds()), "median-ms")
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
}
