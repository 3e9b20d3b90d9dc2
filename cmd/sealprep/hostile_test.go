package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/host/image/imagetest"
	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// Every crafted image of the corpus (made by the real qemu-img) is refused
// by plan, verify and apply --image and by prove, each in one line that
// names what was found; no file involved changes, and no loop device,
// mount, storage daemon or QEMU is left.
func TestHostileImagesRefused(t *testing.T) {
	requireImage(t)
	bin := sealprepBinary(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	cases := imagetest.HostileCorpus(t, dir)
	// A QEMU that leaves a mark if prove ever starts it: every refusal
	// comes before any QEMU does.
	fake := t.TempDir()
	mark := filepath.Join(fake, "qemu-started")
	if err := os.WriteFile(filepath.Join(fake, "qemu-system-x86_64"), []byte("#!/bin/sh\ntouch "+mark+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", fake+string(os.PathListSeparator)+os.Getenv("PATH"))
	commands := [][]string{
		{"plan", "--image"},
		{"verify", "--image"},
		{"apply", "--yes", "--image"},
		{"prove", "--accel", "tcg", "--image"},
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			before := map[string]string{}
			for _, f := range c.Involved {
				before[f] = imagetest.Hash(t, f)
			}
			for _, cmd := range commands {
				out, stderr, code := runBin(t, bin, state, append(cmd, c.Image)...)
				if code != seal.ExitUsage {
					t.Errorf("%s: exit %d, want %d (refused)\n%s%s", cmd[0], code, seal.ExitUsage, out, stderr)
					continue
				}
				line := refusalLine(out + stderr)
				for _, w := range c.Want {
					if !strings.Contains(line, w) {
						t.Errorf("%s: the refusal does not name %q:\n%s%s", cmd[0], w, out, stderr)
					}
				}
				// The corpus's long temporary directory aside, a line a
				// terminal shows whole.
				if n := len(strings.ReplaceAll(line, dir, "/images")); n > 260 {
					t.Errorf("%s: a refusal of %d columns:\n%s", cmd[0], n, line)
				}
			}
			for f, h := range before {
				if got := imagetest.Hash(t, f); got != h {
					t.Errorf("%s changed", f)
				}
			}
			if left := imagetest.Leftovers(state, c.Image); len(left) > 0 {
				t.Errorf("left behind: %s", strings.Join(left, "; "))
			}
			if _, err := os.Stat(mark); err == nil {
				t.Error("prove started QEMU on a refused image")
				os.Remove(mark)
			}
			if procs := qemuProcessesOn(dir); len(procs) > 0 {
				t.Errorf("QEMU processes on the corpus: %s", strings.Join(procs, "; "))
			}
		})
	}
}

// refusalLine is the line of a report or an error that carries the
// refusal: sealprep's reports put it after "[image]", prove's after
// "sealprep prove:".
func refusalLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "[image]") || strings.HasPrefix(l, "sealprep prove:") || strings.HasPrefix(l, "sealprep:") {
			return l
		}
	}
	return s
}

// qemuProcessesOn lists QEMU tools (qemu-img, qemu-system-*,
// qemu-storage-daemon, qemu-nbd) whose command line names dir, and any
// connected nbd device (sealprep never uses one; a connected device here
// would be a tool that did).
func qemuProcessesOn(dir string) []string {
	var out []string
	nbd, _ := filepath.Glob("/sys/block/nbd*/pid")
	for _, p := range nbd {
		out = append(out, "connected "+filepath.Base(filepath.Dir(p)))
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		s := string(b)
		if strings.Contains(s, "qemu") && strings.Contains(s, dir) {
			out = append(out, filepath.Base(filepath.Dir(p))+": "+strings.ReplaceAll(s, "\x00", " "))
		}
	}
	return out
}

// The one override names the exact file it allows: an overlay whose
// backing file lies outside its directory is refused, then taken with
// --allow-backing naming that file, and still refused when the allowed
// path is reached through a symlink.
func TestAllowBackingNamesTheFile(t *testing.T) {
	requireImage(t)
	qemuImg := testenv.Tool(t, "qemu-img", "qemu-utils")
	bin := sealprepBinary(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	base := imagetest.Build(t, dir, "base", []imagetest.Part{{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 32, Tree: identityTree(t)}}, true)
	sub := filepath.Join(dir, "overlays")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	top := filepath.Join(sub, "top.qcow2")
	runTool(t, qemuImg, "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", base, top)
	baseHash := imagetest.Hash(t, base)

	out, stderr, code := runBin(t, bin, state, "plan", "--image", top)
	if code != seal.ExitUsage || !strings.Contains(out+stderr, "--allow-backing "+base) {
		t.Fatalf("plan without --allow-backing: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = runBin(t, bin, state, "plan", "--image", top, "--allow-backing", base)
	if code != seal.ExitOK || !strings.Contains(out, "backing file (only read): "+base) {
		t.Fatalf("plan --allow-backing: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = runBin(t, bin, state, "apply", "--yes", "--image", top, "--allow-backing", base)
	if code != seal.ExitOK {
		t.Fatalf("apply --allow-backing: exit %d\n%s%s", code, out, stderr)
	}
	if imagetest.Hash(t, base) != baseHash {
		t.Error("the allowed backing file changed: only the top layer may be written")
	}
	link := filepath.Join(dir, "link.qcow2")
	if err := os.Symlink(base, link); err != nil {
		t.Fatal(err)
	}
	top2 := filepath.Join(sub, "top2.qcow2")
	runTool(t, qemuImg, "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", link, top2)
	out, stderr, code = runBin(t, bin, state, "plan", "--image", top2, "--allow-backing", link)
	if code != seal.ExitUsage || !strings.Contains(out+stderr, "symlink") {
		t.Errorf("an allowed path through a symlink: exit %d\n%s%s", code, out, stderr)
	}
	if left := imagetest.Leftovers(state, top, top2, base); len(left) > 0 {
		t.Errorf("left behind: %s", strings.Join(left, "; "))
	}
}

func runTool(t *testing.T, bin string, args ...string) {
	t.Helper()
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", bin, strings.Join(args, " "), err, out)
	}
}
