package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/image/imagetest"
	"github.com/guestcheck/guestcheck/internal/host/vmm"
	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// applianceName is the appliance QEMU's -name, on its command line.
const applianceName = "sealprep-appliance"

// The dynamic-user range a root run's QEMU gets a uid from.
const dynamicFirst, dynamicLast = 61184, 65519

// progressRE is an operation's progress line, which the appliance
// sends while it seals: "op: 2 done, 0 unchanged, 0 failed (60ms)".
var progressRE = regexp.MustCompile(`^[a-z0-9-]+: \d+ done, \d+ unchanged, \d+ failed`)

// stderrWatch keeps a run's stderr and when its first progress line came.
type stderrWatch struct {
	mu       sync.Mutex
	start    time.Time
	all      bytes.Buffer
	partial  []byte
	progress int
	firstAt  time.Duration
}

func (w *stderrWatch) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.Write(b)
	w.partial = append(w.partial, b...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		if progressRE.Match(w.partial[:i]) {
			if w.progress == 0 {
				w.firstAt = time.Since(w.start)
			}
			w.progress++
		}
		w.partial = w.partial[i+1:]
	}
}

// seen is how many progress lines came, and when the first did.
func (w *stderrWatch) seen() (int, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.progress, w.firstAt
}

func (w *stderrWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all.String()
}

// qemuSight is the appliance QEMU as a watched run saw it: its PID, and,
// once its seccomp filter was on, its status, command line and open
// files.
type qemuSight struct {
	pid    int
	at     time.Duration
	status map[string]string
	args   []string
	fds    []string
}

// watched is one sealprep run as a watcher saw it.
type watched struct {
	stdout   string
	stderr   string
	code     int
	signaled bool
	total    time.Duration
	qemu     qemuSight
	// progressAt is when the first progress line came (0: none).
	progressAt time.Duration
	// phase is where the run was when it was killed.
	phase string
}

// killPoint says when to SIGKILL a watched run, from what was seen so
// far: the time since the start, when QEMU was first seen and when the
// first progress line came (0: not yet).
type killPoint func(now, qemuAt, progressAt time.Duration) bool

// watchRun runs c (stdout and stderr are set here), polling /proc every
// 20 ms for the appliance QEMU it starts, and SIGKILLs it (the sealprep
// process, by its PID) at kill, when kill is not nil.
func watchRun(t *testing.T, c *exec.Cmd, kill killPoint) watched {
	t.Helper()
	var out bytes.Buffer
	ew := &stderrWatch{start: time.Now()}
	c.Stdout, c.Stderr = &out, ew
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var w watched
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	killed := false
	var err error
loop:
	for {
		select {
		case err = <-done:
			break loop
		case <-tick.C:
		}
		now := time.Since(ew.start)
		if w.qemu.pid == 0 {
			if pids := childAppliances(c.Process.Pid); len(pids) > 0 {
				w.qemu.pid, w.qemu.at = pids[0], now
			}
		}
		if w.qemu.pid != 0 && w.qemu.status == nil {
			w.qemu.look()
		} else if w.qemu.status != nil {
			// Its block layer may open the image after the first look
			// (a loaded host once showed QEMU 789 ms in without it):
			// keep the fullest set of descriptors seen while it runs.
			if fds := procFDs(w.qemu.pid); len(fds) > len(w.qemu.fds) {
				w.qemu.fds = fds
			}
		}
		n, first := ew.seen()
		if kill != nil && !killed && kill(now, w.qemu.at, first) {
			killed = true
			switch {
			case w.qemu.pid == 0:
				w.phase = fmt.Sprintf("before QEMU started (%v in)", now.Round(time.Millisecond))
			case n == 0:
				w.phase = fmt.Sprintf("QEMU booting, no operation done yet (%v in, QEMU started at %v)", now.Round(time.Millisecond), w.qemu.at.Round(time.Millisecond))
			default:
				w.phase = fmt.Sprintf("sealing, %d operations done (%v in)", n, now.Round(time.Millisecond))
			}
			c.Process.Signal(syscall.SIGKILL)
		}
	}
	w.total = time.Since(ew.start)
	_, w.progressAt = ew.seen()
	w.stdout, w.stderr = out.String(), ew.String()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		w.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			w.signaled = ws.Signal() == syscall.SIGKILL
		}
	default:
		t.Fatal(err)
	}
	return w
}

// look reads the QEMU's status, command line and open files once its
// seccomp filter is on (QEMU installs it early in its start-up, after
// the exec the watcher may have seen).
func (q *qemuSight) look() {
	st := procStatus(q.pid)
	if st["Seccomp"] != "2" {
		return
	}
	args := procArgs(q.pid)
	if !slices.Contains(args, applianceName) {
		return
	}
	q.status, q.args, q.fds = st, args, procFDs(q.pid)
}

// procArgs is a process's command line, split.
func procArgs(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// procStatus is a process's /proc status, field by field.
func procStatus(pid int) map[string]string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

// procFDs are the targets of a process's open descriptors.
func procFDs(pid int) []string {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil {
			out = append(out, l)
		}
	}
	return out
}

// procPPid is a process's parent (0 when it is gone).
func procPPid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...: comm may hold anything but the last ")".
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// pids are the running processes' IDs.
func pids() []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// childAppliances are the appliance QEMUs whose parent is pid.
func childAppliances(pid int) []int {
	var out []int
	for _, p := range pids() {
		if procPPid(p) == pid && slices.Contains(procArgs(p), applianceName) {
			out = append(out, p)
		}
	}
	return out
}

// appliancesLeft describes the appliance QEMUs still running that are a
// test's: one of known, or one holding a file under dir (the image).
// Another test's appliance on this machine is none of them.
func appliancesLeft(dir string, known ...int) []string {
	var out []string
	for _, p := range pids() {
		args := procArgs(p)
		if !slices.Contains(args, applianceName) {
			continue
		}
		mine := slices.Contains(known, p)
		for _, fd := range procFDs(p) {
			mine = mine || strings.HasPrefix(fd, dir+"/")
		}
		if mine {
			out = append(out, fmt.Sprintf("QEMU %d: %s", p, strings.Join(args, " ")))
		}
	}
	return out
}

// names are a directory's entries.
func names(t *testing.T, dir string) map[string]bool {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	for _, e := range ents {
		m[e.Name()] = true
	}
	return m
}

// newNames are dir's entries that before did not hold.
func newNames(t *testing.T, dir string, before map[string]bool) []string {
	t.Helper()
	var out []string
	for n := range names(t, dir) {
		if !before[n] {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

// applianceKillEnv is the environment of the kill test's runs: the
// test's own state directory, temporary directory and initramfs cache,
// so that whatever a run leaves there is seen.
func applianceKillEnv(state, tmp, cache string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "TMPDIR" && !strings.HasPrefix(k, "SEALPREP_") {
			env = append(env, kv)
		}
	}
	return append(env, "SEALPREP_STATE_DIR="+state, "TMPDIR="+tmp, "SEALPREP_APPLIANCE_CACHE="+cache)
}

// fsckImage checks the image's one ext4 partition (imagetest.Build puts
// it at 1 MiB) as a crash leaves it: on a copy, the journal is replayed
// (the appliance's kernel had it mounted), then a full e2fsck -fn must
// find nothing.
func fsckImage(t *testing.T, img string, qcow2 bool, sizeMiB int) {
	t.Helper()
	dir := t.TempDir()
	raw := img
	if qcow2 {
		raw = filepath.Join(dir, "whole.raw")
		if b, err := exec.Command("qemu-img", "convert", "-f", "qcow2", "-O", "raw", img, raw).CombinedOutput(); err != nil {
			t.Fatalf("qemu-img convert: %v\n%s", err, b)
		}
	}
	in, err := os.Open(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	part := filepath.Join(dir, "part.ext4")
	out, err := os.Create(part)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(out, io.NewSectionReader(in, 1<<20, int64(sizeMiB)<<20))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	// e2fsck's exit code 1 is "errors corrected": a replayed journal.
	if b, err := exec.Command("e2fsck", "-y", "-E", "journal_only", part).CombinedOutput(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 1 {
			t.Fatalf("e2fsck -E journal_only: %v\n%s", err, b)
		}
	}
	if b, err := exec.Command("e2fsck", "-fn", part).CombinedOutput(); err != nil {
		t.Errorf("e2fsck -fn after the journal's replay: %v\n%s", err, b)
	}
}

// The sealing appliance under SIGKILL: sealprep apply --image is killed
// (the process, by its PID; no signal handler runs) while the appliance
// seals, while it boots and before QEMU starts (somewhere in the image's
// vetting, the partition table's reading or the initramfs's building,
// the cache emptied), on a raw and a qcow2 image. After each kill the appliance's QEMU is gone within seconds (the
// kernel's parent-death signal), the run left no file or directory in
// /run, its temporary directory, its state directory or the initramfs
// cache, the image is consistent (qemu-img check for qcow2, and e2fsck
// on its filesystem once the journal is replayed, as a crash leaves
// it), and one whole apply then seals and verify agrees: the executor
// finishes what the killed run began.
func TestApplianceKilled(t *testing.T) {
	requireImage(t)
	requireAppliance(t)
	testenv.Tool(t, "e2fsck", "e2fsprogs")
	bin := sealprepBinary(t)
	// The two formats run side by side: each kill is timed by what its
	// own format's earlier runs took.
	for _, qcow2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "raw", true: "qcow2"}[qcow2], func(t *testing.T) {
			t.Parallel()
			applianceKills(t, bin, qcow2)
		})
	}
}

// applianceKills is TestApplianceKilled on one image format.
func applianceKills(t *testing.T, bin string, qcow2 bool) {
	const sizeMiB = 32
	dir := t.TempDir()
	state, tmp, cache := filepath.Join(dir, "state"), filepath.Join(dir, "tmp"), filepath.Join(dir, "cache")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	env := applianceKillEnv(state, tmp, cache)
	img := imagetest.Build(t, dir, "disk", []imagetest.Part{
		{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: sizeMiB, Tree: identityTree(t)},
	}, qcow2)
	// The pristine image is put back after each round, so that every
	// kill lands in a whole seal.
	pristine := img + ".pristine"
	copyFile(t, img, pristine)
	apply := func(kill killPoint) watched {
		c := exec.Command(bin, "apply", "--yes", "--image", img, "--ops", "-ssh-host-keys")
		c.Env = env
		return watchRun(t, c, kill)
	}
	// When QEMU started in the last whole run, and the shortest boot
	// (QEMU's start to the seal's first operation done) seen: the first
	// kill waits for the seal, the later ones are timed by the runs
	// before them, as the host's load allows.
	var qemuAt, boot, early time.Duration
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	points := []struct {
		name string
		kill killPoint
	}{
		{"during the seal", func(_, _, progress time.Duration) bool { return progress > 0 }},
		// Half the shortest boot seen, and never more than 800 ms after
		// QEMU's start: a boot under TCG takes seconds, and on a host
		// whose load changes the previous runs' boot says little.
		{"during boot", func(now, qemu, _ time.Duration) bool {
			return qemu > 0 && now-qemu >= min(boot/2, 800*time.Millisecond)
		}},
		{"before boot", func(now, _, _ time.Duration) bool { return now >= early }},
	}
	for _, p := range points {
		if p.name == "before boot" {
			// Anywhere from the image's vetting to the initramfs's
			// staging, with the cache emptied so that it is built again.
			early = qemuAt/10 + time.Duration(rng.Int63n(int64(qemuAt/2)+1))
			if err := os.RemoveAll(cache); err != nil {
				t.Fatal(err)
			}
		}
		runBefore := names(t, "/run")
		w := apply(p.kill)
		if !w.signaled {
			t.Fatalf("%s: the run ended (exit %d after %v) before it was killed\n%s\n%s", p.name, w.code, w.total, w.stdout, w.stderr)
		}
		t.Logf("killed %s: %s", p.name, w.phase)
		if p.name != "before boot" && w.qemu.pid == 0 {
			t.Errorf("%s: no appliance QEMU was seen before the kill, so none could be left", p.name)
		}
		deadline := time.Now().Add(5 * time.Second)
		left := appliancesLeft(dir, w.qemu.pid)
		for len(left) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			left = appliancesLeft(dir, w.qemu.pid)
		}
		if len(left) > 0 {
			t.Fatalf("%s: 5 s after sealprep's SIGKILL the appliance still runs:\n%s", p.name, strings.Join(left, "\n"))
		}
		var files []string
		files = append(files, newNames(t, "/run", runBefore)...)
		files = append(files, newNames(t, tmp, nil)...)
		if _, err := os.Stat(cache); err == nil {
			for _, n := range newNames(t, cache, nil) {
				if !strings.HasPrefix(filepath.Base(n), "initramfs-") {
					files = append(files, n)
				}
			}
		}
		files = append(files, imagetest.Leftovers(state, img)...)
		if len(files) > 0 {
			t.Errorf("%s: the killed run left behind:\n%s", p.name, strings.Join(files, "\n"))
		}
		if qcow2 {
			if b, err := exec.Command("qemu-img", "check", img).CombinedOutput(); err != nil {
				t.Errorf("%s: qemu-img check: %v\n%s", p.name, err, b)
			}
		}
		fsckImage(t, img, qcow2, sizeMiB)
		w = apply(nil)
		if w.code != seal.ExitOK || !strings.Contains(w.stdout, "SEALED") {
			t.Fatalf("%s: apply after the kill: exit %d\n%s\n%s", p.name, w.code, w.stdout, w.stderr)
		}
		if w.qemu.at > 0 && w.progressAt > w.qemu.at {
			qemuAt = w.qemu.at
			if b := w.progressAt - w.qemu.at; boot == 0 || b < boot {
				boot = b
			}
		}
		checkNoLeftovers(t, state, img)
		c := exec.Command(bin, "verify", "--image", img, "--ops", "-ssh-host-keys")
		c.Env = env
		if w = watchRun(t, c, nil); w.code != seal.ExitOK || !strings.Contains(w.stdout, "SEALED") || strings.Contains(w.stdout, "NOT-SEALED") {
			t.Fatalf("%s: verify after the kill and the apply: exit %d\n%s\n%s", p.name, w.code, w.stdout, w.stderr)
		}
		checkNoLeftovers(t, state, img)
		copyFile(t, pristine, img)
	}
}

// The appliance's QEMU is confined as the launcher says: while a root
// plan --image runs, its QEMU runs as a dynamic uid and gid of
// 61184-65519 (not root) with no supplementary group (KVM's at most), no
// capability, no_new_privs and the seccomp filter on (Seccomp 2), in a
// process group of its own; its command line holds -sandbox with
// vmm.Sandbox and -nic none, no network device, and no path of the image
// or of root's files: the disk is /dev/fdset, the kernel and initramfs
// /proc/self/fd, and of root's files it holds none open by name but the
// image it was given. The plan still ends PLANNED.
func TestApplianceConfined(t *testing.T) {
	requireImage(t)
	requireAppliance(t)
	t.Parallel()
	bin := sealprepBinary(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	img := imagetest.Build(t, dir, "disk", []imagetest.Part{
		{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 32, Tree: identityTree(t)},
	}, true)
	c := exec.Command(bin, "plan", "--image", img, "--ops", "-ssh-host-keys", "--format", "json")
	c.Env = append(os.Environ(), "SEALPREP_STATE_DIR="+state)
	w := watchRun(t, c, nil)
	var rep seal.Report
	if err := json.Unmarshal([]byte(w.stdout), &rep); w.code != seal.ExitOK || err != nil || rep.Status != seal.StatusPlanned || rep.Image == nil || rep.Image.Appliance == nil {
		t.Fatalf("plan: exit %d (%v)\n%s\n%s", w.code, err, w.stdout, w.stderr)
	}
	q := w.qemu
	if q.status == nil {
		t.Fatalf("no appliance QEMU with its seccomp filter on was seen in the %v the plan took (QEMU pid %d)", w.total, q.pid)
	}
	t.Logf("QEMU %d, seen %v into a %v plan: Uid %s, Gid %s, Groups %q, Seccomp %s", q.pid, q.at.Round(time.Millisecond), w.total.Round(time.Millisecond),
		q.status["Uid"], q.status["Gid"], q.status["Groups"], q.status["Seccomp"])
	inRange := func(field string) int {
		ids := strings.Fields(q.status[field])
		if len(ids) != 4 {
			t.Errorf("%s: %q", field, q.status[field])
			return -1
		}
		for _, s := range ids {
			if s != ids[0] {
				t.Errorf("%s: real, effective, saved and filesystem ids differ: %q", field, q.status[field])
			}
		}
		n, _ := strconv.Atoi(ids[0])
		if n < dynamicFirst || n > dynamicLast {
			t.Errorf("%s %d: not a dynamic id of %d-%d", field, n, dynamicFirst, dynamicLast)
		}
		return n
	}
	if uid, gid := inRange("Uid"), inRange("Gid"); uid != gid {
		t.Errorf("uid %d, gid %d: the jail gives both the same number", uid, gid)
	}
	if g := strings.Fields(q.status["Groups"]); len(g) > 1 {
		t.Errorf("supplementary groups %v: root's were not dropped", g)
	} else if len(g) == 1 {
		if st, err := os.Stat("/dev/kvm"); err != nil || fmt.Sprint(st.Sys().(*syscall.Stat_t).Gid) != g[0] {
			t.Errorf("supplementary group %s, which is not /dev/kvm's", g[0])
		}
	}
	for field, want := range map[string]string{"Seccomp": "2", "NoNewPrivs": "1", "CapEff": "0000000000000000", "CapPrm": "0000000000000000"} {
		if q.status[field] != want {
			t.Errorf("%s: %q, want %q", field, q.status[field], want)
		}
	}
	if pg, err := syscall.Getpgid(q.pid); err == nil && pg != q.pid {
		t.Errorf("QEMU %d is in process group %d, not one of its own", q.pid, pg)
	}
	checkApplianceArgs(t, q.args, img)
	imageOpen := false
	for _, fd := range q.fds {
		if fd == img {
			imageOpen = true
		}
		for _, root := range []string{"/boot/", "/lib/modules/", "/usr/lib/modules/", "/var/cache/sealprep/", filepath.Dir(bin) + "/"} {
			if strings.HasPrefix(fd, root) {
				t.Errorf("QEMU holds %s open by name: the kernel and initramfs are to be unnamed copies of its own", fd)
			}
		}
	}
	// The image open in QEMU is also how TestApplianceKilled knows a
	// QEMU left behind for its own.
	if !imageOpen {
		t.Errorf("QEMU does not hold the image %s: its descriptors are %q", img, q.fds)
	}
	checkNoLeftovers(t, state, img)
}

// checkApplianceArgs holds the appliance QEMU's command line to the
// confinement: the sandbox, no network, and no host path but QEMU's own
// binary, its descriptor sets and its descriptors.
func checkApplianceArgs(t *testing.T, args []string, img string) {
	t.Helper()
	after := func(opt string) []string {
		var v []string
		for i := 0; i+1 < len(args); i++ {
			if args[i] == opt {
				v = append(v, args[i+1])
			}
		}
		return v
	}
	if s := after("-sandbox"); len(s) != 1 || s[0] != vmm.Sandbox {
		t.Errorf("-sandbox %q, want %q", s, vmm.Sandbox)
	}
	if n := after("-nic"); len(n) != 1 || n[0] != "none" {
		t.Errorf("-nic %q, want none", n)
	}
	for i, a := range args {
		switch {
		case a == "-netdev" || a == "-net" || strings.Contains(a, "netdev") || strings.Contains(a, "virtio-net"):
			t.Errorf("a network in QEMU's command line: %q", a)
		case strings.Contains(a, img) || strings.Contains(a, filepath.Dir(img)) || strings.Contains(a, filepath.Base(img)):
			t.Errorf("the image's path in QEMU's command line: %q", a)
		case i > 0 && strings.HasPrefix(a, "/") && !strings.HasPrefix(a, "/proc/self/fd/") && !strings.HasPrefix(a, "/dev/fdset/"):
			t.Errorf("a host path in QEMU's command line: %q", a)
		}
	}
	for _, k := range []string{"-kernel", "-initrd"} {
		if v := after(k); len(v) != 1 || !strings.HasPrefix(v[0], "/proc/self/fd/") {
			t.Errorf("%s %q: not a descriptor", k, v)
		}
	}
	files := 0
	for _, b := range after("-blockdev") {
		var node map[string]any
		if err := json.Unmarshal([]byte(b), &node); err != nil {
			t.Errorf("-blockdev %s: %v", b, err)
			continue
		}
		if f, ok := node["filename"]; ok {
			files++
			if s, _ := f.(string); !strings.HasPrefix(s, "/dev/fdset/") {
				t.Errorf("-blockdev %s: the disk is not a descriptor set", b)
			}
		}
	}
	if files == 0 {
		t.Errorf("no -blockdev file node in %q", args)
	}
}

// The appliance needs no root: run by root as an unprivileged user
// (nobody, uid and gid 65534, with a home and cache of its own), plan
// --image on an image that user may read plans through the appliance,
// PLANNED with its "appliance" section, QEMU running as that user; and
// --trust-image-filesystems, which mounts on the host, is refused for
// that user with one line saying it needs root.
func TestApplianceAsUser(t *testing.T) {
	requireImage(t)
	requireAppliance(t)
	t.Parallel()
	bin := sealprepBinary(t)
	const id = 65534
	dir := t.TempDir()
	// The user passes through the test's directories (0711), and reads
	// the binary (the appliance's init too) and an image of its own.
	for _, p := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(p, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	userBin := filepath.Join(dir, "sealprep")
	copyFile(t, bin, userBin)
	home := filepath.Join(dir, "home")
	for _, err := range []error{os.Chmod(userBin, 0o755), os.Mkdir(home, 0o700), os.Chown(home, id, id)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	img := imagetest.Build(t, dir, "disk", []imagetest.Part{
		{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 32, Tree: identityTree(t)},
	}, true)
	if err := os.Chown(img, id, id); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(img, 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "HOME" && k != "TMPDIR" && !strings.HasPrefix(k, "XDG_") && !strings.HasPrefix(k, "SEALPREP_") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	asUser := func(args ...string) *exec.Cmd {
		c := exec.Command(userBin, args...)
		c.Env, c.Dir = env, home
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: id, Gid: id}}
		return c
	}
	w := watchRun(t, asUser("plan", "--image", img, "--ops", "-ssh-host-keys", "--format", "json"), nil)
	var rep seal.Report
	if err := json.Unmarshal([]byte(w.stdout), &rep); w.code != seal.ExitOK || err != nil || rep.Status != seal.StatusPlanned {
		t.Fatalf("plan --image as uid %d: exit %d (%v)\n%s\n%s", id, w.code, err, w.stdout, w.stderr)
	}
	if rep.Image == nil || rep.Image.Appliance == nil || rep.Image.Appliance.Kernel == "" || len(rep.Actions) == 0 {
		t.Errorf("plan as uid %d: no appliance section or no actions: %+v", id, rep.Image)
	}
	if w.qemu.status == nil {
		t.Errorf("no appliance QEMU with its seccomp filter on was seen (pid %d)", w.qemu.pid)
	} else if u := strings.Fields(w.qemu.status["Uid"]); len(u) == 0 || u[0] != strconv.Itoa(id) {
		t.Errorf("QEMU ran as uid %v, not the invoking user's %d", u, id)
	}
	t.Logf("plan --image as uid %d: %v (appliance %.1f s)", id, w.total.Round(time.Millisecond), rep.Image.Appliance.Seconds)
	var out, errb bytes.Buffer
	c := asUser("plan", "--image", img, "--trust-image-filesystems")
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := -1
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err == nil {
		code = 0
	}
	const msg = "--trust-image-filesystems needs root: it attaches loop devices and mounts filesystems on this host"
	if code != seal.ExitUsage || !strings.Contains(out.String(), "REFUSED") || strings.Count(out.String()+errb.String(), msg) != 1 || !strings.Contains(out.String(), "\n  [image] "+msg+"\n") {
		t.Errorf("--trust-image-filesystems as uid %d: exit %d (%v), want %d and one line %q\n%s\n%s", id, code, err, seal.ExitUsage, msg, out.String(), errb.String())
	}
}
