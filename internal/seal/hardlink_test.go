package seal

import (
	"context"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// linkEveryFile replaces every regular file of the fixture in dir by a
// hard link to its twin in the sentinel tree (a mirror of the fixture
// outside the root, on the same filesystem), the way `cp -al` or a
// hard-link snapshot leaves a tree. It returns how many it linked.
func linkEveryFile(t *testing.T, dir, sentinel string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, de iofs.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		twin := filepath.Join(sentinel, rel)
		if st, err := os.Lstat(twin); err != nil || !st.Mode().IsRegular() {
			return nil
		}
		must(t, os.Remove(p))
		must(t, os.Link(twin, p))
		n++
		return nil
	})
	must(t, err)
	return n
}

// TestHostileHardLinkOut: every regular file in the root is a hard link
// to a file outside it. Every operation that changes a file (truncate,
// rewrite, chmod, symlink swap, removal) runs; the outside tree must be
// bit for bit, inode for inode, mtime for mtime unchanged, the plan must
// say per action that the file is a hard link, and the root must still
// end sealed.
func TestHostileHardLinkOut(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			sentinel := filepath.Join(scratchDir(t), "sentinel")
			build(t, sentinel, fx.nodes())
			want := hashTree(t, sentinel, true)
			dir := scratchDir(t)
			build(t, dir, fx.nodes())
			if n := linkEveryFile(t, dir, sentinel); n < 20 {
				t.Fatalf("only %d files linked: the fixture no longer exercises this", n)
			}
			root := openRoot(t, dir)
			ops := allOps(t)
			opts := Options{Force: true, MachineIDMode: MachineIDUninitialized}
			if fx.name == "debian" {
				opts.MachineIDMode = MachineIDEmpty
			}
			plan := MakePlan(context.Background(), root, ops, opts)
			kinds := map[ActionKind]int{}
			for _, a := range plan.Actions {
				if st, err := os.Lstat(filepath.Join(dir, a.Path)); err != nil || !st.Mode().IsRegular() {
					continue // a new file, or not a file: no inode to share
				}
				switch a.Kind {
				case Truncate, Rewrite, Symlink:
					if a.Links != 2 {
						t.Errorf("%s %s: planned with links %d, want 2", a.Kind, a.Path, a.Links)
					}
					if d := LinkDetail(a.Kind, a.Links); !strings.Contains(d, "other names keep the old content") {
						t.Errorf("%s %s: detail %q", a.Kind, a.Path, d)
					}
					kinds[a.Kind]++
				}
			}
			if kinds[Truncate] == 0 || (fx.name == "rhel" && kinds[Rewrite] == 0) {
				t.Fatalf("planned %v: the fixture no longer has in-place changes", kinds)
			}
			x := &Executor{Root: root}
			first := map[string]bool{}
			for _, r := range x.Apply(context.Background(), plan.Actions) {
				if r.Status == Failed {
					t.Errorf("%s %s failed: %s", r.Kind, r.Path, r.Error)
				}
				// The first change of a path replaces the shared inode; a
				// later one (hostname, then net-mac-pins on one ifcfg file)
				// finds a file of its own.
				if first[r.Path] || r.Status != Done {
					continue
				}
				first[r.Path] = true
				if (r.Kind == Truncate || r.Kind == Rewrite) && !strings.HasPrefix(r.Detail, "hard link (2 names)") {
					t.Errorf("%s %s: result detail %q, want the hard-link replacement named", r.Kind, r.Path, r.Detail)
				}
			}
			if got := hashTree(t, sentinel, true); got != want {
				t.Fatal("the sentinel outside the root changed")
			}
			if left := MakePlan(context.Background(), root, ops, opts); len(left.Actions) != 0 {
				t.Errorf("plan after apply: %+v", left.Actions)
			}
			st, err := os.Stat(filepath.Join(dir, "etc/machine-id"))
			if err != nil || st.Mode().Perm() != 0o444 {
				t.Errorf("etc/machine-id: %v %v", st, err)
			}
		})
	}
}

// TestHardLinkedAfterPlanning: the plan saw one name; a hard link made
// between plan and apply is still caught, because the executor counts
// links on the file it opens.
func TestHardLinkedAfterPlanning(t *testing.T) {
	dir, root := newRoot(t, debianNodes())
	plan := MakePlan(context.Background(), root, []Operation{opLogfiles, opMachineID}, Options{})
	outside := filepath.Join(filepath.Dir(dir), filepath.Base(dir)+"-outside")
	must(t, os.Mkdir(outside, 0o755))
	t.Cleanup(func() { os.RemoveAll(outside) })
	for _, p := range []string{"etc/machine-id", "var/log/syslog"} {
		must(t, os.Link(filepath.Join(dir, p), filepath.Join(outside, filepath.Base(p))))
	}
	want := hashTree(t, outside, true)
	x := &Executor{Root: root}
	res := x.Apply(context.Background(), plan.Actions)
	if got := hashTree(t, outside, true); got != want {
		t.Fatal("a file hard-linked after planning was changed in place")
	}
	seen := 0
	for _, r := range res {
		if r.Path == "/etc/machine-id" || r.Path == "/var/log/syslog" {
			seen++
			if r.Status != Done || !strings.HasPrefix(r.Detail, "hard link (2 names)") {
				t.Errorf("%s: %s %q", r.Path, r.Status, r.Detail)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("the plan covered %d of the 2 files", seen)
	}
}

// TestLeftoverTemporaryRemoved: a run killed between writing a
// replacement and renaming it leaves ".name.sealprep~" in /var/log. The
// next plan removes it rather than treat it as a log.
func TestLeftoverTemporaryRemoved(t *testing.T) {
	dir, root := newRoot(t, append(debianNodes(), f("/var/log/.syslog"+fs.TempSuffix, "")))
	_, res := applyAll(t, root, []Operation{opLogfiles}, Options{})
	found := false
	for _, r := range res {
		if r.Path == "/var/log/.syslog"+fs.TempSuffix {
			found = r.Kind == Remove && r.Status == Done
		}
	}
	if !found {
		t.Errorf("leftover temporary not removed: %+v", res)
	}
	if _, err := os.Lstat(filepath.Join(dir, "var/log/.syslog"+fs.TempSuffix)); !os.IsNotExist(err) {
		t.Errorf("leftover still there: %v", err)
	}
}
