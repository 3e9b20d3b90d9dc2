package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	iofs "io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// linkOut moves every third log of the tree in dir, and its machine-id,
// outside (to out, same filesystem) and hard-links them back, and returns
// a digest of the outside files.
func linkOut(t *testing.T, dir, out string) string {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(dir, "var/log"), func(p string, de iofs.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() {
			return err
		}
		if n++; n%3 != 0 {
			return nil
		}
		o := filepath.Join(out, strconv.Itoa(n))
		if err := os.Rename(p, o); err != nil {
			return err
		}
		return os.Link(o, p)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "etc/machine-id"), filepath.Join(out, "mid")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(out, "mid"), filepath.Join(dir, "etc/machine-id")); err != nil {
		t.Fatal(err)
	}
	return outsideDigest(t, out)
}

// outsideDigest covers names, modes, inodes, sizes, mtimes and contents.
func outsideDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		fmt.Fprintf(h, "%s %o %d %d %d %x\n", e.Name(), st.Mode, st.Ino, st.Size, st.Mtim.Nano(), sha256.Sum256(b))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestInterruptedApplyHardLinks kills `apply` with SIGKILL at random
// points of a run that replaces hard-linked files; each time a second
// apply must converge, leave no temporary file, and the files outside the
// root must be unchanged.
func TestInterruptedApplyHardLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs 40 processes; skipped with -short")
	}
	bin := sealprepBinary(t)
	seed := int64(20261201)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	const nLogs = 2000
	// Calibrate on the fastest of three runs: a load spike during one
	// would spread the kills past the end of every later run.
	var full time.Duration
	for i := 0; i < 3; i++ {
		cal, calOut := scratch(t), scratch(t)
		makeTree(t, cal, nLogs, 0)
		linkOut(t, cal, calOut)
		start := time.Now()
		if out, err := exec.Command(bin, "apply", "--yes", "--root", cal).CombinedOutput(); err != nil {
			t.Fatalf("calibration apply: %v\n%s", err, lastLines(out, 30))
		}
		if d := time.Since(start); i == 0 || d < full {
			full = d
		}
		os.RemoveAll(cal)
		os.RemoveAll(calOut)
	}
	midRun := 0
	for i := 0; i < 10; i++ {
		dir, out := scratch(t), scratch(t)
		makeTree(t, dir, nLogs, 0)
		want := linkOut(t, dir, out)
		total := planCount(t, bin, dir)
		// Every other kill waits for apply's own progress (killApply).
		delay, after := time.Duration(rng.Int63n(int64(full))), 0
		if i%2 == 1 {
			after = 1 + rng.Intn(2)
		}
		how := killApply(t, bin, dir, delay, after)
		if left := planCount(t, bin, dir); left > 0 && left < total {
			midRun++
		}
		if b, err := exec.Command(bin, "apply", "--yes", "--root", dir).CombinedOutput(); err != nil {
			t.Fatalf("kill %d %s: second apply: %v\n%s", i, how, err, lastLines(b, 30))
		}
		if b, err := exec.Command(bin, "verify", "--root", dir).CombinedOutput(); err != nil {
			t.Fatalf("kill %d: verify: %v\n%s", i, err, lastLines(b, 30))
		}
		filepath.WalkDir(dir, func(p string, de iofs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, fs.TempSuffix) {
				t.Errorf("kill %d: temporary file left: %s", i, p)
			}
			return nil
		})
		if got := outsideDigest(t, out); got != want {
			t.Fatalf("kill %d %s: a file outside the root changed", i, how)
		}
		os.RemoveAll(dir)
		os.RemoveAll(out)
	}
	t.Logf("%d of 10 kills landed mid-run (uninterrupted: %v)", midRun, full)
	if midRun == 0 {
		t.Fatal("no kill landed while apply was working: the test exercised nothing")
	}
}
