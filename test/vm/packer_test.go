//go:build vmtest

package vm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// packerTimeout bounds one `packer build` of the example: a TCG boot to
// cloud-final (four minutes with another guest on the host, ten at load
// average 20), the provisioners, the seal, Packer's qcow2 compaction.
const packerTimeout = 25 * time.Minute

// packerExample is the example's directory, from test/vm.
const packerExample = "../../packaging/examples/packer"

// packerBuild is one run of `packer build` in its own directory.
type packerBuild struct {
	dir    string // the working directory: dist/, output-debian/, reports/
	out    string // packer's output
	err    error
	dur    time.Duration
	halted time.Duration // from the start to Packer's "Gracefully halting", 0 when not reached
}

// TestPackerBuild runs the Packer example (packaging/examples/packer) as
// a user runs it, `packer build packaging/examples/packer` from a
// directory whose dist/ holds the package, with Debian's packer 1.6.6,
// from the Debian 12 test image to a sealed template. The variables it
// sets are the ones the test image and network need: the image is a root
// filesystem without a boot loader (kernel, initrd), KVM guests never
// boot here (accelerator tcg), the user network is restricted to the
// host, whose DHCP then gives no router (netdev, and a network-config in
// the seed). Everything else is the example's default.
//
// "sealed" asserts a zero exit, the template, the JUnit report, `sealprep
// verify --image` and that the build user is gone from the template;
// "refused" drops --yes from the seal, which sealprep then refuses, and
// asserts that the build fails within seconds of the shutdown step, not
// after its 5 minute timeout, with sealprep's reason in the serial log.
func TestPackerBuild(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the VM tests need root: run `make vm-test` as root")
	}
	for _, tool := range []string{"packer", "qemu-system-x86_64", "qemu-img", "qemu-storage-daemon", "mkisofs", "mmdebstrap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("missing %s: bash scripts/test-deps.sh vm", tool)
		}
	}
	ctx, cancel := testContext(t)
	defer cancel()
	if err := os.MkdirAll(cacheDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	// Not "image-*": buildImage removes other images of that name.
	scratch, err := os.MkdirTemp(cacheDir(), "run-packer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(scratch) })
	deb := debPath(t)
	img := buildImage(ctx, t, cacheDir(), deb)
	sealprep := filepath.Join(t.TempDir(), "sealprep")
	// Static, as make build makes it: it is also the sealing
	// appliance's init, which a dynamic binary cannot be.
	if _, err := run(ctx, "env", "CGO_ENABLED=0", "go", "build", "-o", sealprep, "github.com/guestcheck/guestcheck/cmd/sealprep"); err != nil {
		t.Fatal(err)
	}
	example, err := filepath.Abs(packerExample)
	if err != nil {
		t.Fatal(err)
	}
	netcfg := filepath.Join(scratch, "network-config")
	// Packer's NIC has QEMU's default MAC; cloud-init names it ens3.
	if err := os.WriteFile(netcfg, []byte(networkConfig([]nic{{Net: "192.0.2", MAC: "52:54:00:12:34:56", Slot: 3, Metric: 100}})), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := []string{
		"base_image=" + img.Root, "kernel=" + img.Kernel, "initrd=" + img.Initrd, "accelerator=tcg",
		"netdev=user,id=user.0,restrict=on,ipv6=off,net=192.0.2.0/24,hostfwd=tcp:127.0.0.1:{{ .SSHHostPort }}-:22",
		`seed_files=["` + netcfg + `"]`,
	}
	// In a group, so that the deferred cancel waits for both builds.
	t.Run("builds", func(t *testing.T) {
		t.Run("sealed", func(t *testing.T) {
			t.Parallel()
			b := runPacker(ctx, t, scratch, "sealed", example, deb, vars...)
			expectPackerSealed(ctx, t, b, sealprep, example)
		})
		t.Run("refused", func(t *testing.T) {
			t.Parallel()
			b := runPacker(ctx, t, scratch, "refused", example, deb, append(vars, "sealprep_apply_options=")...)
			expectPackerRefused(t, b)
		})
	})
}

// runPacker runs `packer build` of example in a new directory under
// scratch, with deb in its dist/ under the name make package gives it.
// Packer 1.6.6 picks its VNC and SSH forwarding ports at random and
// frees them before QEMU binds them, so two builds at once now and then
// hand QEMU a taken port ("Qemu failed to start" within seconds, seen
// once here): such a build runs once more, in a new directory.
func runPacker(ctx context.Context, t *testing.T, scratch, name, example, deb string, vars ...string) *packerBuild {
	t.Helper()
	b := runPackerOnce(ctx, t, scratch, name, example, deb, vars...)
	if b.err != nil && b.dur < time.Minute && strings.Contains(b.out, "Qemu failed to start") {
		qemuErr, _ := os.ReadFile(filepath.Join(b.dir, "packer-debug.log"))
		var why []string
		for _, l := range strings.Split(string(qemuErr), "\n") {
			if strings.Contains(l, "Qemu stderr") {
				why = append(why, l)
			}
		}
		t.Logf("%s: QEMU did not start (%s); building once more", name, strings.Join(why, "; "))
		b = runPackerOnce(ctx, t, scratch, name+"-again", example, deb, vars...)
	}
	return b
}

func runPackerOnce(ctx context.Context, t *testing.T, scratch, name, example, deb string, vars ...string) *packerBuild {
	t.Helper()
	b := &packerBuild{dir: filepath.Join(scratch, name)}
	if err := os.MkdirAll(filepath.Join(b.dir, "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(deb, filepath.Join(b.dir, "dist", filepath.Base(deb))); err != nil {
		t.Fatal(err)
	}
	args := []string{"build"}
	for _, v := range vars {
		args = append(args, "-var", v)
	}
	bctx, cancel := context.WithTimeout(ctx, packerTimeout)
	defer cancel()
	cmd := exec.CommandContext(bctx, "packer", append(args, example)...)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), "HOME="+b.dir, "CHECKPOINT_DISABLE=1", "PACKER_NO_COLOR=1",
		"PACKER_LOG=1", "PACKER_LOG_PATH="+filepath.Join(b.dir, "packer-debug.log"))
	// Packer's QEMU goes with it when the deadline kills the group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var out strings.Builder
	var wg sync.WaitGroup
	wg.Add(1)
	start := time.Now()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			if b.halted == 0 && strings.Contains(line, "Gracefully halting virtual machine") {
				b.halted = time.Since(start)
			}
			out.WriteString(line + "\n")
		}
	}()
	t.Logf("%s: packer build (a TCG boot: several minutes)", name)
	b.err = cmd.Start()
	if b.err == nil {
		b.err = cmd.Wait()
	}
	pw.Close()
	wg.Wait()
	b.dur, b.out = time.Since(start), out.String()
	t.Logf("%s: packer build ended after %s (%v); shutdown step at %s", name, b.dur.Round(time.Second), b.err, b.halted.Round(time.Second))
	return b
}

// serial returns the build VM's console log, without carriage returns.
func (b *packerBuild) serial(t *testing.T) string {
	t.Helper()
	s, err := os.ReadFile(filepath.Join(b.dir, "packer-serial.log"))
	if err != nil {
		t.Fatalf("the serial log the example captures: %v", err)
	}
	return strings.ReplaceAll(string(s), "\r", "")
}

// fail ends the test with the tails of Packer's output and of the console.
func (b *packerBuild) fail(t *testing.T, format string, args ...any) {
	t.Helper()
	console, _ := os.ReadFile(filepath.Join(b.dir, "packer-serial.log"))
	t.Fatalf("%s\npacker output (tail):\n%s\nserial console (tail):\n%s", fmt.Sprintf(format, args...),
		tail(b.out, 60), tail(strings.ReplaceAll(string(console), "\r", ""), 40))
}

// expectPackerSealed: packer exited 0 with the template and the JUnit
// report, sealprep verify --image calls the template sealed, and the build
// user of the seed, its password hash, sudo rule and sshd drop-in are not
// in it.
func expectPackerSealed(ctx context.Context, t *testing.T, b *packerBuild, sealprep, example string) {
	if b.err != nil {
		b.fail(t, "packer build: %v", b.err)
	}
	tpl := filepath.Join(b.dir, "output-debian", "debian.qcow2")
	if _, err := os.Stat(tpl); err != nil {
		b.fail(t, "the template: %v", err)
	}
	junit, err := os.ReadFile(filepath.Join(b.dir, "reports", "guestcheck.xml"))
	if err != nil || !strings.Contains(string(junit), "<testsuites") {
		b.fail(t, "the downloaded JUnit report: %v\n%s", err, tail(string(junit), 5))
	}
	t.Logf("sealed: JUnit report %d bytes; serial console: %s", len(junit), lastMatch(b.serial(t), `(?m)^sealprep: .*$`))

	vc := exec.CommandContext(ctx, sealprep, "verify", "--format", "json", "--image", tpl)
	vc.Env = append(os.Environ(), "SEALPREP_STATE_DIR="+filepath.Join(b.dir, "sealprep-state"))
	var verrb strings.Builder
	vc.Stderr = &verrb
	vout, verr := vc.Output()
	var rep struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(vout, &rep); err != nil || verr != nil || rep.Status != "sealed" {
		t.Fatalf("sealprep verify --image on the template: %v, status %q (%v)\n%s\nstderr: %s", verr, rep.Status, err, tail(string(vout), 40), tail(verrb.String(), 10))
	}
	t.Log("sealed: sealprep verify --image: status sealed")

	raw := filepath.Join(b.dir, "template.img")
	if _, err := run(ctx, "qemu-img", "convert", "-O", "raw", tpl, raw); err != nil {
		t.Fatal(err)
	}
	mnt := t.TempDir()
	if _, err := run(ctx, "mount", "-o", "loop,ro,noload", raw, mnt); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := run(context.Background(), "umount", mnt); err != nil {
			t.Error(err)
		}
	}()
	expectNoBuildCredentials(ctx, t, mnt, example)
}

// expectNoBuildCredentials: no account, home, sudo rule, sshd drop-in or
// copy of the password hash of the seed's build user is left in the
// template mounted at mnt.
func expectNoBuildCredentials(ctx context.Context, t *testing.T, mnt, example string) {
	ud, err := os.ReadFile(filepath.Join(example, "seed", "user-data"))
	if err != nil {
		t.Fatal(err)
	}
	hash := regexp.MustCompile(`(?m)^\s*passwd: "(\$6\$[^"]+)"`).FindSubmatch(ud)
	if hash == nil {
		t.Fatal("no passwd hash in seed/user-data")
	}
	for _, f := range []string{"/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow"} {
		b, err := os.ReadFile(filepath.Join(mnt, f))
		if err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile(`(?m)^packer:`).Match(b) {
			t.Errorf("the template's %s still has the build user packer", f)
		}
	}
	for _, p := range []string{"/home/packer", "/etc/sudoers.d/packer-build", "/etc/ssh/sshd_config.d/10-packer-build.conf", "/tmp/packer-seal.sh"} {
		if _, err := os.Lstat(filepath.Join(mnt, p)); err == nil {
			t.Errorf("the template still has %s", p)
		}
	}
	// Anywhere a copy could be: cloud-init's instance data, logs, the
	// journal, home directories.
	var dirs []string
	for _, d := range []string{"etc", "var", "home", "root", "tmp", "run"} {
		dirs = append(dirs, filepath.Join(mnt, d))
	}
	out, err := exec.CommandContext(ctx, "grep", append([]string{"-rlF", "--", string(hash[1])}, dirs...)...).Output()
	if len(out) > 0 {
		t.Errorf("the build user's password hash is still in the template:\n%s", out)
	} else if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("grep for the password hash: %v", err)
	}
	t.Log("sealed: no build user, password hash, sudo rule or sshd drop-in in the template")
}

// expectPackerRefused: the build failed soon after the shutdown step with
// sealprep's refusal on the serial console and in Packer's output, and
// the unsealed disk is gone.
func expectPackerRefused(t *testing.T, b *packerBuild) {
	if b.err == nil {
		b.fail(t, "packer build passed with a seal that sealprep refuses")
	}
	if b.halted == 0 {
		b.fail(t, "the build failed before the shutdown step")
	}
	if strings.Contains(b.out, "Timeout while waiting for machine to shut down") {
		b.fail(t, "the refusal ended in Packer's shutdown timeout")
	}
	if d := b.dur - b.halted; d > 2*time.Minute {
		b.fail(t, "the build took %s after the shutdown step to fail", d.Round(time.Second))
	}
	serial := b.serial(t)
	for _, want := range []string{"\nRefused", "--yes", "packer-seal: NOT SEALED: sealprep apply exited 3"} {
		if !strings.Contains(serial, want) {
			b.fail(t, "the serial log has no %q", want)
		}
	}
	// The post-processor repeats the refusal and the NOT SEALED line.
	var refusal, notSealed bool
	for _, line := range strings.Split(b.out, "\n") {
		if strings.Contains(line, "(shell-local): ") {
			refusal = refusal || strings.Contains(line, "--yes")
			notSealed = notSealed || strings.Contains(line, "packer-seal: NOT SEALED")
		}
	}
	if !refusal || !notSealed {
		b.fail(t, "the post-processor's output lacks sealprep's refusal (%v) or the NOT SEALED line (%v)", refusal, notSealed)
	}
	if _, err := os.Stat(filepath.Join(b.dir, "output-debian", "debian.qcow2")); err == nil {
		t.Error("the unsealed disk of a refused seal is still in output-debian/")
	}
	t.Logf("refused: failed %s after the shutdown step; serial console: %s", (b.dur - b.halted).Round(time.Second),
		lastMatch(serial, `(?m)^packer-seal: NOT SEALED.*$`))
	// What the user sees from the shutdown step on (docs/packaging.md).
	if i := strings.Index(b.out, "==> qemu.debian: Gracefully halting"); i >= 0 {
		t.Logf("refused: packer's output from the shutdown step:\n%s", b.out[i:])
	}
}

func lastMatch(s, re string) string {
	m := regexp.MustCompile(re).FindAllString(s, -1)
	if len(m) == 0 {
		return "(none)"
	}
	return m[len(m)-1]
}
