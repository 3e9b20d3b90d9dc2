//go:build vmtest

package vm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Deadlines. TCG boots take about 100 s alone and longer when two guests
// share two cores.
const (
	bootTimeout  = 12 * time.Minute // to guestcheck.service's console line
	stepTimeout  = 2 * time.Minute  // one exchange or guest command
	sealTimeout  = 5 * time.Minute  // sealprep apply --poweroff until QEMU exits
	imageTimeout = 25 * time.Minute // mmdebstrap and image assembly
)

// summaryLine is what guestcheck.service prints on the console:
// guestcheck's own summary plus where the report is.
var summaryLine = regexp.MustCompile(`guestcheck: ([A-Z]+) (\d+) fail, (\d+) error, (\d+) warn, (\d+) pass, (\d+) skip \(\d+ checks, \d+ ms\) \(report: /run/guestcheck/report\.txt\)`)

// env is what every scenario shares.
type env struct {
	img      image
	sealprep string // host build of sealprep, for verify --root
	sealed   string // the sealed image, set by the seal step
	unsealed string // the healthy guest's disk after a plain poweroff: an unsealed template
	scratch  string // per-run directory for large files, removed at the end
	template struct {
		machineID, hostKey string
	}
}

// TestVM runs every scenario: a healthy guest (report, runcmd self-check,
// freeze for real, then a plain poweroff) alongside a broken guest with
// four faults; then two clones of the healthy guest's unsealed disk, booted
// at once, of which the first is then sealed; then two clones of the
// sealed image.
func TestVM(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the VM tests need root (mmdebstrap, chroot, mkfs -d, loop mounts): run `make vm-test` as root")
	}
	for _, tool := range []string{"mmdebstrap", "qemu-system-x86_64", "qemu-img", "genisoimage", "mkfs.ext4", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("missing %s: apt-get install qemu-system-x86 qemu-utils mmdebstrap genisoimage e2fsprogs", tool)
		}
	}
	ctx, cancel := testContext(t)
	defer cancel()
	e := &env{}
	if err := os.MkdirAll(cacheDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	if e.scratch, err = os.MkdirTemp(cacheDir(), "run-"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(e.scratch) })
	e.img = buildImage(ctx, t, cacheDir(), debPath(t))
	e.sealprep = filepath.Join(t.TempDir(), "sealprep")
	if _, err := run(ctx, "go", "build", "-o", e.sealprep, "github.com/guestcheck/guestcheck/cmd/sealprep"); err != nil {
		t.Fatal(err)
	}

	t.Run("guests", func(t *testing.T) {
		t.Run("healthy", func(t *testing.T) { t.Parallel(); healthyGuest(ctx, t, e) })
		t.Run("broken", func(t *testing.T) { t.Parallel(); brokenGuest(ctx, t, e) })
	})
	t.Run("unsealed", func(t *testing.T) {
		if e.unsealed == "" {
			t.Fatal("no unsealed template: the healthy guest's poweroff step did not finish")
		}
		unsealedClones(ctx, t, e)
	})
	t.Run("clones", func(t *testing.T) {
		if e.sealed == "" {
			t.Fatal("no sealed image: the seal step did not finish")
		}
		clones(ctx, t, e)
	})
}

// testContext ends a minute before go test's -timeout, so that a stuck
// step fails with the console tail instead of a panic.
func testContext(t *testing.T) (context.Context, context.CancelFunc) {
	if d, ok := t.Deadline(); ok {
		return context.WithDeadline(context.Background(), d.Add(-time.Minute))
	}
	return context.WithTimeout(context.Background(), 50*time.Minute)
}

func cacheDir() string {
	if d := os.Getenv("GUESTCHECK_VM_CACHE"); d != "" {
		return d
	}
	return "/var/tmp/guestcheck-vm-cache"
}

// debPath is $GUESTCHECK_DEB or the newest dist/guestcheck_*_amd64.deb
// that `make package` wrote.
func debPath(t *testing.T) string {
	if p := os.Getenv("GUESTCHECK_DEB"); p != "" {
		return p
	}
	m, _ := filepath.Glob("../../dist/guestcheck_*_amd64.deb")
	var best string
	var bestT time.Time
	for _, p := range m {
		if st, err := os.Stat(p); err == nil && st.ModTime().After(bestT) {
			best, bestT = p, st.ModTime()
		}
	}
	if best == "" {
		t.Fatal("no dist/guestcheck_*_amd64.deb: run `make package` first (make vm-test does), or set GUESTCHECK_DEB")
	}
	p, _ := filepath.Abs(best)
	return p
}

func step(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

// bootReport waits for guestcheck.service's summary line on the console
// and fetches the report it wrote.
func bootReport(ctx context.Context, t *testing.T, v *VM) (*Report, []string) {
	t.Helper()
	start := time.Now()
	sctx, cancel := step(ctx, bootTimeout)
	defer cancel()
	line, err := v.WaitConsole(sctx, summaryLine)
	if err != nil {
		t.Fatalf("%s: guestcheck.service summary on the console: %v", v.spec.Name, err)
	}
	t.Logf("%s: console after %s: %s", v.spec.Name, time.Since(start).Round(time.Second), line)
	rctx, cancel := step(ctx, stepTimeout)
	defer cancel()
	r, err := v.Report(rctx, "/run/guestcheck/report.json")
	if err != nil {
		t.Fatalf("%s: %v", v.spec.Name, err)
	}
	m := summaryLine.FindStringSubmatch(line)
	if want := strings.ToUpper(r.Status); m[1] != want {
		t.Errorf("%s: console says %s, report.json says %s", v.spec.Name, m[1], r.Status)
	}
	return r, m
}

// expect asserts one check's status (any of want) and, when code is not
// empty, that a finding with that code exists; it returns the check.
func expect(t *testing.T, r *Report, id string, code string, want ...string) *CheckResult {
	t.Helper()
	c, err := r.Check(id)
	if err != nil {
		t.Errorf("%v", err)
		return nil
	}
	ok := false
	for _, w := range want {
		ok = ok || c.Status == w
	}
	if !ok {
		t.Errorf("check %s is %s, want %s:\n  %s", id, c.Status, strings.Join(want, " or "), c)
		return c
	}
	if code != "" && c.Finding(code) == nil {
		t.Errorf("check %s has no %s finding:\n  %s", id, code, c)
	}
	// A skip must say why.
	for _, f := range c.Findings {
		if f.Status == "skip" && strings.TrimSpace(f.Message) == "" {
			t.Errorf("check %s: skip finding %s gives no reason", id, f.Code)
		}
	}
	return c
}

func mustExec(ctx context.Context, t *testing.T, v *VM, path string, args ...string) ExecResult {
	t.Helper()
	sctx, cancel := step(ctx, stepTimeout)
	defer cancel()
	r, err := v.Exec(sctx, path, args...)
	if err != nil {
		t.Fatalf("%s: %v", v.spec.Name, err)
	}
	return r
}

func readGuest(ctx context.Context, t *testing.T, v *VM, path string) string {
	t.Helper()
	sctx, cancel := step(ctx, stepTimeout)
	defer cancel()
	b, err := v.ReadFile(sctx, path)
	if err != nil {
		t.Fatalf("%s: %v", v.spec.Name, err)
	}
	return strings.TrimSpace(string(b))
}

const healthyUserData = `#cloud-config
manage_etc_hosts: true
runcmd:
  - mkdir -p /run/guestcheck
  - guestcheck --exit-zero --format json --output /run/guestcheck/runcmd.json >/dev/null
`

func healthyGuest(ctx context.Context, t *testing.T, e *env) {
	v := startVM(ctx, t, spec{
		Name: "healthy", Base: e.img.Root, Image: e.img,
		MetaData: "instance-id: gc-healthy-1\nlocal-hostname: gc-healthy\n",
		UserData: healthyUserData,
		NICs:     []nic{mgmtNIC},
	})
	r, m := bootReport(ctx, t, v)

	t.Run("report", func(t *testing.T) {
		t.Logf("healthy guest's /run/guestcheck/report.txt:\n%s", v.lastReport)
		if m[1] != "PASS" || r.Status != "pass" {
			t.Errorf("report status %s (console %s), want pass", r.Status, m[1])
		}
		if r.Host.Hostname != "gc-healthy" {
			t.Errorf("report host.hostname = %q, want meta-data's local-hostname gc-healthy", r.Host.Hostname)
		}
		expect(t, r, "cloud-init", "cloud-init-done", "pass")
		expect(t, r, "hostname", "", "pass")
		expect(t, r, "routes", "routes-default-ok", "pass")
		// The user network's DNS (192.0.2.3) answers nothing under
		// restrict=on, and this guest has no domain and no dns.names, so
		// the probes skip and say so (docs/vm-tests.md).
		if c := expect(t, r, "dns", "dns-probe-skipped", "pass", "skip"); c != nil {
			if f := c.Finding("dns-probe-skipped"); f != nil && !strings.Contains(f.Message, "dns.names") {
				t.Errorf("dns probe skip reason %q does not name dns.names", f.Message)
			}
		}
		expect(t, r, "qemu-guest-agent", "", "pass")
		expect(t, r, "fs-freeze", "", "pass")
		expect(t, r, "fstab", "", "pass")
		expect(t, r, "disk-size", "", "pass", "skip")
		expect(t, r, "network-identity", "", "pass")
		for _, c := range r.Checks {
			if c.Status == "fail" || c.Status == "error" {
				t.Errorf("healthy guest: %s", &c)
			}
		}
	})

	t.Run("probe", func(t *testing.T) { probeScenario(ctx, t, v) }) // probe_test.go

	t.Run("unit", func(t *testing.T) {
		// Enabled by the package's postinst inside the image build.
		if st := mustExec(ctx, t, v, "/usr/bin/systemctl", "is-enabled", "guestcheck.service"); strings.TrimSpace(st.Stdout) != "enabled" {
			t.Errorf("systemctl is-enabled guestcheck.service: %q (exit %d)", st.Stdout, st.Exit)
		}
		// The summary reached the journal as well as the console.
		j := mustExec(ctx, t, v, "/usr/bin/journalctl", "-b", "-u", "guestcheck.service", "-o", "cat")
		if !summaryLine.MatchString(j.Stdout) {
			t.Errorf("journal of guestcheck.service has no summary line:\n%s", tail(j.Stdout, 10))
		}
		// Ordered after cloud-final (which Debian orders after
		// multi-user.target) without an ordering cycle.
		all := mustExec(ctx, t, v, "/usr/bin/journalctl", "-b", "-o", "cat")
		for _, l := range strings.Split(all.Stdout, "\n") {
			if strings.Contains(l, "ordering cycle") {
				t.Errorf("boot journal: %s", l)
			}
		}
		if !strings.Contains(all.Stdout, "Execute cloud user/final scripts") {
			t.Errorf("boot journal does not mention cloud-final.service: the check above proves nothing")
		}
		order := mustExec(ctx, t, v, "/usr/bin/systemctl", "show", "-p", "After", "guestcheck.service")
		for _, u := range []string{"cloud-final.service", "qemu-guest-agent.service", "network-online.target"} {
			if !strings.Contains(order.Stdout, u) {
				t.Errorf("guestcheck.service is not ordered after %s: %s", u, order.Stdout)
			}
		}
	})

	t.Run("runcmd-self-check", func(t *testing.T) {
		rr, err := func() (*Report, error) {
			sctx, cancel := step(ctx, stepTimeout)
			defer cancel()
			return v.Report(sctx, "/run/guestcheck/runcmd.json")
		}()
		if err != nil {
			t.Fatal(err)
		}
		expect(t, rr, "cloud-init", "cloud-init-running-in-final", "pass")
		st := mustExec(ctx, t, v, "/usr/bin/cloud-init", "status", "--long")
		if st.Exit != 0 || !regexp.MustCompile(`(?m)^status: done$`).MatchString(st.Stdout) {
			t.Errorf("cloud-init status --long: exit %d\n%s%s", st.Exit, st.Stdout, st.Stderr)
		}
		// cloud-init 23.4 and later print `extended_status: degraded done`
		// (exit 2) for recoverable errors, such as a network-config that
		// fails its schema, and still say `status: done`.
		if strings.Contains(st.Stdout, "degraded") {
			t.Errorf("cloud-init ended degraded:\n%s", st.Stdout)
		}
		res := readGuest(ctx, t, v, "/run/cloud-init/result.json")
		if !regexp.MustCompile(`"errors":\s*\[\s*\]`).MatchString(res) {
			t.Errorf("cloud-init result.json has errors:\n%s", res)
		}
	})

	t.Run("freeze-for-real", func(t *testing.T) {
		if c, err := r.Check("fs-freeze"); err != nil || c.Status != "pass" {
			t.Fatalf("guestcheck does not call this guest freeze-ready: %v %v", c, err)
		}
		a, err := v.Agent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sctx, cancel := step(ctx, stepTimeout)
		defer cancel()
		var frozen int
		if err := a.Exec(sctx, "guest-fsfreeze-freeze", nil, &frozen); err != nil {
			t.Fatalf("guest-fsfreeze-freeze: %v", err)
		}
		var status string
		serr := a.Exec(sctx, "guest-fsfreeze-status", nil, &status)
		var thawed int
		if err := a.Exec(sctx, "guest-fsfreeze-thaw", nil, &thawed); err != nil {
			t.Fatalf("guest-fsfreeze-thaw: %v", err)
		}
		if serr != nil || status != "frozen" {
			t.Errorf("guest-fsfreeze-status while frozen = %q, %v", status, serr)
		}
		if frozen < 1 || thawed != frozen {
			t.Errorf("froze %d filesystems, thawed %d", frozen, thawed)
		}
		if err := a.Exec(sctx, "guest-fsfreeze-status", nil, &status); err != nil || status != "thawed" {
			t.Errorf("guest-fsfreeze-status after thaw = %q, %v", status, err)
		}
		t.Logf("froze and thawed %d filesystem(s)", frozen)
	})

	t.Run("poweroff", func(t *testing.T) {
		// The template of the unsealed-clone scenario: booted once, then
		// powered off as it is, the way a template VM is often left.
		e.template.machineID = readGuest(ctx, t, v, "/etc/machine-id")
		e.template.hostKey = readGuest(ctx, t, v, "/etc/ssh/ssh_host_ed25519_key.pub")
		if dir := os.Getenv("GUESTCHECK_VM_CAPTURE"); dir != "" {
			captureIdentity(ctx, t, v, filepath.Join(dir, "debian12-template"))
		}
		a, err := v.Agent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sctx, cancel := step(ctx, stepTimeout)
		defer cancel()
		if err := a.Send(sctx, "guest-shutdown", map[string]string{"mode": "powerdown"}); err != nil {
			t.Fatalf("guest-shutdown: %v", err)
		}
		wctx, cancel := step(ctx, sealTimeout)
		defer cancel()
		if err := v.WaitExit(wctx); err != nil {
			t.Fatalf("qemu after guest-shutdown: %v", err)
		}
		img := filepath.Join(e.scratch, "unsealed.img")
		if _, err := run(ctx, "qemu-img", "convert", "-O", "raw", v.Overlay, img); err != nil {
			t.Fatal(err)
		}
		e.unsealed = img
	})
}

// seal runs `sealprep apply --yes --poweroff` in v through the agent,
// waits for QEMU to exit by itself, and verifies the sealed disk with
// `sealprep verify --root`; it sets e.sealed.
func seal(ctx context.Context, t *testing.T, e *env, v *VM) {
	a, err := v.Agent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := step(ctx, stepTimeout)
	defer cancel()
	// guest-exec returns at once; the guest then powers itself off.
	if err := a.Exec(sctx, "guest-exec", map[string]any{"path": "/usr/sbin/sealprep",
		"arg": []string{"apply", "--yes", "--poweroff"}}, nil); err != nil {
		t.Fatalf("guest-exec sealprep: %v", err)
	}
	start := time.Now()
	wctx, cancel := step(ctx, sealTimeout)
	defer cancel()
	if err := v.WaitExit(wctx); err != nil {
		t.Fatalf("qemu after sealprep --poweroff: %v", err)
	}
	t.Logf("qemu exited by itself %s after sealprep apply", time.Since(start).Round(time.Second))
	if ev, ok := v.Event("SHUTDOWN"); !ok || ev.Data["guest"] != true {
		t.Errorf("QMP SHUTDOWN event from the guest: %v (seen %v)", ev, ok)
	}
	sealed := filepath.Join(e.scratch, "sealed.img")
	if _, err := run(ctx, "qemu-img", "convert", "-O", "raw", v.Overlay, sealed); err != nil {
		t.Fatal(err)
	}
	// The clones boot from this image whatever verify says: they test
	// what the seal achieved, verify tests what it claims.
	e.sealed = sealed
	mnt := t.TempDir()
	if _, err := run(ctx, "mount", "-o", "loop,ro,noload", sealed, mnt); err != nil {
		t.Fatal(err)
	}
	out, verr := exec.CommandContext(ctx, e.sealprep, "verify", "--root", mnt).CombinedOutput()
	if _, err := run(context.Background(), "umount", mnt); err != nil {
		t.Error(err)
	}
	if verr != nil {
		t.Fatalf("sealprep verify --root on the sealed image: %v\n%s", verr, out)
	}
	t.Logf("sealprep verify --root: %s", strings.TrimSpace(tail(string(out), 1)))
}

// brokenGuest has four faults at once, each of which must make exactly
// its own check fail, for its own reason.
func brokenGuest(ctx context.Context, t *testing.T, e *env) {
	v := startVM(ctx, t, spec{
		Name: "broken", Base: e.img.Root, Image: e.img,
		MetaData: "instance-id: gc-broken-1\nlocal-hostname: gc-broken\n",
		// The second NIC's default route has the lower metric (100 < 200):
		// the dual-NIC takeover (see networkConfig).
		UserData: `#cloud-config
manage_etc_hosts: true
bootcmd:
  # qemu-ga with the freeze RPCs blocked (guest-exec stays allowed).
  - [sh, -c, "mkdir -p /etc/qemu && printf '[general]\\nblock-rpcs=guest-fsfreeze-freeze,guest-fsfreeze-freeze-list,guest-fsfreeze-thaw\\n' >/etc/qemu/qemu-ga.conf && systemctl --no-block restart qemu-guest-agent.service"]
  # A data disk in fstab by kernel name, without nofail.
  - [sh, -c, "grep -q ' /data ' /etc/fstab || echo '/dev/vdb /data ext4 defaults 0 2' >>/etc/fstab; mkdir -p /data; mountpoint -q /data || mount /data"]
write_files:
  # A module that fails: nothing can be written under /proc.
  - path: /proc/guestcheck-cannot-write-here
    content: "this write fails on purpose\n"
`,
		NICs:     []nic{mgmtNIC, secondNIC},
		DataDisk: true,
	})
	r, m := bootReport(ctx, t, v)
	if m[1] != "FAIL" {
		t.Errorf("console summary %q, want FAIL", m[0])
	}
	t.Run("routes", func(t *testing.T) {
		c := expect(t, r, "routes", "routes-default-takeover", "fail")
		if c != nil && !strings.Contains(c.String(), fmt.Sprintf("ens%d", secondNIC.Slot)) {
			t.Errorf("routes failure does not name the NIC that took over:\n  %s", c)
		}
	})
	t.Run("fstab", func(t *testing.T) {
		c := expect(t, r, "fstab", "fstab-kernel-device-name", "fail")
		if f := c.Finding("fstab-kernel-device-name"); c != nil && (f == nil || f.Status != "fail" || f.Detail["spec"] != "/dev/vdb") {
			t.Errorf("fstab: want a failing kernel-device-name finding for /dev/vdb:\n  %s", c)
		}
	})
	t.Run("qemu-guest-agent", func(t *testing.T) {
		c := expect(t, r, "qemu-guest-agent", "qga-freeze-rpc-blocked", "fail")
		if f := c.Finding("qga-freeze-rpc-blocked"); c != nil && (f == nil || f.Status != "fail") {
			t.Errorf("qemu-guest-agent: the freeze-blocked finding is not the failure:\n  %s", c)
		}
		// Ground truth from the agent itself.
		sctx, cancel := step(ctx, stepTimeout)
		defer cancel()
		a, err := v.Agent(sctx)
		if err != nil {
			t.Fatal(err)
		}
		info, err := a.Info(sctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range info.SupportedCommands {
			if cmd.Name == "guest-fsfreeze-freeze" && cmd.Enabled {
				t.Errorf("qemu-ga %s still allows guest-fsfreeze-freeze: the fault was not applied", info.Version)
			}
		}
	})
	t.Run("cloud-init", func(t *testing.T) {
		c := expect(t, r, "cloud-init", "cloud-init-module-error", "fail")
		if c != nil && !strings.Contains(c.Summary, "write-files") {
			t.Errorf("cloud-init failure does not name the failing module write-files: %q", c.Summary)
		}
	})
	t.Run("others-unaffected", func(t *testing.T) {
		expect(t, r, "hostname", "", "pass")
		if r.Host.Hostname != "gc-broken" {
			t.Errorf("host.hostname = %q, want gc-broken", r.Host.Hostname)
		}
	})
	t.Run("probe", func(t *testing.T) { probeScenario(ctx, t, v, "cloud-init", "fstab") }) // probe_test.go
}

// clones boots two guests from overlays of the sealed image at once, each
// with its own instance-id and hostname.
func clones(ctx context.Context, t *testing.T, e *env) {
	type result struct {
		machineID, hostKey, hostname string
	}
	results := make([]result, 2)
	t.Run("boot", func(t *testing.T) {
		for i := range results {
			t.Run(fmt.Sprintf("clone-%d", i+1), func(t *testing.T) {
				t.Parallel()
				name := fmt.Sprintf("gc-clone-%d", i+1)
				n := mgmtNIC
				n.MAC = fmt.Sprintf("52:54:00:00:03:%02x", i+1)
				v := startVM(ctx, t, spec{
					Name: name, Base: e.sealed, Image: e.img,
					MetaData: fmt.Sprintf("instance-id: %s-iid\nlocal-hostname: %s\n", name, name),
					UserData: "#cloud-config\nmanage_etc_hosts: true\n",
					NICs:     []nic{n},
				})
				r, m := bootReport(ctx, t, v)
				if m[1] != "PASS" || r.Status != "pass" {
					t.Errorf("guestcheck on %s: %s", name, r.Status)
					for _, c := range r.Checks {
						if c.Status != "pass" {
							t.Logf("  %s", &c)
						}
					}
				}
				expect(t, r, "cloud-init", "cloud-init-done", "pass")
				expect(t, r, "network-identity", "", "pass")
				if got := readGuest(ctx, t, v, "/var/lib/cloud/data/instance-id"); got != name+"-iid" {
					t.Errorf("cloud-init instance-id = %q, want %s-iid", got, name)
				}
				// A new instance: the template's instance directory is gone,
				// so cloud-init ran its per-instance modules again.
				if got := readGuest(ctx, t, v, "/var/lib/cloud/data/previous-instance-id"); got == "gc-healthy-1" || got == "gc-unsealed-1-iid" {
					t.Errorf("cloud-init saw the template's instance %s as the previous one: sealing left it", got)
				}
				hr := mustExec(ctx, t, v, "/usr/bin/ls", "/var/lib/cloud/instances")
				if got := strings.Fields(hr.Stdout); len(got) != 1 || got[0] != name+"-iid" {
					t.Errorf("/var/lib/cloud/instances = %v, want only %s-iid", got, name)
				}
				a, err := v.Agent(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var hn struct {
					HostName string `json:"host-name"`
				}
				sctx, cancel := step(ctx, stepTimeout)
				defer cancel()
				if err := a.Exec(sctx, "guest-get-host-name", nil, &hn); err != nil {
					t.Fatal(err)
				}
				results[i] = result{
					machineID: readGuest(ctx, t, v, "/etc/machine-id"),
					hostKey:   readGuest(ctx, t, v, "/etc/ssh/ssh_host_ed25519_key.pub"),
					hostname:  hn.HostName,
				}
				if hn.HostName != name {
					t.Errorf("hostname %q, want meta-data's %s", hn.HostName, name)
				}
			})
		}
	})
	t.Run("identity", func(t *testing.T) {
		a, b := results[0], results[1]
		if a.machineID == "" || b.machineID == "" {
			t.Fatal("a clone did not come up")
		}
		if a.machineID == b.machineID || a.machineID == e.template.machineID || b.machineID == e.template.machineID {
			t.Errorf("machine-ids not unique: template %s, clones %s %s", e.template.machineID, a.machineID, b.machineID)
		}
		if a.hostKey == b.hostKey || a.hostKey == e.template.hostKey || b.hostKey == e.template.hostKey {
			t.Errorf("SSH host keys not unique:\n template %s\n clone-1 %s\n clone-2 %s", e.template.hostKey, a.hostKey, b.hostKey)
		}
		t.Logf("machine-ids: template %s, clone-1 %s, clone-2 %s", e.template.machineID, a.machineID, b.machineID)
	})
}
