//go:build vmtest

package vm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	sealimage "github.com/guestcheck/guestcheck/internal/host/image"
	"github.com/guestcheck/guestcheck/internal/host/image/imagetest"
)

// The offline path, on the unsealed template (the healthy guest's disk
// after a plain poweroff): sealprep plan/apply/verify --image, and the
// machine-id-cmdline leak. The sealed clones are booted by sealprep prove
// (prove_test.go); no boot of its own here.

// sp runs the host build of sealprep with its state under the run's
// scratch directory.
func (e *env) sp(ctx context.Context, args ...string) (string, error) {
	c := exec.CommandContext(ctx, e.sealprep, args...)
	c.Env = append(os.Environ(), "SEALPREP_STATE_DIR="+e.stateDir())
	out, err := c.CombinedOutput()
	return string(out), err
}

func (e *env) stateDir() string { return filepath.Join(e.scratch, "sealprep-state") }

// sealGPT builds the GPT disk (bootdisk_test.go) from the unsealed
// template and seals it with `sealprep apply --image`: plan first (the
// image's hash must not move), then apply and verify, nothing left
// attached. sealprep finds the root partition by its DPS type inside the
// sealing appliance, whose kernel alone mounts it. The record it leaves names the
// template's keys and machine ID. It sets e.sealed and e.sealedRoot (the
// root partition alone, for the --kernel templates).
func sealGPT(ctx context.Context, t *testing.T, e *env) {
	gpt := filepath.Join(e.scratch, "sealed-gpt.img")
	gptDisk(ctx, t, e.unsealed, gpt)
	before := imagetest.Hash(t, gpt)
	out, err := e.sp(ctx, "plan", "--image", gpt)
	if err != nil {
		t.Fatalf("plan --image: %v\n%s", err, out)
	}
	// The header names the image once and how it was attached: inside
	// the appliance, with the ESP's vfat, by the appliance's kernel.
	if !strings.Contains(out, "loop devices inside the sealing appliance") || !strings.Contains(out, "appliance: kernel ") ||
		!strings.Contains(out, "sealprep plan: image "+gpt) {
		t.Errorf("plan does not say how it attached:\n%s", tail(out, 40))
	}
	if imagetest.Hash(t, gpt) != before {
		t.Fatal("plan --image changed the image")
	}
	start := time.Now()
	if out, err = e.sp(ctx, "apply", "--yes", "--image", gpt); err != nil {
		t.Fatalf("apply --image: %v\n%s", err, out)
	}
	t.Logf("apply --image in %s: %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(tail(out, 1)))
	if out, err := e.sp(ctx, "verify", "--image", gpt); err != nil {
		t.Fatalf("verify --image: %v\n%s", err, out)
	}
	if left := imagetest.Leftovers(e.stateDir(), gpt); len(left) > 0 {
		t.Fatalf("left attached: %v", left)
	}
	root := filepath.Join(e.scratch, "sealed-root.img")
	rootPartition(ctx, t, gpt, root)
	rec, err := sealrecord.Parse(debugfsCat(ctx, t, root, sealrecord.Path))
	if err != nil {
		t.Fatal(err)
	}
	if !rec.HostKeysRemoved || !rec.MachineIDCleared {
		t.Errorf("record of the full seal: ssh_host_keys_removed %v, machine_id_cleared %v; want both", rec.HostKeysRemoved, rec.MachineIDCleared)
	}
	if rec.MachineIDHash != sealrecord.HashMachineID(e.template.machineID) {
		t.Errorf("record: machine_id_sha256 is not the template's machine ID's hash")
	}
	if k, ok := rec.KeyByFingerprint(fingerprint(t, e.template.hostKey)); !ok || k.File != "/etc/ssh/ssh_host_ed25519_key" {
		t.Errorf("the seal's record does not name the template's ed25519 key: %+v", rec.HostKeys)
	}
	if mid := strings.TrimSpace(string(debugfsCat(ctx, t, root, "/etc/machine-id"))); mid != "" {
		t.Errorf("/etc/machine-id after the seal: %q, want empty", mid)
	}
	e.sealed, e.sealedRoot, e.sealRecord = gpt, root, rec
}

// leakPath: the template's ID on the kernel command line kernel-install
// builds boot entries from, in a qcow2 overlay of the unsealed template
// (attached through qemu-storage-daemon's FUSE export).
// machine-id-cmdline removes it; verify agrees.
func leakPath(ctx context.Context, t *testing.T, e *env) {
	leak := filepath.Join(e.scratch, "leak.qcow2")
	if _, err := run(ctx, "qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", e.unsealed, leak); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(leak)
	state := e.stateDir()
	s, err := sealimage.Open(ctx, leak, sealimage.Options{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	cmdline := "root=LABEL=rootfs ro console=ttyS0 systemd.machine_id=" + e.template.machineID + "\n"
	werr := os.MkdirAll(filepath.Join(s.Root, "etc/kernel"), 0o755)
	if werr == nil {
		werr = os.WriteFile(filepath.Join(s.Root, "etc/kernel/cmdline"), []byte(cmdline), 0o644)
	}
	if err := s.Close(); err != nil || werr != nil {
		t.Fatalf("inject: %v %v", werr, err)
	}
	// The plan on the host-kernel path (the image was made here), apply
	// and verify through the appliance: both paths see the same leak.
	out, err := e.sp(ctx, "plan", "--image", leak, "--ops", "machine-id-cmdline", "--trust-image-filesystems")
	if err != nil || !strings.Contains(out, "rewrite /etc/kernel/cmdline") {
		t.Fatalf("plan does not fix the leak (%v):\n%s", err, out)
	}
	if !strings.Contains(out, "qemu-storage-daemon's FUSE export") || !strings.Contains(out, "sealprep plan: image "+leak) {
		t.Errorf("plan does not say how it attached:\n%s", tail(out, 40))
	}
	if out, err := e.sp(ctx, "apply", "--yes", "--image", leak); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if out, err := e.sp(ctx, "verify", "--image", leak); err != nil {
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
	if left := imagetest.Leftovers(state, leak); len(left) > 0 {
		t.Errorf("left attached: %v", left)
	}
}
