package cloudinit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cloudinit "github.com/guestcheck/guestcheck/internal/checks/cloud-init"
	"github.com/guestcheck/guestcheck/internal/checks/cloud-init/cloudinittest"
	gfs "github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/cloudinitstatus"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// nsScript runs `cloud-init status --long --format json` in the private
// mount namespace that unshare made, over the case directory $1, so that
// cloud-init reads only the case's files and nothing on the host changes:
//   - /run is the case's run/ (read-only): /run/cloud-init/{status.json,
//     result.json,enabled,disabled} and /run/systemd/system, whose presence
//     is cloud-init's uses_systemd();
//   - /etc/cloud is the case's etc/cloud: an empty cloud.cfg (so the
//     default run_dir /run/cloud-init applies, whatever the host configures)
//     and the marker file cloud-init.disabled when the case has it;
//   - /var/lib/cloud is the case's (over /var/lib when the host has no
//     /var/lib/cloud to mount over): boot-finished, and nothing of the
//     instance config that read_cfg would merge;
//   - the kernel command line is $2, through cloud-init's own
//     DEBUG_PROC_CMDLINE override, which also keeps its container
//     detection (/proc/1/cmdline instead of /proc/cmdline) out of play;
//   - the environment is emptied, so no KERNEL_CMDLINE or other variable
//     of the host reaches it.
//
// The marker line on stderr tells a harness failure from a cloud-init crash.
const nsScript = `set -e
d=$1
mount --bind -o ro "$d/run" /run
mount --bind -o ro "$d/etc/cloud" /etc/cloud
if [ -d /var/lib/cloud ]; then
	mount --bind -o ro "$d/var/lib/cloud" /var/lib/cloud
else
	mount --bind -o ro "$d/var/lib" /var/lib
fi
echo "cidiff: namespace ready" >&2
exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBUG_PROC_CMDLINE="$2" "$3" status --long --format json
`

// legacyJSON is what cloud-init 22.4 prints for --format json.
type legacyJSON struct {
	Status         string   `json:"status"`
	BootStatusCode string   `json:"boot_status_code"`
	Datasource     *string  `json:"datasource"`
	Detail         string   `json:"detail"`
	Errors         []string `json:"errors"`
	LastUpdate     string   `json:"last_update"`
	ExtendedStatus *string  `json:"extended_status"`
}

// toolRun is one run of the real cloud-init.
type toolRun struct {
	rc      int
	out     legacyJSON
	crashed bool   // exited with a Python traceback instead of an answer
	crash   string // the traceback's last line
	dur     time.Duration
}

// diffNow is the fake system's wall clock: diffUptime after its boot.
var diffNow = time.Unix(diffBootEpoch+int64(diffUptime), 0).UTC()

// TestDiffersFromCloudInitOnlyAsDocumented generates a corpus of
// status.json / result.json / boot combinations (corpus_test.go), runs the
// installed cloud-init's `cloud-init status --long --format json` on each
// in a private mount namespace (Debian 12: cloud-init 22.4), reads the
// same files with guestcheck, and requires the same answer: status, exit
// code, errors in order, boot status code, datasource, last update and
// detail, with cloud-init crashing exactly where guestcheck reports the
// file unreadable. Every difference must be one of the documented ones
// (docs/checks/cloud-init.md, "Where guestcheck and cloud-init status
// differ"), recognised from the case's inputs; the test fails on any
// other, and also when a documented difference never shows, so that the
// corpus keeps covering them. The cloud-init check is run on every case
// too, and must report every error cloud-init lists, and a
// cloud-init-result-unreadable finding exactly when result.json exists but
// is not a usable result.
func TestDiffersFromCloudInitOnlyAsDocumented(t *testing.T) {
	testenv.RequireRoot(t, "runs cloud-init status in a private mount namespace over generated /run/cloud-init files")
	tool := testenv.Tool(t, "cloud-init", "cloud-init")
	unshare := testenv.Tool(t, "unshare", "util-linux")
	if st, err := os.Stat("/etc/cloud"); err != nil || !st.IsDir() {
		t.Fatalf("/etc/cloud missing (%v): the cloud-init package is not installed properly", err)
	}
	// The documented differences are 22.4's (23.4 changed the rules and
	// the output): refuse to compare with another release.
	ver, err := exec.Command(tool, "--version").CombinedOutput()
	if f := strings.Fields(string(ver)); err != nil || len(f) != 2 || !strings.HasPrefix(f[1], "22.4") {
		t.Fatalf("%s --version: %q (%v): this test encodes cloud-init 22.4's rules (Debian 12's package)", tool, ver, err)
	}
	corpus := buildCorpus()
	dirs := make([]string, len(corpus))
	for i := range corpus {
		dirs[i] = writeCase(t, &corpus[i])
	}

	start := time.Now()
	runs := make([]toolRun, len(corpus))
	errs := make([]error, len(corpus))
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 2; w++ { // the machine has 2 cores
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				runs[i], errs[i] = runCloudInit(unshare, tool, dirs[i], corpus[i].cmdline)
			}
		}()
	}
	for i := range corpus {
		work <- i
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start)
	var slowest time.Duration
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", corpus[i].name, err)
		}
		slowest = max(slowest, runs[i].dur)
	}
	t.Logf("corpus: %d cases (seed %d); cloud-init status ran in %s (2 at a time, slowest %s)",
		len(corpus), corpusSeed, elapsed.Round(10*time.Millisecond), slowest.Round(10*time.Millisecond))

	seen := map[string]int{}
	for i := range corpus {
		c := &corpus[i]
		t.Run(c.name, func(t *testing.T) {
			for _, d := range compareCase(t, c, dirs[i], runs[i]) {
				seen[d]++
			}
		})
	}
	var names []string
	for _, d := range documentedDifferences {
		names = append(names, fmt.Sprintf("%s=%d", d, seen[d]))
		if seen[d] == 0 {
			t.Errorf("documented difference %q never showed: the corpus no longer covers it", d)
		}
	}
	t.Logf("documented differences seen: %s", strings.Join(names, " "))
}

// The documented differences, by name; docs/checks/cloud-init.md explains
// each.
const (
	diffNaN            = "nan-timestamp"        // we refuse NaN, Python's json takes it
	diffErrorsString   = "errors-string"        // we refuse, 22.4 splits the string into characters
	diffRunningAfter   = "running-after-result" // 22.4: running while a stage is unfinished or named in "stage", even with result.json
	diffDisabledRun    = "disabled-but-running" // 22.4: a running status.json beats the disabled boot code
	diffDegradedExit   = "degraded-exit-2"      // recoverable_errors: we exit 2 (23.4+), 22.4 ignores them
	diffDetailOnErrors = "legacy-detail"        // 22.4's detail: the errors, else the running stage, before the datasource
)

var documentedDifferences = []string{diffNaN, diffErrorsString, diffRunningAfter, diffDisabledRun, diffDegradedExit, diffDetailOnErrors}

// writeCase lays the case out as a guest root (which guestcheck reads
// directly and cloud-init through the namespace's bind mounts).
func writeCase(t *testing.T, c *corpusCase) string {
	r := cloudinittest.New(t).Installed().Write("/etc/cloud/cloud.cfg", "").Mkdir("/var/lib/cloud/data").
		Write("/proc/uptime", fmt.Sprintf("%.2f %.2f\n", diffUptime, diffUptime*1.7)).
		Write("/proc/stat", fmt.Sprintf("cpu  1 2 3 4\nbtime %d\n", diffBootEpoch)).
		Write("/proc/cmdline", c.cmdline+"\n")
	if c.sysvinit {
		r.Remove("/run/systemd/system")
	}
	if c.marker {
		r.Write(cloudinit.DisabledMarkerPath, "")
	}
	if c.generator != "" {
		r.Write("/run/cloud-init/"+c.generator, "")
	}
	place := func(p string, b []byte, dir, link bool) {
		if link {
			data := "/var/lib/cloud/data/" + path.Base(p)
			r.Symlink("../../var/lib/cloud/data/"+path.Base(p), p)
			p = data
		}
		switch {
		case dir:
			r.Mkdir(p)
		case b != nil:
			r.Write(p, string(b))
		}
	}
	place(cloudinit.StatusPath, c.status, c.statusDir, c.statusLink)
	place(cloudinit.ResultPath, c.result, c.resultDir, c.resultLink)
	if c.bootFinished != "" {
		r.Write(cloudinit.BootFinishedPath, c.bootFinished).Chtime(cloudinit.BootFinishedPath, diffNow.Add(-time.Minute))
	}
	r.Mkdir("/run/cloud-init")
	return r.Dir
}

func runCloudInit(unshare, tool, dir, cmdline string) (toolRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, unshare, "-m", "--propagation", "private", "sh", "-c", nsScript, "sh", dir, cmdline, tool)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	run := toolRun{dur: time.Since(t0)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ctx.Err() == nil:
		run.rc = ee.ExitCode()
	default:
		return run, fmt.Errorf("cloud-init status: %v: %s", err, stderr.String())
	}
	if !strings.HasPrefix(stderr.String(), "cidiff: namespace ready\n") {
		return run, fmt.Errorf("namespace setup failed (exit %d): %s", run.rc, stderr.String())
	}
	tb := strings.TrimPrefix(stderr.String(), "cidiff: namespace ready\n")
	if strings.Contains(tb, "Traceback (most recent call last)") {
		if run.rc == 0 || stdout.Len() > 0 {
			return run, fmt.Errorf("traceback with exit %d and output %q", run.rc, stdout.String())
		}
		run.crashed = true
		lines := strings.Split(strings.TrimSpace(tb), "\n")
		run.crash = lines[len(lines)-1]
		return run, nil
	}
	if err := json.Unmarshal(stdout.Bytes(), &run.out); err != nil {
		return run, fmt.Errorf("cloud-init status printed no JSON (exit %d): %v\n%s\n%s", run.rc, err, stdout.String(), tb)
	}
	return run, nil
}

// compareCase compares one case and returns the documented differences it
// showed.
func compareCase(t *testing.T, c *corpusCase, dir string, run toolRun) []string {
	t.Logf("status.json: %s", clipBytes(c.status, c.statusDir, c.statusLink))
	t.Logf("result.json: %s", clipBytes(c.result, c.resultDir, c.resultLink))
	root := openRoot(t, dir)
	snap := cloudinit.Read(root, cloudinit.ReadOptions{Live: true, Now: func() time.Time { return diffNow }})
	var diffs []string
	note := func(d string) { diffs = append(diffs, d) }

	fs := cloudinit.Check.Run(context.Background(), &runner.Env{Root: root, Live: true, Config: config.Default(),
		Now: func() time.Time { return diffNow }})
	checkFileFindings(t, c, snap, fs)

	// 1. Whether the file can be judged at all.
	if run.crashed {
		if snap.StatusErr == nil {
			t.Fatalf("cloud-init crashed (%s), guestcheck read status.json fine", run.crash)
		}
		t.Logf("both refuse status.json: cloud-init %q, guestcheck %q", run.crash, snap.StatusErr.Err)
		return diffs
	}
	if snap.StatusErr != nil {
		switch {
		case c.gen != nil && c.gen.nanStart:
			note(diffNaN)
		case c.gen != nil && c.gen.errorsString:
			note(diffErrorsString)
		default:
			t.Fatalf("guestcheck refuses status.json (%v), cloud-init answered %+v", snap.StatusErr, run.out)
		}
		t.Logf("documented: guestcheck refuses status.json (%v), cloud-init says %q", snap.StatusErr.Err, run.out.Status)
		return diffs
	}
	if run.out.ExtendedStatus != nil {
		t.Fatalf("cloud-init printed extended_status, which 22.4 does not have")
	}
	st := snap.State()
	w := run.out

	// 2. The run state.
	ours := legacyStatus(st)
	if ours != w.Status {
		switch {
		case w.Status == "running" && st.Running == cloudinit.Disabled && legacyRunning(c):
			note(diffDisabledRun)
		case w.Status == "running" && (c.result != nil || c.resultDir):
			if !(c.gen != nil && (c.gen.stage != "" && c.gen.stage != "-" || c.gen.startedUnfinished())) {
				t.Fatalf("status = %q, cloud-init says %q (not a documented difference)", ours, w.Status)
			}
			note(diffRunningAfter)
		default:
			t.Errorf("status = %q, cloud-init says %q", ours, w.Status)
		}
	}
	// 3. The exit code.
	if got := st.ExitCode(); got != run.rc {
		if got == 2 && run.rc == 0 && len(st.Errors) == 0 && len(st.Recoverable) > 0 {
			note(diffDegradedExit)
		} else {
			t.Errorf("exit code = %d, cloud-init exited %d", got, run.rc)
		}
	}
	// 4. Errors, in cloud-init's order.
	if got := st.ErrorMessages(); !(len(got) == 0 && len(w.Errors) == 0) && !reflect.DeepEqual(got, w.Errors) {
		t.Errorf("errors = %q\ncloud-init says %q", got, w.Errors)
	}
	// 5. Boot status code, in 22.4's wording.
	if got := strings.Replace(string(st.Boot.Code), "-kernel-command-line", "-kernel-cmdline", 1); got != w.BootStatusCode {
		t.Errorf("boot_status_code = %q, cloud-init says %q", got, w.BootStatusCode)
	}
	// 6. Datasource (22.4 prints null while status.json has it null).
	wantDS := ""
	if w.Datasource != nil {
		wantDS = *w.Datasource
	}
	if st.Datasource != wantDS {
		t.Errorf("datasource = %q, cloud-init says %q", st.Datasource, wantDS)
	}
	// 7. Last update, rendered as cloud-init renders the raw number.
	if got := lastUpdate(st.LatestEvent); got != w.LastUpdate {
		t.Errorf("last_update = %q, cloud-init says %q", got, w.LastUpdate)
	}
	// 8. Detail: ours is 23.4+'s; 22.4's follows from the same facts.
	if st.Detail != w.Detail {
		if got := legacyDetail(st); got != w.Detail {
			t.Errorf("detail = %q (22.4 wording %q), cloud-init says %q", st.Detail, got, w.Detail)
		} else {
			note(diffDetailOnErrors)
		}
	}
	checkVerdict(t, st, fs, w.Status, diffs)
	if len(diffs) > 0 {
		t.Logf("documented differences: %s (cloud-init: %s, exit %d)", strings.Join(diffs, ", "), w.Status, run.rc)
	}
	return diffs
}

// legacyRunning is 22.4's running rule, in terms of the case: status.json
// exists and result.json does not, or a stage is named in "stage" or
// started without finishing.
func legacyRunning(c *corpusCase) bool {
	if c.status == nil && !c.statusDir {
		return false
	}
	if c.result == nil && !c.resultDir {
		return true
	}
	return c.gen != nil && (c.gen.stage != "" && c.gen.stage != "-" || c.gen.startedUnfinished())
}

// legacyStatus is State in 22.4's words: no extended status, "not run"
// for "not started", and "error" whatever the run state.
func legacyStatus(s *cloudinit.State) string {
	switch {
	case s.Condition == cloudinit.Errored:
		return "error"
	case s.Running == cloudinit.NotStarted:
		return "not run"
	}
	return string(s.Running)
}

// legacyDetail is 22.4's detail from the State's facts: the errors, one a
// line; else the running stage; else the datasource; else the boot reason.
func legacyDetail(s *cloudinit.State) string {
	switch {
	case len(s.Errors) > 0:
		return strings.Join(s.ErrorMessages(), "\n")
	case s.Stage != "":
		return "Running in stage: " + s.Stage
	case s.DatasourceRaw != "":
		return s.DatasourceRaw
	}
	return s.Boot.Reason
}

func lastUpdate(ts cloudinitstatus.Timestamp) string {
	if !ts.Set || ts.Raw <= 0 {
		return ""
	}
	return time.Unix(int64(ts.Raw), 0).UTC().Format("Mon, 02 Jan 2006 15:04:05 -0700")
}

// checkFileFindings: a broken status.json is cloud-init-status-unreadable,
// a broken result.json is cloud-init-result-unreadable, each once.
func checkFileFindings(t *testing.T, c *corpusCase, snap *cloudinit.Snapshot, fs []runner.Finding) {
	t.Helper()
	count := func(code, file string) int {
		n := 0
		for _, f := range fs {
			if f.Code == code && f.Detail["file"] != "" && strings.HasSuffix(f.Detail["file"], file) {
				n++
			}
		}
		return n
	}
	resultBroken := (c.result != nil || c.resultDir) && !c.resultValid
	if got := count("cloud-init-result-unreadable", cloudinit.ResultPath); got != b2i(resultBroken) {
		t.Errorf("%d cloud-init-result-unreadable findings, want %d\n%s", got, b2i(resultBroken), dump(fs))
	}
	if resultBroken != (snap.ResultErr != nil) {
		t.Errorf("result.json broken = %v, ResultErr = %v", resultBroken, snap.ResultErr)
	}
	if got, want := count("cloud-init-status-unreadable", cloudinit.StatusPath), b2i(snap.StatusErr != nil); got != want {
		t.Errorf("%d cloud-init-status-unreadable findings for status.json, want %d\n%s", got, want, dump(fs))
	}
}

// checkVerdict: the check says what cloud-init says (or, under a
// documented difference, what guestcheck's state says), reports each of
// cloud-init's errors as a module error, and carries the state in detail.
func checkVerdict(t *testing.T, st *cloudinit.State, fs []runner.Finding, status string, diffs []string) {
	t.Helper()
	if slices.Contains(diffs, diffRunningAfter) || slices.Contains(diffs, diffDisabledRun) {
		status = legacyStatus(st)
	}
	want := map[string]string{
		"error":    "cloud-init-module-error",
		"done":     "cloud-init-done",
		"running":  "cloud-init-running",
		"disabled": "cloud-init-disabled",
		"not run":  "cloud-init-not-started",
	}[status]
	if want == "" {
		t.Fatalf("cloud-init status %q not mapped", status)
	}
	if !hasCode(fs, want) {
		t.Errorf("cloud-init says %q, the check has no %s finding\n%s", status, want, dump(fs))
	}
	var modErrs []string
	for _, f := range fs {
		if f.Code == "cloud-init-module-error" {
			modErrs = append(modErrs, f.Detail["error"])
		}
		if f.Detail["extended_status"] != st.ExtendedStatus() || f.Detail["cloud_init_exit_code"] != strconv.Itoa(st.ExitCode()) {
			t.Errorf("%s: detail says %q / exit %s, state is %q / %d", f.Code, f.Detail["extended_status"],
				f.Detail["cloud_init_exit_code"], st.ExtendedStatus(), st.ExitCode())
		}
	}
	if !reflect.DeepEqual(modErrs, st.ErrorMessages()) && !(len(modErrs) == 0 && len(st.Errors) == 0) {
		t.Errorf("module-error findings %q, cloud-init lists %q", modErrs, st.ErrorMessages())
	}
	if worst := worstOf(fs); status == "error" && worst != runner.Fail {
		t.Errorf("cloud-init says error, the check's worst finding is %s\n%s", worst, dump(fs))
	}
}

func openRoot(t *testing.T, dir string) *gfs.Root {
	t.Helper()
	r, err := gfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func worstOf(fs []runner.Finding) runner.Status {
	sts := make([]runner.Status, len(fs))
	for i, f := range fs {
		sts[i] = f.Status
	}
	return reportv1.Worst(sts...)
}

func hasCode(fs []runner.Finding, code string) bool {
	for _, f := range fs {
		if f.Code == code {
			return true
		}
	}
	return false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func dump(fs []runner.Finding) string {
	var lines []string
	for _, f := range fs {
		lines = append(lines, fmt.Sprintf("  %s %s: %s", f.Status, f.Code, f.Message))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func clipBytes(b []byte, dir, link bool) string {
	switch {
	case link && b == nil && !dir:
		return "(a dangling symlink)"
	case link:
		return "(through a symlink) " + clipBytes(b, dir, false)
	case dir:
		return "(a directory)"
	case b == nil:
		return "(absent)"
	case len(b) > 300:
		return strconv.Quote(string(b[:300])) + "..."
	}
	return strconv.Quote(string(b))
}
