package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/appliance"
	"github.com/guestcheck/guestcheck/internal/host/image/imagetest"
	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// identityTree is a small guest with identity for every run to clear.
func identityTree(t *testing.T) string {
	files := map[string]string{
		"etc/os-release":               "ID=debian\nVERSION_ID=12\n",
		"etc/machine-id":               "23088bf0c2b64a7e9c8d3f1a2b4c5d6e\n",
		"var/lib/dbus/machine-id":      "23088bf0c2b64a7e9c8d3f1a2b4c5d6e\n",
		"etc/kernel/cmdline":           "root=/dev/vda1 ro systemd.machine_id=23088bf0c2b64a7e9c8d3f1a2b4c5d6e quiet\n",
		"var/lib/dhcp/dhclient.leases": "lease {}\n",
		"root/.bash_history":           "ls\n",
		"usr/lib/systemd/":             "",
	}
	for i := 0; i < 200; i++ {
		files["var/log/app/"+strings.Repeat("x", i%7+1)+"-"+time.Duration(i).String()+".log"] = strings.Repeat("log line\n", 50)
	}
	return imagetest.Tree(t, files)
}

func requireImage(t *testing.T) {
	testenv.RequireRoot(t, "--image attaches loop devices and mounts filesystems")
	testenv.Tool(t, "qemu-img", "qemu-utils")
	testenv.Tool(t, "qemu-storage-daemon", "qemu-system-common")
}

// requireAppliance skips without what the sealing appliance needs here:
// QEMU and a kernel with its modules (as root, a missing one fails).
func requireAppliance(t *testing.T) {
	t.Helper()
	testenv.Tool(t, "qemu-system-x86_64", "qemu-system-x86")
	if _, err := appliance.FindKernel("", "/boot", "/lib/modules"); err != nil {
		testenv.Missing(t, "tool:kernel", err.Error()+" (bash scripts/test-deps.sh install)")
	}
}

func runBin(t *testing.T, bin, state string, args ...string) (string, string, int) {
	t.Helper()
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), "SEALPREP_STATE_DIR="+state)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// The whole --image path as a process: plan changes nothing (same hash)
// and says how it attached, apply seals, verify agrees, and nothing stays
// attached after any of them.
func TestImagePlanApplyVerify(t *testing.T) {
	requireImage(t)
	requireAppliance(t)
	bin := sealprepBinary(t)
	for _, c := range []struct {
		qcow2, host bool
	}{{false, false}, {true, false}, {false, true}, {true, true}} {
		qcow2, host := c.qcow2, c.host
		dir := t.TempDir()
		state := filepath.Join(dir, "state")
		img := imagetest.Build(t, dir, "disk", []imagetest.Part{
			{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 32, Tree: identityTree(t)},
		}, qcow2)
		before := imagetest.Hash(t, img)
		var trust []string
		if host {
			trust = []string{"--trust-image-filesystems"}
		}
		out, stderr, code := runBin(t, bin, state, append([]string{"plan", "--image", img, "--ops", "-ssh-host-keys", "--format", "json"}, trust...)...)
		if code != seal.ExitOK {
			t.Fatalf("plan: exit %d\n%s\n%s", code, out, stderr)
		}
		var rep seal.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Image == nil || !rep.Image.Detached || len(rep.Image.Mounts) != 1 || rep.Image.Mounts[0].Path != "/" || !rep.Image.Mounts[0].ReadOnly {
			t.Fatalf("plan's image section: %+v", rep.Image)
		}
		wantMethod := map[bool]string{false: "a loop device on the raw file", true: "qemu-storage-daemon's FUSE export"}[qcow2]
		if !host {
			wantMethod = "loop devices inside the sealing appliance"
			if a := rep.Image.Appliance; a == nil || a.Kernel == "" || a.Accel == "" || a.Seconds <= 0 {
				t.Errorf("the appliance's run is not in the report: %+v", a)
			}
		} else if rep.Image.Appliance != nil {
			t.Errorf("--trust-image-filesystems reports an appliance: %+v", rep.Image.Appliance)
		}
		if !strings.Contains(rep.Image.Method, wantMethod) {
			t.Errorf("method %q, want %q", rep.Image.Method, wantMethod)
		}
		if len(rep.Actions) == 0 {
			t.Error("plan found nothing to do")
		}
		if imagetest.Hash(t, img) != before {
			t.Fatal("plan --image changed the image")
		}
		checkNoLeftovers(t, state, img)
		out, stderr, code = runBin(t, bin, state, append([]string{"apply", "--yes", "--image", img, "--ops", "-ssh-host-keys"}, trust...)...)
		if code != seal.ExitOK || !strings.Contains(out, "SEALED") || !strings.Contains(out, "unmounted and detached") {
			t.Fatalf("apply: exit %d\n%s\n%s", code, out, stderr)
		}
		checkNoLeftovers(t, state, img)
		out, stderr, code = runBin(t, bin, state, append([]string{"verify", "--image", img, "--ops", "-ssh-host-keys"}, trust...)...)
		if code != seal.ExitOK || !strings.Contains(out, "SEALED") {
			t.Fatalf("verify after apply: exit %d\n%s\n%s", code, out, stderr)
		}
		checkNoLeftovers(t, state, img)
	}
}

func TestImageFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"plan", "--image", "x.qcow2", "--root", "/mnt"},
		{"apply", "--image", "x.qcow2", "--poweroff", "--yes"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, nil, &out, &errb, env{all: seal.All}); code != seal.ExitUsage {
			t.Errorf("%q: exit %d, want %d (%s)", args, code, seal.ExitUsage, errb.String())
		}
	}
}

// A read-only image file is refused for apply, in the report, exit 3; plan
// still works on it.
func TestImageReadOnlyRefused(t *testing.T) {
	requireImage(t)
	bin := sealprepBinary(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	img := imagetest.Build(t, dir, "disk", []imagetest.Part{
		{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 32, Tree: identityTree(t)},
	}, true)
	os.Chmod(img, 0o444)
	out, _, code := runBin(t, bin, state, "apply", "--yes", "--image", img, "--format", "json")
	var rep seal.Report
	json.Unmarshal([]byte(out), &rep)
	if code != seal.ExitUsage || rep.Status != seal.StatusRefused || len(rep.Refusals) != 1 || !strings.Contains(rep.Refusals[0].Message, "read-only") {
		t.Errorf("exit %d, report %s", code, out)
	}
	if _, stderr, code := runBin(t, bin, state, "plan", "--ops", "-ssh-host-keys", "--image", img); code != seal.ExitOK {
		t.Errorf("plan on a read-only image: exit %d: %s", code, stderr)
	}
	checkNoLeftovers(t, state, img)
}

// The kill test: apply --image is interrupted at random points with
// SIGINT, SIGTERM or SIGKILL. After SIGINT and SIGTERM nothing may be left
// at once; after SIGKILL the next run takes the leftovers down. In the end
// one uninterrupted apply seals, verify agrees, nothing is attached, and
// the qcow2 image is consistent.
func TestImageKilledAtRandomPoints(t *testing.T) {
	requireImage(t)
	bin := sealprepBinary(t)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	sigs := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL}
	for _, qcow2 := range []bool{true, false} {
		dir := t.TempDir()
		state := filepath.Join(dir, "state")
		img := imagetest.Build(t, dir, "disk", []imagetest.Part{
			{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 32, Tree: identityTree(t)},
		}, qcow2)
		// The pristine image, to put back whenever a run got to the end, so
		// that every run has the whole seal to do; and how long one takes,
		// so that the kills land inside it.
		pristine := img + ".pristine"
		copyFile(t, img, pristine)
		t0 := time.Now()
		if _, stderr, code := runBin(t, bin, state, "apply", "--yes", "--ops", "-ssh-host-keys", "--image", img); code != seal.ExitOK {
			t.Fatalf("apply: exit %d: %s", code, stderr)
		}
		span := time.Since(t0)
		killed, leftByKill, interrupted := 0, 0, 0
		for i := 0; i < 12; i++ {
			if len(imagetest.Leftovers(state, img)) == 0 {
				copyFile(t, pristine, img)
			}
			sig := sigs[rng.Intn(len(sigs))]
			delay := time.Duration(rng.Int63n(int64(span)))
			c := exec.Command(bin, "apply", "--yes", "--ops", "-ssh-host-keys", "--image", img)
			c.Env = append(os.Environ(), "SEALPREP_STATE_DIR="+state)
			var out bytes.Buffer
			c.Stdout, c.Stderr = &out, &out
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(delay)
			c.Process.Signal(sig)
			c.Wait()
			if sig == syscall.SIGKILL {
				killed++
				if left := imagetest.Leftovers(state, img); len(left) > 0 {
					leftByKill++
				}
				continue
			}
			if strings.Contains(out.String(), "interrupted") {
				interrupted++
			}
			// Nothing of this run may be left. What an earlier SIGKILL left
			// may still be there when this run was stopped before it got
			// to the recovery (a signal before the handler is installed
			// ends the process, which has attached nothing yet).
			pid := c.Process.Pid
			for _, l := range imagetest.Leftovers(state, img) {
				mine := strings.Contains(l, fmt.Sprintf("/%d-", pid)) || strings.Contains(l, fmt.Sprintf("sealprep:%d-", pid))
				earlier := strings.Contains(l, state+"/") || strings.Contains(l, "sealprep:")
				if mine || !earlier {
					t.Fatalf("qcow2=%v run %d, %v after %v: left behind: %s\noutput:\n%s", qcow2, i, sig, delay, l, out.String())
				}
			}
		}
		t.Logf("qcow2=%v: %d SIGKILLs (%d left something for the next run), %d runs interrupted by SIGINT or SIGTERM", qcow2, killed, leftByKill, interrupted)
		out, stderr, code := runBin(t, bin, state, "apply", "--yes", "--ops", "-ssh-host-keys", "--image", img)
		if code != seal.ExitOK {
			t.Fatalf("qcow2=%v: final apply: exit %d\n%s\n%s", qcow2, code, out, stderr)
		}
		checkNoLeftovers(t, state, img)
		out, _, code = runBin(t, bin, state, "verify", "--ops", "-ssh-host-keys", "--image", img)
		if code != seal.ExitOK {
			t.Fatalf("qcow2=%v: verify after the kills: exit %d\n%s", qcow2, code, out)
		}
		checkNoLeftovers(t, state, img)
		if qcow2 {
			if b, err := exec.Command("qemu-img", "check", img).CombinedOutput(); err != nil {
				t.Errorf("qemu-img check after %d SIGKILLs: %v\n%s", killed, err, b)
			}
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func checkNoLeftovers(t *testing.T, state string, images ...string) {
	t.Helper()
	if left := imagetest.Leftovers(state, images...); len(left) > 0 {
		t.Fatalf("left behind:\n%s", strings.Join(left, "\n"))
	}
}

// apply --fstrim on an image: the blocks of the removed log are discarded
// down to the file (a hole in the raw file, freed clusters in the qcow2),
// and the report carries the bytes the kernel trimmed.
func TestImageFstrim(t *testing.T) {
	requireImage(t)
	bin := sealprepBinary(t)
	for _, qcow2 := range []bool{false, true} {
		dir := t.TempDir()
		state := filepath.Join(dir, "state")
		tree := identityTree(t)
		big := make([]byte, 12<<20)
		rand.New(rand.NewSource(1)).Read(big) // incompressible, so allocated
		if err := os.WriteFile(filepath.Join(tree, "var/log/app/big.log.1"), big, 0o644); err != nil {
			t.Fatal(err)
		}
		img := imagetest.Build(t, dir, "disk", []imagetest.Part{
			{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 48, Tree: tree},
		}, qcow2)
		allocated := func() int64 {
			var st syscall.Stat_t
			if err := syscall.Stat(img, &st); err != nil {
				t.Fatal(err)
			}
			return st.Blocks * 512
		}
		before := allocated()
		out, stderr, code := runBin(t, bin, state, "apply", "--yes", "--fstrim", "--ops", "-ssh-host-keys", "--image", img, "--format", "json")
		if code != seal.ExitOK {
			t.Fatalf("exit %d: %s %s", code, out, stderr)
		}
		var rep seal.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Trim) != 1 || rep.Trim[0].Path != "/" || rep.Trim[0].Error != "" || rep.Trim[0].Bytes < 12<<20 {
			t.Errorf("qcow2=%v: trim %+v", qcow2, rep.Trim)
		}
		if after := allocated(); before-after < 10<<20 {
			t.Errorf("qcow2=%v: allocated %d -> %d bytes: the discard did not reach the image file", qcow2, before, after)
		}
		checkNoLeftovers(t, state, img)
	}
}
