//go:build vmtest

package vm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sealimage "github.com/guestcheck/guestcheck/internal/image"
	"github.com/guestcheck/guestcheck/internal/image/imagetest"
)

// TestImageSeal is the offline path: a guest boots once and is powered
// off; its disk, flattened to qcow2, is sealed on the host with
// `sealprep apply --image` (plan first: the image's hash must not move);
// two clones of the result boot with distinct machine-ids and host keys
// and guestcheck passes on both. A copy with systemd.machine_id= in
// /etc/kernel/cmdline is fixed by machine-id-cmdline, as documented.
func TestImageSeal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the VM tests need root: run `make vm-test` as root")
	}
	for _, tool := range []string{"qemu-system-x86_64", "qemu-img", "qemu-storage-daemon", "genisoimage", "mmdebstrap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("missing %s: apt-get install qemu-system-x86 qemu-utils genisoimage mmdebstrap", tool)
		}
	}
	ctx, cancel := testContext(t)
	defer cancel()
	if err := os.MkdirAll(cacheDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	// Not "image-*": buildImage removes other images of that name.
	scratch, err := os.MkdirTemp(cacheDir(), "run-imageseal-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(scratch) })
	img := buildImage(ctx, t, cacheDir(), debPath(t))
	sealprep := filepath.Join(t.TempDir(), "sealprep")
	if _, err := run(ctx, "go", "build", "-o", sealprep, "github.com/guestcheck/guestcheck/cmd/sealprep"); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(scratch, "state")
	sp := func(args ...string) (string, error) {
		c := exec.CommandContext(ctx, sealprep, args...)
		c.Env = append(os.Environ(), "SEALPREP_STATE_DIR="+state)
		out, err := c.CombinedOutput()
		return string(out), err
	}

	// Boot once, then power off from inside, as a template build ends.
	booted := filepath.Join(scratch, "booted.qcow2")
	var template struct{ machineID, hostKey string }
	t.Run("boot-once", func(t *testing.T) {
		v := startVM(ctx, t, spec{
			Name: "gc-image-tpl", Base: img.Root, Image: img,
			MetaData: "instance-id: gc-image-tpl-iid\nlocal-hostname: gc-image-tpl\n",
			UserData: "#cloud-config\n", NICs: []nic{mgmtNIC},
		})
		bootReport(ctx, t, v)
		template.machineID = readGuest(ctx, t, v, "/etc/machine-id")
		template.hostKey = readGuest(ctx, t, v, "/etc/ssh/ssh_host_ed25519_key.pub")
		a, err := v.Agent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sctx, scancel := step(ctx, stepTimeout)
		defer scancel()
		if err := a.Exec(sctx, "guest-exec", map[string]any{"path": "/usr/bin/systemctl", "arg": []string{"poweroff"}}, nil); err != nil {
			t.Fatalf("guest-exec poweroff: %v", err)
		}
		wctx, wcancel := step(ctx, sealTimeout)
		defer wcancel()
		if err := v.WaitExit(wctx); err != nil {
			t.Fatalf("qemu after poweroff: %v", err)
		}
		if _, err := run(ctx, "qemu-img", "convert", "-O", "qcow2", v.Overlay, booted); err != nil {
			t.Fatal(err)
		}
	})
	if t.Failed() {
		return
	}
	leak := filepath.Join(scratch, "leak.qcow2")
	if _, err := run(ctx, "cp", "--sparse=always", booted, leak); err != nil {
		t.Fatal(err)
	}

	sealedRaw := filepath.Join(scratch, "sealed.img")
	t.Run("seal", func(t *testing.T) {
		before := imagetest.Hash(t, booted)
		out, err := sp("plan", "--image", booted)
		if err != nil {
			t.Fatalf("plan --image: %v\n%s", err, out)
		}
		// The header names the image once and how it was attached.
		if !strings.Contains(out, "qemu-storage-daemon's FUSE export") || !strings.Contains(out, "sealprep plan: image "+booted) {
			t.Errorf("plan does not say how it attached:\n%s", tail(out, 40))
		}
		if imagetest.Hash(t, booted) != before {
			t.Fatal("plan --image changed the image")
		}
		start := time.Now()
		out, err = sp("apply", "--yes", "--image", booted)
		if err != nil {
			t.Fatalf("apply --image: %v\n%s", err, out)
		}
		t.Logf("apply --image in %s: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(tail(out, 1)))
		if out, err := sp("verify", "--image", booted); err != nil {
			t.Fatalf("verify --image: %v\n%s", err, out)
		}
		if left := imagetest.Leftovers(state, booted); len(left) > 0 {
			t.Fatalf("left attached: %v", left)
		}
		if _, err := run(ctx, "qemu-img", "convert", "-O", "raw", booted, sealedRaw); err != nil {
			t.Fatal(err)
		}
	})
	if t.Failed() {
		return
	}

	t.Run("clones", func(t *testing.T) {
		type ident struct{ machineID, hostKey string }
		got := make([]ident, 2)
		t.Run("boot", func(t *testing.T) {
			for i := range got {
				t.Run(fmt.Sprintf("clone-%d", i+1), func(t *testing.T) {
					t.Parallel()
					name := fmt.Sprintf("gc-image-clone-%d", i+1)
					n := mgmtNIC
					n.MAC = fmt.Sprintf("52:54:00:00:04:%02x", i+1)
					v := startVM(ctx, t, spec{
						Name: name, Base: sealedRaw, Image: img,
						MetaData: fmt.Sprintf("instance-id: %s-iid\nlocal-hostname: %s\n", name, name),
						UserData: "#cloud-config\nmanage_etc_hosts: true\nssh_pwauth: false\n", NICs: []nic{n},
					})
					r, m := bootReport(ctx, t, v)
					expectHealthy(t, name, r, m[1])
					expect(t, r, "network-identity", "", "pass")
					got[i] = ident{readGuest(ctx, t, v, "/etc/machine-id"), readGuest(ctx, t, v, "/etc/ssh/ssh_host_ed25519_key.pub")}
				})
			}
		})
		a, b := got[0], got[1]
		if a.machineID == "" || b.machineID == "" {
			t.Fatal("a clone did not come up")
		}
		if a.machineID == b.machineID || a.machineID == template.machineID || b.machineID == template.machineID {
			t.Errorf("machine-ids not unique: template %s, clones %s %s", template.machineID, a.machineID, b.machineID)
		}
		if a.hostKey == b.hostKey || a.hostKey == template.hostKey || b.hostKey == template.hostKey {
			t.Errorf("SSH host keys not unique")
		}
		t.Logf("machine-ids: template %s, clone-1 %s, clone-2 %s", template.machineID, a.machineID, b.machineID)
	})

	// The leak path: the template's ID on the kernel command line kernel-install
	// builds boot entries from. machine-id-cmdline removes it; verify agrees.
	t.Run("leak-path", func(t *testing.T) {
		s, err := sealimage.Open(ctx, leak, sealimage.Options{StateDir: state})
		if err != nil {
			t.Fatal(err)
		}
		cmdline := "root=LABEL=rootfs ro console=ttyS0 systemd.machine_id=" + template.machineID + "\n"
		werr := os.MkdirAll(filepath.Join(s.Root, "etc/kernel"), 0o755)
		if werr == nil {
			werr = os.WriteFile(filepath.Join(s.Root, "etc/kernel/cmdline"), []byte(cmdline), 0o644)
		}
		if err := s.Close(); err != nil || werr != nil {
			t.Fatalf("inject: %v %v", werr, err)
		}
		out, err := sp("plan", "--image", leak, "--ops", "machine-id-cmdline")
		if err != nil || !strings.Contains(out, "rewrite /etc/kernel/cmdline") {
			t.Fatalf("plan does not fix the leak (%v):\n%s", err, out)
		}
		if out, err := sp("apply", "--yes", "--image", leak); err != nil {
			t.Fatalf("apply: %v\n%s", err, out)
		}
		if out, err := sp("verify", "--image", leak); err != nil {
			t.Fatalf("verify: %v\n%s", err, out)
		}
		s, err = sealimage.Open(ctx, leak, sealimage.Options{StateDir: state, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		b, rerr := os.ReadFile(filepath.Join(s.Root, "etc/kernel/cmdline"))
		s.Close()
		if rerr != nil || string(b) != "root=LABEL=rootfs ro console=ttyS0\n" {
			t.Errorf("/etc/kernel/cmdline after the seal: %q (%v)", b, rerr)
		}
	})
	if left := imagetest.Leftovers(state, booted, leak); len(left) > 0 {
		t.Errorf("left attached: %v", left)
	}
}
