package image

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/blockid/blocktest"
	"github.com/guestcheck/guestcheck/internal/host/image/imagetest"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

const bootUUID = "3b0d6f54-6a2c-4b8e-9d43-0f2a51f0c001"

func guestTree(t *testing.T, fstab string) string {
	return imagetest.Tree(t, map[string]string{
		"etc/os-release": "ID=debian\nVERSION_ID=12\n",
		"etc/machine-id": "23088bf0c2b64a7e9c8d3f1a2b4c5d6e\n",
		"etc/fstab":      fstab,
		"boot/":          "",
		"boot/efi/":      "",
		"var/log/":       "",
	})
}

func requireImageTools(t *testing.T) {
	testenv.RequireRoot(t, "attaches loop devices and mounts filesystems")
	testenv.Tool(t, "qemu-img", "qemu-utils")
	testenv.Tool(t, "qemu-storage-daemon", "qemu-system-common")
}

func checkClean(t *testing.T, stateDir string, images ...string) {
	t.Helper()
	if left := imagetest.Leftovers(stateDir, images...); len(left) > 0 {
		t.Fatalf("left behind:\n%s", strings.Join(left, "\n"))
	}
}

// A GPT image whose root has the generic Linux type: the root is found by
// os-release, and /boot (by UUID) and the ESP (by PARTLABEL-less fstab
// UUID of vfat) are mounted from the image's fstab, in order.
func TestOpenFindsRootByOSReleaseAndMountsFstab(t *testing.T) {
	requireImageTools(t)
	for _, qcow2 := range []bool{false, true} {
		name := map[bool]string{false: "raw", true: "qcow2"}[qcow2]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			fstab := "UUID=" + bootUUID + " /boot ext4 defaults 0 2\nUUID=ABCD-1234 /boot/efi vfat umask=0077 0 1\n/dev/vdb1 /srv ext4 defaults 0 2\n"
			bootTree := imagetest.Tree(t, map[string]string{"loader/entries/a.conf": "options root=/dev/vda2\n", "efi/": ""})
			img := imagetest.Build(t, dir, "disk", []imagetest.Part{
				{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 16, Tree: bootTree, UUID: bootUUID},
				{Type: imagetest.TypeESP, FS: "vfat", SizeMiB: 8, UUID: "ABCD1234"},
				{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 24, Tree: guestTree(t, fstab)},
			}, qcow2)
			state := filepath.Join(dir, "state")
			s, err := Open(context.Background(), img, Options{StateDir: state})
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, m := range s.Mounts {
				got = append(got, m.Path+"="+m.Source)
			}
			want := "/=partition 3 (ext4) /boot=partition 1 (ext4) /boot/efi=partition 2 (vfat)"
			if b, _ := os.ReadFile("/proc/filesystems"); !strings.Contains(string(b), "\tvfat\n") {
				want = "/=partition 3 (ext4) /boot=partition 1 (ext4)"
				if !strings.Contains(strings.Join(s.Notes, "\n"), "kernel has no vfat filesystem") {
					t.Errorf("no note on the unmountable ESP: %q", s.Notes)
				}
			}
			if strings.Join(got, " ") != want {
				t.Errorf("mounts %q, want %q", strings.Join(got, " "), want)
			}
			if s.Mounts[0].How != "the only partition with an os-release; no partition type marks a Linux root (Discoverable Partitions Specification)" {
				t.Errorf("root chosen because %q", s.Mounts[0].How)
			}
			if _, err := os.Stat(filepath.Join(s.Root, "boot/loader/entries/a.conf")); err != nil {
				t.Errorf("/boot not mounted: %v", err)
			}
			if err := os.WriteFile(filepath.Join(s.Root, "var/log/sealed"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			checkClean(t, state, img)
			// The write reached the image: a read-only session sees it.
			s, err = Open(context.Background(), img, Options{StateDir: state, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(s.Root, "var/log/sealed")); err != nil {
				t.Errorf("write did not reach the image: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			checkClean(t, state, img)
		})
	}
}

// A DPS root type wins without any probing, even next to another
// partition that holds an os-release.
func TestOpenDPSRoot(t *testing.T) {
	requireImageTools(t)
	dir := t.TempDir()
	img := imagetest.Build(t, dir, "disk", []imagetest.Part{
		{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 16, Tree: guestTree(t, "")},
		{Type: rootTypes[runtime.GOARCH], FS: "ext4", SizeMiB: 16, Tree: guestTree(t, "")},
	}, true)
	s, err := Open(context.Background(), img, Options{StateDir: filepath.Join(dir, "state"), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Mounts[0].Source != "partition 2 (ext4)" || !strings.Contains(s.Mounts[0].How, "marks it as the Linux root") {
		t.Errorf("root %s chosen because %q", s.Mounts[0].Source, s.Mounts[0].How)
	}
}

// plan (read-only) leaves the image byte for byte as it was, raw and qcow2.
func TestReadOnlySessionChangesNothing(t *testing.T) {
	requireImageTools(t)
	for _, qcow2 := range []bool{false, true} {
		dir := t.TempDir()
		img := imagetest.Build(t, dir, "disk", []imagetest.Part{
			{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 24, Tree: guestTree(t, "")},
		}, qcow2)
		before := imagetest.Hash(t, img)
		st, _ := os.Stat(img)
		s, err := Open(context.Background(), img, Options{StateDir: filepath.Join(dir, "state"), ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.Root, "x"), nil, 0o644); err == nil {
			t.Error("a read-only session's root is writable")
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if after := imagetest.Hash(t, img); after != before {
			t.Errorf("qcow2=%v: image changed by a read-only session", qcow2)
		}
		st2, _ := os.Stat(img)
		if !st2.ModTime().Equal(st.ModTime()) {
			t.Errorf("qcow2=%v: mtime changed", qcow2)
		}
	}
}

func TestRefusals(t *testing.T) {
	requireImageTools(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	img := imagetest.Build(t, dir, "disk", []imagetest.Part{
		{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 24, Tree: guestTree(t, "")},
	}, true)
	var ref *Refusal

	t.Run("in use", func(t *testing.T) {
		// A QEMU process with the image open for writing, as a VM has it.
		qsd := exec.Command(testenv.Tool(t, "qemu-storage-daemon", "qemu-system-common"),
			"--blockdev", `{"driver":"file","node-name":"f","filename":"`+img+`"}`,
			"--blockdev", `{"driver":"qcow2","node-name":"q","file":"f"}`,
			"--nbd-server", "addr.type=unix,addr.path="+filepath.Join(dir, "nbd.sock"),
			"--export", "type=nbd,id=e,node-name=q,writable=on")
		if err := qsd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { qsd.Process.Kill(); qsd.Wait() }()
		waitFor(t, func() bool { _, err := os.Stat(filepath.Join(dir, "nbd.sock")); return err == nil })
		for _, ro := range []bool{false, true} {
			_, err := Open(context.Background(), img, Options{StateDir: state, ReadOnly: ro})
			if !errors.As(err, &ref) || !errors.Is(err, ErrInUse) && !strings.Contains(err.Error(), "in use") {
				t.Errorf("read-only=%v: %v, want an in-use refusal", ro, err)
			}
		}
		checkClean(t, state, img)
	})

	t.Run("loop device on it", func(t *testing.T) {
		raw := imagetest.Build(t, dir, "looped", []imagetest.Part{{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 8,
			Tree: guestTree(t, "")}}, false)
		dev := blocktest.AttachLoop(t, raw, "--read-only")
		_, err := Open(context.Background(), raw, Options{StateDir: state, ReadOnly: true})
		if !errors.As(err, &ref) || !strings.Contains(err.Error(), dev) {
			t.Errorf("%v, want an in-use refusal naming %s", err, dev)
		}
	})

	t.Run("read-only file", func(t *testing.T) {
		if err := os.Chmod(img, 0o444); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(img, 0o644)
		_, err := Open(context.Background(), img, Options{StateDir: state})
		if !errors.As(err, &ref) || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("%v, want a read-only refusal", err)
		}
		s, err := Open(context.Background(), img, Options{StateDir: state, ReadOnly: true})
		if err != nil {
			t.Fatalf("a read-only file must still plan: %v", err)
		}
		s.Close()
		checkClean(t, state, img)
	})

	t.Run("LVM", func(t *testing.T) {
		raw := imagetest.Build(t, dir, "lvm", []imagetest.Part{{Type: imagetest.TypeLVM, SizeMiB: 8}}, false)
		_, err := Open(context.Background(), raw, Options{StateDir: state, ReadOnly: true})
		if !errors.As(err, &ref) || !strings.Contains(err.Error(), "LVM") {
			t.Errorf("%v, want an LVM refusal", err)
		}
		checkClean(t, state, raw)
	})

	t.Run("no root", func(t *testing.T) {
		raw := imagetest.Build(t, dir, "data", []imagetest.Part{{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 8,
			Tree: imagetest.Tree(t, map[string]string{"data/x": "y"})}}, false)
		_, err := Open(context.Background(), raw, Options{StateDir: state, ReadOnly: true})
		if !errors.As(err, &ref) || !strings.Contains(err.Error(), "os-release") {
			t.Errorf("%v, want a no-root refusal", err)
		}
		checkClean(t, state, raw)
	})

	t.Run("not an image format", func(t *testing.T) {
		vmdk := filepath.Join(dir, "d.vmdk")
		blocktest.Run(t, "qemu-img", "create", "-q", "-f", "vmdk", vmdk, "16M")
		_, err := Open(context.Background(), vmdk, Options{StateDir: state})
		if !errors.As(err, &ref) || !strings.Contains(err.Error(), "vmdk") {
			t.Errorf("%v, want a format refusal", err)
		}
	})
}

// An overlay on a backing file: the seal writes the top layer only.
func TestBackingChainWritesTopOnly(t *testing.T) {
	requireImageTools(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	base := imagetest.Build(t, dir, "base", []imagetest.Part{
		{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 24, Tree: guestTree(t, "")},
	}, true)
	top := filepath.Join(dir, "top.qcow2")
	blocktest.Run(t, "qemu-img", "create", "-q", "-f", "qcow2", "-b", base, "-F", "qcow2", top)
	os.Chmod(base, 0o444) // as a shared template would be
	before := imagetest.Hash(t, base)
	s, err := Open(context.Background(), top, Options{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if b := s.Chain.Backing(); len(b) != 1 || b[0] != base || !strings.Contains(strings.Join(s.Notes, "\n"), "only the top layer is written") {
		t.Errorf("backing %q, notes %q", b, s.Notes)
	}
	if err := os.Remove(filepath.Join(s.Root, "etc/machine-id")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if imagetest.Hash(t, base) != before {
		t.Error("the backing file changed")
	}
	s, err = Open(context.Background(), top, Options{StateDir: state, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(filepath.Join(s.Root, "etc/machine-id")); err == nil {
		t.Error("the top layer does not hold the change")
	}
}

// A session whose sealprep died (its pid gone) is taken down by the next
// Open, which then proceeds; a live one on the same image is a refusal.
func TestRecoverAfterKill(t *testing.T) {
	requireImageTools(t)
	dir := t.TempDir()
	sd := filepath.Join(dir, "state")
	img := imagetest.Build(t, dir, "disk", []imagetest.Part{
		{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 24, Tree: guestTree(t, "")},
	}, true)
	s, err := Open(context.Background(), img, Options{StateDir: sd})
	if err != nil {
		t.Fatal(err)
	}
	var ref *Refusal
	if _, err := Open(context.Background(), img, Options{StateDir: sd}); !errors.As(err, &ref) || !strings.Contains(err.Error(), "being sealed") {
		t.Errorf("second session on a live one: %v", err)
	}
	// Make the session an orphan: its recorded pid is a finished process.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	var st state
	b, _ := os.ReadFile(filepath.Join(s.Dir, "state.json"))
	json.Unmarshal(b, &st)
	st.PID = dead.Process.Pid
	b, _ = json.Marshal(st)
	os.WriteFile(filepath.Join(s.Dir, "state.json"), b, 0o600)
	// Forget the daemon as a child: it must be found through /proc.
	s.qsd = nil
	s2, err := Open(context.Background(), img, Options{StateDir: sd})
	if err != nil {
		t.Fatal(err)
	}
	if len(s2.Recovered) != 1 {
		t.Errorf("recovered %q", s2.Recovered)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	checkClean(t, sd, img)
}

func waitFor(t *testing.T, f func() bool) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if f() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("timed out")
}
