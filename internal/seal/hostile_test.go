package seal

import (
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// outsideSentinel builds, outside the root, a mirror of the debian fixture
// (so every file an operation looks for exists out there too) and returns
// its path and hash.
func outsideSentinel(t *testing.T) (string, string) {
	t.Helper()
	s := filepath.Join(scratchDir(t), "sentinel")
	build(t, s, debianNodes())
	return s, hashTree(t, s, true)
}

// touchedPaths lists every path the debian fixture's full plan acts on,
// and every parent of those paths: each is a component an operation
// resolves.
func touchedPaths(t *testing.T) []string {
	_, root := newRoot(t, debianNodes())
	plan := MakePlan(context.Background(), root, allOps(t), Options{Force: true})
	set := map[string]bool{}
	for _, a := range plan.Actions {
		for p := a.Path; p != "/" && p != "." && p != ""; p = path.Dir(p) {
			set[p] = true
		}
	}
	// Directories operations list even when they plan nothing here.
	for _, p := range []string{"/var/lib/dhclient", "/var/db", "/var/lib/NetworkManager", "/etc/cloud/clean.d",
		"/etc/systemd/system", "/usr/lib/systemd/system", "/etc/sysconfig/network-scripts", "/var/spool/abrt"} {
		set[p] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// TestHostileSymlinkOutAtEveryComponent replaces, one at a time, every
// path component an operation touches with a symlink out of the root:
// absolute and relative, to a file and to a directory of a sentinel tree
// that mirrors the fixture. After each apply the sentinel must be
// bit-for-bit unchanged.
func TestHostileSymlinkOutAtEveryComponent(t *testing.T) {
	sentinel, want := outsideSentinel(t)
	paths := touchedPaths(t)
	if len(paths) < 40 {
		t.Fatalf("only %d touched paths: the fixture no longer exercises the operations", len(paths))
	}
	climb := strings.Repeat("../", 40)
	runs := 0
	for _, p := range paths {
		same := sentinel + p
		// The same object outside, absolute and relative; and the other
		// kind (a directory for a file and the reverse), alternating
		// absolute and relative from one path to the next.
		variants := map[string]string{
			"abs-same": same,
			"rel-same": climb + strings.TrimPrefix(same, "/"),
		}
		other := sentinel + "/etc"
		if st, err := os.Stat(same); err == nil && st.IsDir() {
			other = sentinel + "/etc/passwd"
		}
		if runs%2 == 0 {
			variants["abs-other-kind"] = other
		} else {
			variants["rel-other-kind"] = climb + strings.TrimPrefix(other, "/")
		}
		for name, target := range variants {
			dir := scratchDir(t)
			build(t, dir, debianNodes())
			hp := hostPath(t, dir, p)
			if err := os.RemoveAll(hp); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, hp); err != nil {
				t.Fatal(err)
			}
			root := openRoot(t, dir)
			applyAll(t, root, allOps(t), Options{Force: true})
			root.Close()
			runs++
			if got := hashTree(t, sentinel, true); got != want {
				t.Fatalf("%s -> %s (%s): the sentinel outside the root changed", p, target, name)
			}
		}
	}
	t.Logf("%d applies over %d touched paths; sentinel unchanged", runs, len(paths))
}

// TestHostileVarLogToRoot: /var/log links to "/". Logs are walked from
// /var/log, which is not followed, so nothing in the image's / is
// truncated, and nothing outside changes.
func TestHostileVarLogToRoot(t *testing.T) {
	sentinel, want := outsideSentinel(t)
	for _, target := range []string{"/", "../..", sentinel} {
		dir := scratchDir(t)
		build(t, dir, debianNodes())
		if err := os.RemoveAll(filepath.Join(dir, "var/log")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, "var/log")); err != nil {
			t.Fatal(err)
		}
		keep := map[string]string{}
		for _, p := range []string{"etc/passwd", "etc/group", "usr/lib/os-release", "usr/bin/cloud-init", "etc/ssh/sshd_config"} {
			b, err := os.ReadFile(filepath.Join(dir, p))
			if err != nil {
				t.Fatal(err)
			}
			keep[p] = string(b)
		}
		root := openRoot(t, dir)
		plan, _ := applyAll(t, root, allOps(t), Options{Force: true})
		for _, a := range plan.Actions {
			if a.Op == "logfiles" && strings.HasPrefix(a.Path, "/var/log/") {
				t.Errorf("/var/log -> %s: logfiles planned %s %s", target, a.Kind, a.Path)
			}
		}
		for p, c := range keep {
			if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != c {
				t.Errorf("/var/log -> %s: %s changed (%v)", target, p, err)
			}
		}
		if got := hashTree(t, sentinel, true); got != want {
			t.Fatalf("/var/log -> %s: the sentinel outside the root changed", target)
		}
	}
}

// TestHostileSwaps puts directories where files are expected and files
// where directories are: nothing is removed that the operation does not
// name, and the apply reports no failure because the plan saw the swap.
func TestHostileSwaps(t *testing.T) {
	nodes := debianNodes()
	drop := map[string]bool{"/etc/machine-id": true, "/etc/ssh/ssh_host_rsa_key": true, "/var/lib/dbus/machine-id": true,
		"/etc/hostname": true, "/var/lib/systemd/random-seed": true}
	var kept []node
	for _, n := range nodes {
		if !drop[n.Path] && !strings.HasPrefix(n.Path, "/tmp/") && !strings.HasPrefix(n.Path, "/var/lib/cloud/") && !strings.HasPrefix(n.Path, "/var/log/journal") {
			kept = append(kept, n)
		}
	}
	kept = append(kept,
		f("/etc/machine-id/inner", "dir where a file was"),
		f("/etc/ssh/ssh_host_rsa_key/inner", "x"),
		f("/var/lib/dbus/machine-id/inner", "x"),
		f("/etc/hostname/inner", "x"),
		f("/var/lib/systemd/random-seed/inner", "x"),
		f("/tmp", "file where a dir was"),
		f("/var/lib/cloud", "file"),
		f("/var/log/journal", "file"),
	)
	dir, root := newRoot(t, kept)
	_, res := applyAll(t, root, allOps(t), Options{Force: true})
	for _, r := range res {
		if r.Status == Failed {
			t.Errorf("%s %s failed: %s", r.Kind, r.Path, r.Error)
		}
	}
	for _, p := range []string{"etc/machine-id/inner", "etc/ssh/ssh_host_rsa_key/inner", "var/lib/dbus/machine-id/inner",
		"etc/hostname/inner", "var/lib/systemd/random-seed/inner", "tmp", "var/lib/cloud", "var/log/journal"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s should be left alone: %v", p, err)
		}
	}
}

// TestHostileSpecialFiles plants FIFOs (and, as root, device nodes) where
// regular files are expected and in /tmp. None is ever opened (a FIFO
// opened for writing would block the apply), device nodes are never
// removed, FIFOs in /tmp are.
func TestHostileSpecialFiles(t *testing.T) {
	nodes := debianNodes()
	var kept []node
	for _, n := range nodes {
		if n.Path != "/etc/hostname" && n.Path != "/var/log/syslog" && n.Path != "/etc/machine-id" && n.Path != "/var/lib/systemd/random-seed" {
			kept = append(kept, n)
		}
	}
	kept = append(kept,
		node{"/etc/hostname", 'p', "", 0},
		node{"/var/log/syslog", 'p', "", 0},
		node{"/etc/machine-id", 'p', "", 0},
		node{"/tmp/fifo", 'p', "", 0},
		node{"/tmp/sub2/fifo", 'p', "", 0},
	)
	devs := isRoot()
	if devs {
		kept = append(kept,
			node{"/tmp/null", 'c', "1:3", 0},
			node{"/tmp/sub3/null", 'c', "1:3", 0},
			f("/tmp/sub3/file", "x"),
			node{"/var/log/mem", 'c', "1:1", 0},
			node{"/var/lib/systemd/random-seed", 'c', "1:3", 0},
		)
	} else {
		t.Log("not root: device-node subcases skipped (mknod needs CAP_MKNOD)")
	}
	dir := scratchDir(t)
	build(t, dir, kept)
	root := openRoot(t, dir)
	done := make(chan []Result, 1)
	go func() {
		_, res := applyAll(t, root, allOps(t), Options{Force: true})
		done <- res
	}()
	var res []Result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("apply blocked: a FIFO was opened")
	}
	for _, r := range res {
		if r.Status == Failed {
			t.Errorf("%s %s failed: %s", r.Kind, r.Path, r.Error)
		}
	}
	for _, p := range []string{"etc/hostname", "var/log/syslog", "etc/machine-id"} {
		if st, err := os.Lstat(filepath.Join(dir, p)); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("%s: FIFO should be left alone (%v)", p, err)
		}
	}
	for _, p := range []string{"tmp/fifo", "tmp/sub2"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s should be removed from /tmp: %v", p, err)
		}
	}
	if devs {
		for _, p := range []string{"tmp/null", "tmp/sub3/null", "var/log/mem", "var/lib/systemd/random-seed"} {
			if st, err := os.Lstat(filepath.Join(dir, p)); err != nil || st.Mode()&os.ModeDevice == 0 {
				t.Errorf("%s: device node should stay (%v)", p, err)
			}
		}
		if _, err := os.Lstat(filepath.Join(dir, "tmp/sub3/file")); !os.IsNotExist(err) {
			t.Errorf("tmp/sub3/file should be removed next to the kept device: %v", err)
		}
		plan := MakePlan(context.Background(), root, allOps(t), Options{Force: true})
		if len(plan.Actions) != 0 {
			t.Errorf("plan after apply: %v", plan.Actions)
		}
	}
}

// TestHostileUnreadable: directories without permissions. Root reads
// them anyway and seals them; anyone else gets reported errors, not a
// crash, and nothing outside the root changes.
func TestHostileUnreadable(t *testing.T) {
	sentinel, want := outsideSentinel(t)
	nodes := append(debianNodes(),
		f("/tmp/locked/secret", "x"),
		f("/var/log/private/app.log", "log line"),
		l("/tmp/locked/out", sentinel+"/etc"),
	)
	dir, root := newRoot(t, nodes)
	for _, p := range []string{"tmp/locked", "var/log/private"} {
		if err := os.Chmod(filepath.Join(dir, p), 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(filepath.Join(dir, p), 0o755) })
	}
	plan, res := applyAll(t, root, allOps(t), Options{Force: true})
	if isRoot() {
		for _, r := range res {
			if r.Status == Failed {
				t.Errorf("%s %s failed as root: %s", r.Kind, r.Path, r.Error)
			}
		}
		if _, err := os.Lstat(filepath.Join(dir, "tmp/locked")); !os.IsNotExist(err) {
			t.Errorf("tmp/locked should be removed by root: %v", err)
		}
		if st, err := os.Stat(filepath.Join(dir, "var/log/private/app.log")); err != nil || st.Size() != 0 {
			t.Errorf("var/log/private/app.log should be emptied by root: %v", err)
		}
	} else if len(plan.Errors) == 0 {
		t.Errorf("not root: planning through unreadable directories reported no error")
	}
	if got := hashTree(t, sentinel, true); got != want {
		t.Fatal("the sentinel outside the root changed")
	}
}

// TestStalePlanRevalidated changes the root between plan and apply: the
// executor must notice, fail the action, and leave the new thing alone.
func TestStalePlanRevalidated(t *testing.T) {
	dir, root := newRoot(t, rhelNodes())
	plan := MakePlan(context.Background(), root, allOps(t), Options{Force: true})
	// A key becomes a directory, a log becomes a symlink out of the root,
	// an ifcfg file is edited by someone else.
	key := filepath.Join(dir, "etc/ssh/ssh_host_rsa_key")
	must(t, os.Remove(key))
	must(t, os.MkdirAll(filepath.Join(key, "sub"), 0o755))
	msg := filepath.Join(dir, "var/log/messages")
	must(t, os.Remove(msg))
	outside := filepath.Join(t.TempDir(), "outside.log")
	must(t, os.WriteFile(outside, []byte("keep me"), 0o644))
	must(t, os.Symlink(outside, msg))
	ifcfg := filepath.Join(dir, "etc/sysconfig/network-scripts/ifcfg-eth0")
	must(t, os.WriteFile(ifcfg, []byte("DEVICE=eth0\nHWADDR=52:54:00:99:99:99\n"), 0o644))

	x := &Executor{Root: root}
	res := x.Apply(context.Background(), plan.Actions)
	failed := map[string]error{}
	for _, r := range res {
		if r.Status == Failed {
			failed[r.Path] = errors.New(r.Error)
		}
	}
	for _, p := range []string{"/etc/ssh/ssh_host_rsa_key", "/var/log/messages", "/etc/sysconfig/network-scripts/ifcfg-eth0"} {
		if failed[p] == nil {
			t.Errorf("%s: stale action did not fail", p)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep me" {
		t.Errorf("truncate followed a symlink swapped in after planning")
	}
	if _, err := os.Stat(filepath.Join(key, "sub")); err != nil {
		t.Errorf("directory swapped in for a key was removed: %v", err)
	}
	if b, _ := os.ReadFile(ifcfg); !strings.Contains(string(b), "52:54:00:99:99:99") {
		t.Errorf("rewrite overwrote a file changed after planning")
	}
	// The next plan sees the new state and converges.
	x.Apply(context.Background(), MakePlan(context.Background(), root, allOps(t), Options{Force: true}).Actions)
	if b, _ := os.ReadFile(ifcfg); strings.Contains(string(b), "HWADDR") {
		t.Errorf("re-plan did not strip the new HWADDR: %q", b)
	}
}

// hostPath maps guest path p of the fixture in dir to a host path whose
// parents are real directories inside dir: symlinked parents (/var/run ->
// /run) are resolved the way the guest would, inside dir. The test then
// replaces the last component, and never reaches through a link onto the
// host's own files.
func hostPath(t *testing.T, dir, p string) string {
	t.Helper()
	for i := 0; i < 16; i++ {
		changed := false
		parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
		for j := 1; j < len(parts); j++ {
			prefix := "/" + strings.Join(parts[:j], "/")
			st, err := os.Lstat(filepath.Join(dir, prefix))
			if err != nil || st.Mode()&os.ModeSymlink == 0 {
				continue
			}
			tgt, err := os.Readlink(filepath.Join(dir, prefix))
			if err != nil {
				t.Fatal(err)
			}
			if !path.IsAbs(tgt) {
				tgt = path.Join(path.Dir(prefix), tgt)
			}
			p = path.Join(tgt, strings.Join(parts[j:], "/"))
			changed = true
			break
		}
		if !changed {
			break
		}
	}
	hp := filepath.Join(dir, p)
	parent, err := filepath.EvalSymlinks(filepath.Dir(hp))
	if err == nil && parent != dir && !strings.HasPrefix(parent, dir+"/") {
		t.Fatalf("test bug: %s resolves outside the fixture (%s)", p, parent)
	}
	return hp
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var _ = fs.KindRegular
