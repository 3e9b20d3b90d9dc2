package image

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// qimg runs the real qemu-img in dir.
func qimg(t *testing.T, dir string, args ...string) {
	t.Helper()
	c := exec.Command(testenv.Tool(t, "qemu-img", "qemu-utils"), args...)
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("qemu-img %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func wantRefusal(t *testing.T, err error, parts ...string) {
	t.Helper()
	var r *Refusal
	if !errors.As(err, &r) {
		t.Fatalf("want a refusal naming %q, got %v", parts, err)
	}
	if strings.Contains(r.Reason, "\n") {
		t.Errorf("a refusal of more than one line: %q", r.Reason)
	}
	for _, p := range parts {
		if !strings.Contains(r.Reason, p) {
			t.Errorf("the refusal does not name %q: %s", p, r.Reason)
		}
	}
}

// A chain inside the image's directory is taken, each layer with its
// format and the name its parent wrote; symlinks that stay inside are
// followed, ones that leave are not.
func TestVetChain(t *testing.T) {
	dir := t.TempDir()
	qimg(t, dir, "create", "-q", "-f", "raw", "base.raw", "4M")
	qimg(t, dir, "create", "-q", "-f", "qcow2", "-F", "raw", "-b", "base.raw", "mid.qcow2")
	if err := os.Symlink("mid.qcow2", filepath.Join(dir, "mid-link")); err != nil {
		t.Fatal(err)
	}
	qimg(t, dir, "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", "mid-link", "top.qcow2")
	c, err := OpenChain(context.Background(), testenv.Tool(t, "qemu-img", "qemu-utils"), filepath.Join(dir, "top.qcow2"), Policy{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got []string
	for _, l := range c.Layers {
		got = append(got, filepath.Base(l.Path)+":"+l.Format+":"+l.Named)
	}
	if want := "top.qcow2:qcow2: mid-link:qcow2:mid-link base.raw:raw:base.raw"; strings.Join(got, " ") != want {
		t.Errorf("chain %q, want %q", strings.Join(got, " "), want)
	}

	// A symlink in the directory that points out of it.
	out := t.TempDir()
	qimg(t, out, "create", "-q", "-f", "raw", "elsewhere.raw", "4M")
	if err := os.Symlink(filepath.Join(out, "elsewhere.raw"), filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	qimg(t, dir, "create", "-q", "-f", "qcow2", "-u", "-F", "raw", "-b", "escape", "esc.qcow2", "4M")
	_, err = Vet(filepath.Join(dir, "esc.qcow2"), Policy{})
	wantRefusal(t, err, "escape", "symlink that leaves its directory")
}

// Each rule refuses in one line naming what it found, and a FIFO named
// as a backing file never hangs the open.
func TestVetRefusals(t *testing.T) {
	dir := t.TempDir()
	qimg(t, dir, "create", "-q", "-f", "raw", "base.raw", "4M")
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	qimg(t, dir, "create", "-q", "-f", "qcow2", "-u", "-F", "raw", "-b", "fifo", "fifo.qcow2", "4M")
	qimg(t, dir, "create", "-q", "-f", "qcow2", "-u", "-F", "raw", "-b", "nbd://192.0.2.1:10809/x", "nbd.qcow2", "4M")
	qimg(t, dir, "create", "-q", "-f", "qcow2", "-u", "-F", "qcow2", "-b", "base.raw", "liar.qcow2", "4M")
	qimg(t, dir, "create", "-q", "-f", "qcow2", "-u", "-F", "raw", "-b", "/proc/self/environ", "proc.qcow2", "4M")
	qimg(t, dir, "create", "-q", "-f", "qcow2", "-u", "-F", "qcow2", "-b", "loop-b.qcow2", "loop-a.qcow2", "4M")
	qimg(t, dir, "create", "-q", "-f", "qcow2", "-u", "-F", "qcow2", "-b", "loop-a.qcow2", "loop-b.qcow2", "4M")
	qimg(t, dir, "create", "-q", "-f", "qcow2", "-u", "-F", "raw", "-b", "missing.raw", "missing.qcow2", "4M")
	qimg(t, dir, "create", "-q", "-f", "vdi", "disk.vdi", "4M")
	qimg(t, dir, "create", "-q", "-f", "qcow2", "actually.vmdk", "4M")
	for _, c := range []struct {
		file string
		want []string
	}{
		{"fifo.qcow2", []string{"fifo", "a FIFO"}},
		{"nbd.qcow2", []string{"nbd://192.0.2.1:10809/x", "protocol"}},
		{"liar.qcow2", []string{"base.raw", "says it is qcow2", "header is raw"}},
		{"proc.qcow2", []string{"/proc/self/environ", "outside its directory"}},
		{"loop-a.qcow2", []string{"comes back to"}},
		{"missing.qcow2", []string{"missing.raw", "does not exist"}},
		{"disk.vdi", []string{"VDI", "qemu-img convert -f vdi -O qcow2 disk.vdi copy.qcow2"}},
		{"actually.vmdk", []string{"named .vmdk", "header is qcow2"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				ch, err := Vet(filepath.Join(dir, c.file), Policy{})
				ch.Close()
				done <- err
			}()
			select {
			case err := <-done:
				wantRefusal(t, err, c.want...)
			case <-time.After(10 * time.Second):
				t.Fatal("Vet hangs")
			}
		})
	}
}

// --allow-backing allows the one path it names, not a path that reaches
// it through a symlink, and nothing else.
func TestVetAllowBacking(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	qimg(t, out, "create", "-q", "-f", "raw", "base.raw", "4M")
	base := filepath.Join(out, "base.raw")
	qimg(t, dir, "create", "-q", "-f", "qcow2", "-F", "raw", "-b", base, "top.qcow2")
	top := filepath.Join(dir, "top.qcow2")
	_, err := Vet(top, Policy{})
	wantRefusal(t, err, base, "outside its directory", "--allow-backing "+base)
	c, err := Vet(top, Policy{AllowBacking: []string{base}})
	if err != nil {
		t.Fatalf("allowed: %v", err)
	}
	c.Close()
	_, err = Vet(top, Policy{AllowBacking: []string{filepath.Join(out, "other.raw")}})
	wantRefusal(t, err, "outside its directory")
	// Not even an allowed path under /dev is opened (opening a device can
	// act): it is refused by its name, before any open would tell it is a
	// character device.
	qimg(t, dir, "create", "-q", "-f", "qcow2", "-u", "-F", "raw", "-b", "/dev/null", "dev.qcow2", "4M")
	_, err = Vet(filepath.Join(dir, "dev.qcow2"), Policy{AllowBacking: []string{"/dev/null"}})
	wantRefusal(t, err, "/dev/null", "a kernel interface")
}

// The helpers run bounded: a deadline kills the whole process group, the
// output is cut, and prlimit's limits are in force in the helper.
func TestRunLimited(t *testing.T) {
	testenv.Tool(t, "prlimit", "util-linux")
	ctx := context.Background()
	start := time.Now()
	_, _, err := runLimited(ctx, Limits{Deadline: 300 * time.Millisecond, MaxOutput: 1 << 10}, "sh", []string{"-c", "sleep 30 & sleep 30"}, nil)
	if err == nil || !strings.Contains(err.Error(), "did not finish within 300ms") || time.Since(start) > 10*time.Second {
		t.Errorf("deadline: %v after %s", err, time.Since(start))
	}
	_, _, err = runLimited(ctx, Limits{Deadline: 10 * time.Second, MaxOutput: 100}, "sh", []string{"-c", "yes | head -c 100000"}, nil)
	if err == nil || !strings.Contains(err.Error(), "more than 100 bytes") {
		t.Errorf("output bound: %v", err)
	}
	out, _, err := runLimited(ctx, Limits{AddressSpace: 1 << 30, CPU: 7 * time.Second, Deadline: 10 * time.Second, MaxOutput: 1 << 20},
		"sh", []string{"-c", "grep -E '^Max (address space|cpu time|core file size)' /proc/self/limits"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Max cpu time              7                    7", "Max address space         1073741824           1073741824", "Max core file size        0                    0"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("limits in the helper:\n%s\nlack %q", out, want)
		}
	}
}

// BenchmarkVet measures what the inspection adds before an image is
// attached or booted, side by side with the qemu-img info run it
// precedes: the Go header check of a two-layer chain (Vet) and the whole
// check with qemu-img's view of each layer (OpenChain).
func BenchmarkVet(b *testing.B) {
	qemuImg, ok := testenv.Look("qemu-img")
	if !ok {
		b.Skip("no qemu-img")
	}
	dir := b.TempDir()
	for _, args := range [][]string{
		{"create", "-q", "-f", "raw", "base.raw", "64M"},
		{"create", "-q", "-f", "qcow2", "-F", "raw", "-b", "base.raw", "top.qcow2"},
	} {
		c := exec.Command(qemuImg, args...)
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
	top := filepath.Join(dir, "top.qcow2")
	b.Run("vet", func(b *testing.B) {
		for b.Loop() {
			c, err := Vet(top, Policy{})
			if err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
	b.Run("vet+qemu-img", func(b *testing.B) {
		for b.Loop() {
			c, err := OpenChain(context.Background(), qemuImg, top, Policy{})
			if err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
	b.Run("qemu-img-info-alone", func(b *testing.B) {
		for b.Loop() {
			if out, err := exec.Command(qemuImg, "info", "--output=json", "--backing-chain", top).CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}
