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

	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
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
// guestcheck's own summary ("guestcheck: FAIL (9 checks: 1 fail, ...) in
// 80 ms; fail: ID", or before it "guestcheck: FAIL 9 checks: 1 fail, ...
// (80 ms)") plus where the report is.
var summaryLine = regexp.MustCompile(`guestcheck: ([A-Z]+) \(?\d+ checks?: (\d+) fail, (\d+) error, (\d+) warn, (\d+) pass, (\d+) skip(?:; [^()]*)?(?: \(\d+ ms\)|\) in \d+ ms(?:; [^()]*)?) \(report: /run/guestcheck/report\.txt\)`)

// env is what every scenario shares.
type env struct {
	img      image
	sealprep string // host build of sealprep: verify --root, apply --image, prove
	unsealed string // the healthy guest's disk after a plain poweroff: an unsealed template
	scratch  string // per-run directory for large files, removed at the end
	template struct {
		machineID, hostKey string
	}
	// The templates built from the unsealed one (templates step).
	sealed      string            // a GPT disk booting through GRUB, sealed by sealprep apply --image
	sealedRoot  string            // its root partition alone, a filesystem image for --kernel
	sealRecord  sealrecord.Record // the record that seal left
	virtSysprep struct {
		image, machineID string // the unsealed template run through virt-sysprep, and the ID it fixed
	}
	noAgent string // sealedRoot with qemu-guest-agent masked
	noBoot  string // sealedRoot with a required fstab device that never appears
	// sealedRoot with a unit that regenerates the SSH host keys at every boot
	regenKeys string
}

// TestVM runs every scenario: a healthy guest (report, runcmd self-check,
// freeze for real, then a plain poweroff, which leaves the unsealed
// template) alongside a broken guest with four faults; then the templates
// built from the unsealed one on the host (a GPT disk sealed by sealprep
// apply --image, a virt-sysprep run, one without its agent, one that
// cannot boot); then sealprep prove on each; then guestcheck fleet over
// clones of the unsealed and sealed templates, two of them with one
// firmware UUID, under libvirt and through their agent sockets; then the
// clones prove cannot
// boot: one without the agent channel, and one of a half-sealed copy
// (--ops -ssh-host-keys), which is then sealed from inside; last,
// guestcheck freeze-drill against one guest of the image (freezedrill,
// which needs the image alone: -run '^TestVM$/^freezedrill$').
func TestVM(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the VM tests need root (mmdebstrap, chroot, mkfs -d, loop mounts): run `make vm-test` as root")
	}
	for _, tool := range []string{"mmdebstrap", "qemu-system-x86_64", "qemu-img", "mkfs.ext4", "debugfs", "mount",
		"sfdisk", "mkfs.vfat", "mmd", "mcopy", "grub-mkstandalone", "virt-sysprep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("missing %s: bash scripts/test-deps.sh vm installs what the VM tests need", tool)
		}
	}
	if _, err := os.Stat(ovmfCode); err != nil {
		t.Fatalf("no UEFI firmware for the GPT template: %v (Debian package ovmf)", err)
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
	// Searchable by others (not readable): sealprep prove's QEMU runs as
	// a dynamic user and must pass through to its --keep directory here.
	if err := os.Chmod(e.scratch, 0o711); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("GUESTCHECK_VM_KEEP") == "" {
		t.Cleanup(func() { os.RemoveAll(e.scratch) })
	} else {
		t.Logf("GUESTCHECK_VM_KEEP: the run's templates stay in %s", e.scratch)
	}
	e.img = buildImage(ctx, t, cacheDir(), debPath(t))
	e.sealprep = filepath.Join(t.TempDir(), "sealprep")
	// Static, as make build makes it: it is also the sealing
	// appliance's init, which a dynamic binary cannot be.
	if _, err := run(ctx, "env", "CGO_ENABLED=0", "go", "build", "-o", e.sealprep, "github.com/guestcheck/guestcheck/cmd/sealprep"); err != nil {
		t.Fatal(err)
	}

	t.Run("guests", func(t *testing.T) {
		t.Run("healthy", func(t *testing.T) { t.Parallel(); healthyGuest(ctx, t, e) })
		t.Run("broken", func(t *testing.T) { t.Parallel(); brokenGuest(ctx, t, e) })
	})
	t.Run("templates", func(t *testing.T) {
		if e.unsealed == "" {
			t.Fatal("no unsealed template: the healthy guest's poweroff step did not finish")
		}
		templates(ctx, t, e) // prove_test.go
	})
	// From here on sealprep prove boots the clones (prove_test.go): the
	// harness and the product share one implementation of booting clones.
	t.Run("prove", func(t *testing.T) {
		if e.sealed == "" {
			t.Fatal("no templates: the templates step did not finish")
		}
		t.Run("unsealed", func(t *testing.T) { proveUnsealed(ctx, t, e) })
		t.Run("sealed", func(t *testing.T) { proveSealed(ctx, t, e) })
		// One clone each: these judge one clone, not a comparison. The
		// no-boot guest idles in emergency mode within a minute, so two
		// guests at most are busy.
		t.Run("one-clone", func(t *testing.T) {
			t.Run("virt-sysprep", func(t *testing.T) { t.Parallel(); proveVirtSysprep(ctx, t, e) })
			t.Run("no-agent", func(t *testing.T) { t.Parallel(); proveNoAgent(ctx, t, e) })
			t.Run("no-boot", func(t *testing.T) { t.Parallel(); proveNoBoot(ctx, t, e) })
		})
		// One clone booted twice (--reboot), with a boot budget: after
		// the parallel group, so that no more than two guests are busy.
		t.Run("regen-keys", func(t *testing.T) { longScenario(t); proveRegenKeys(ctx, t, e) })
		// One clone, powered off, then two platform copies of its disk.
		t.Run("copies", func(t *testing.T) { proveCopies(ctx, t, e) })
	})
	// guestcheck fleet over clones of the unsealed and the sealed template
	// (two of them with one firmware UUID) under a private libvirtd, then
	// through their agent sockets.
	t.Run("fleet", func(t *testing.T) {
		if e.unsealed == "" || e.sealedRoot == "" {
			t.Fatal("no unsealed template or sealed root: the earlier steps did not finish")
		}
		fleetScenario(ctx, t, e) // fleet_test.go
	})
	// What prove cannot boot: a clone without the agent channel, and a
	// clone the test then works on through the agent.
	t.Run("harness", func(t *testing.T) {
		t.Run("no-channel", func(t *testing.T) { t.Parallel(); noChannelClone(ctx, t, e) })   // unsealed_test.go
		t.Run("half-sealed", func(t *testing.T) { t.Parallel(); halfSealedClone(ctx, t, e) }) // template_test.go
	})
	// guestcheck freeze-drill against real qemu-ga: one guest, every case.
	t.Run("freezedrill", func(t *testing.T) { freezeDrillScenario(ctx, t, e) }) // freezedrill_test.go
}

// longEnv runs the long scenarios (make vm-test-long): the slowest,
// which CI runs only when its 45-minute budget allows (.ci/run).
const longEnv = "GUESTCHECK_VM_LONG"

// longScenario skips t unless longEnv is 1.
func longScenario(t *testing.T) {
	t.Helper()
	if os.Getenv(longEnv) != "1" {
		t.Skip("a long scenario: make vm-test-long runs it (" + longEnv + "=1)")
	}
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
	if want := strings.ToUpper(string(r.Status)); m[1] != want {
		t.Errorf("%s: console says %s, report.json says %s", v.spec.Name, m[1], r.Status)
	}
	return r, m
}

// expect asserts one check's status (any of want) and, when code is not
// empty, that a finding with that code exists; it returns the check.
func expect(t *testing.T, r *Report, id string, code string, want ...string) *CheckResult {
	t.Helper()
	c, err := checkOf(r, id)
	if err != nil {
		t.Errorf("%v", err)
		return nil
	}
	ok := false
	for _, w := range want {
		ok = ok || string(c.Status) == w
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

// baseUserData is what every guest's user-data starts with: hosts from
// the hostname, and no password login for sshd, as the article's
// user-data has (otherwise sshd's default fails ssh-auth-baseline).
const baseUserData = `#cloud-config
manage_etc_hosts: true
ssh_pwauth: false
`

// healthyUserData runs the README's runcmd example exactly as written
// first (no directory made beforehand: guestcheck makes /run/guestcheck),
// then guestcheck twice more: the cloud-init check alone, then every
// check, so that the cloud-init check's duration with and without the
// others running is on record (runcmd-self-check logs both).
func healthyUserData(t *testing.T) string {
	return baseUserData + "runcmd:\n" + readmeRuncmd(t) +
		"  - guestcheck --exit-zero --only cloud-init --format json --output /run/guestcheck/runcmd-cloud-init.json >/dev/null\n" +
		"  - guestcheck --exit-zero --format json --output /run/guestcheck/runcmd.json >/dev/null\n"
}

// readmeFirstBootReport is where the README's runcmd example writes.
const readmeFirstBootReport = "/run/guestcheck/first-boot.json"

// readmeRuncmd returns the runcmd entries of the README's first
// "#cloud-config" example, as the README has them.
func readmeRuncmd(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const head = "```yaml\n#cloud-config\nruncmd:\n"
	_, rest, ok := strings.Cut(string(b), head)
	body, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 || !strings.Contains(body, readmeFirstBootReport) {
		t.Fatalf("README.md: no runcmd example writing %s", readmeFirstBootReport)
	}
	return body
}

// allowedWarnings are the warnings a healthy guest under these tests
// has. Under restrict=on no NTP server is reachable, so the kernel clock
// stays unsynchronised; a boot slower than the image's 180 s budget (two
// TCG guests on a loaded machine) warns with its own figures.
var allowedWarnings = map[string]bool{"time-sync-clock-unsynced": true, "systemd-boot-slow": true}

// expectHealthy asserts a healthy guest's overall verdict: pass, or warn
// when every warning is one of allowedWarnings; never fail or error.
func expectHealthy(t *testing.T, name string, r *Report, console string) {
	t.Helper()
	if console != strings.ToUpper(string(r.Status)) {
		t.Errorf("%s: console says %s, report.json says %s", name, console, r.Status)
	}
	switch r.Status {
	case "pass", "warn":
	default:
		t.Errorf("%s: report status %s, want pass or warn", name, r.Status)
	}
	for _, c := range r.Checks {
		switch c.Status {
		case "fail", "error":
			t.Errorf("%s: %s", name, &c)
		}
		for _, f := range c.Findings {
			if f.Status == "warn" && !allowedWarnings[f.Code] {
				t.Errorf("%s: unexpected warning %s in %s: %s", name, f.Code, c.ID, f.Message)
			}
		}
	}
}

// expectOnlyFailures asserts that the fail findings of check id are
// exactly codes (each at least once) and nothing else.
func expectOnlyFailures(t *testing.T, r *Report, id string, codes ...string) *CheckResult {
	t.Helper()
	c := expect(t, r, id, "", "fail")
	if c == nil {
		return nil
	}
	want := map[string]bool{}
	for _, code := range codes {
		want[code] = true
		if f := c.Finding(code); f == nil || f.Status != "fail" {
			t.Errorf("check %s: no failing %s finding:\n  %s", id, code, c)
		}
	}
	for _, f := range c.Findings {
		if (f.Status == "fail" || f.Status == "error") && !want[f.Code] {
			t.Errorf("check %s: %s %s besides %v: %s", id, f.Status, f.Code, codes, f.Message)
		}
	}
	return c
}

// expectFinding asserts that check c has a finding code with status st
// and returns it.
func expectFinding(t *testing.T, c *CheckResult, code, st string) *Finding {
	t.Helper()
	if c == nil {
		return nil
	}
	f := c.Finding(code)
	if f == nil {
		t.Errorf("check %s has no %s finding:\n  %s", c.ID, code, c)
		return nil
	}
	if string(f.Status) != st {
		t.Errorf("check %s: %s is %s, want %s: %s", c.ID, code, f.Status, st, f.Message)
	}
	return f
}

// bootTimeKeys are the systemd-boot-time figures a Debian guest has.
var bootTimeKeys = []string{"kernel_to_userspace", "userspace_to_cloud_final", "userspace_to_qemu_guest_agent", "userspace_to_ssh"}

// expectBootTime asserts the systemd check's boot figures and logs them:
// systemd-boot-time, or systemd-boot-slow when the boot really took longer
// than the budget.
func expectBootTime(t *testing.T, name string, c *CheckResult) {
	t.Helper()
	f := c.Finding("systemd-boot-time")
	if f == nil {
		f = c.Finding("systemd-boot-slow")
	}
	if f == nil {
		t.Errorf("%s: systemd has neither systemd-boot-time nor systemd-boot-slow:\n  %s", name, c)
		return
	}
	for _, k := range bootTimeKeys {
		d, err := time.ParseDuration(f.Detail[k])
		if err != nil || d <= 0 {
			t.Errorf("%s: %s %s = %q, want a positive duration", name, f.Code, k, f.Detail[k])
		}
	}
	if strings.TrimSpace(f.Detail["critical_chain"]) == "" {
		t.Errorf("%s: %s has no critical_chain", name, f.Code)
	}
	if f.Code == "systemd-boot-slow" {
		total, _, _ := strings.Cut(f.Detail["kernel_to_last_milestone"], " ")
		d, err := time.ParseDuration(total)
		b, berr := time.ParseDuration(f.Detail["budget"])
		if err != nil || berr != nil || d <= b {
			t.Errorf("%s: systemd-boot-slow with kernel_to_last_milestone %q and budget %q", name, f.Detail["kernel_to_last_milestone"], f.Detail["budget"])
		}
	}
	t.Logf("%s: %s: kernel to userspace %s, userspace to cloud-final %s, to qemu-guest-agent %s, to ssh %s; kernel to last milestone %s (budget %s)\ncritical chain:\n%s",
		name, f.Code, f.Detail["kernel_to_userspace"], f.Detail["userspace_to_cloud_final"], f.Detail["userspace_to_qemu_guest_agent"],
		f.Detail["userspace_to_ssh"], f.Detail["kernel_to_last_milestone"], f.Detail["budget"], f.Detail["critical_chain"])
}

// logDurations logs each check's duration in a report.
func logDurations(t *testing.T, what string, r *Report) {
	t.Helper()
	var parts []string
	for _, c := range r.Checks {
		parts = append(parts, fmt.Sprintf("%s %dms", c.ID, c.DurationMS))
	}
	t.Logf("%s: run %dms: %s", what, r.DurationMS, strings.Join(parts, ", "))
}

func healthyGuest(ctx context.Context, t *testing.T, e *env) {
	v := startVM(ctx, t, spec{
		Name: "healthy", Base: e.img.Root, Image: e.img,
		InstanceID: "gc-healthy-1", Hostname: "gc-healthy",
		UserData: healthyUserData(t),
		NICs:     []nic{mgmtNIC},
	})
	r, m := bootReport(ctx, t, v)

	t.Run("report", func(t *testing.T) {
		t.Logf("healthy guest's /run/guestcheck/report.txt:\n%s", v.lastReport)
		logDurations(t, "healthy guest at boot", r)
		expectHealthy(t, "healthy", r, m[1])
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

		ssh := expect(t, r, "ssh", "", "pass")
		for _, code := range []string{"ssh-unit-active", "ssh-listening", "ssh-hostkey-ok", "ssh-hostkey-fresh"} {
			expectFinding(t, ssh, code, "pass")
		}
		if f := expectFinding(t, ssh, "ssh-auth-ok", "pass"); f != nil {
			if src := f.Detail["password_authentication_expected_from"]; !strings.HasPrefix(src, "cloud-init ssh_pwauth: false") {
				t.Errorf("ssh-auth-ok: password_authentication_expected_from = %q, want it from cloud-init ssh_pwauth: false", src)
			}
		}

		// warn only for systemd-boot-slow, a boot that really took longer
		// than the budget (expectHealthy and expectBootTime hold it to that).
		sd := expect(t, r, "systemd", "", "pass", "warn")
		if sd != nil {
			// guestcheck.service is itself part of the boot: the boot
			// finishes only when it does.
			if f := sd.Finding("systemd-boot-in-progress"); f != nil {
				if f.Status != "pass" || f.Detail["own_unit"] != "guestcheck.service" {
					t.Errorf("systemd-boot-in-progress: %s with own_unit %q, want pass with guestcheck.service: %s", f.Status, f.Detail["own_unit"], f.Message)
				}
			} else {
				expectFinding(t, sd, "systemd-boot-finished", "pass")
			}
			expectFinding(t, sd, "systemd-no-ordering-cycle", "pass")
			if f := expectFinding(t, sd, "systemd-journal-no-ordering-cycle", "pass"); f != nil {
				t.Logf("healthy: %s: %s journal entries of PID 1 at warning or worse, read in %s", f.Code, f.Detail["entries_read"], f.Detail["read_in"])
			}
			expectBootTime(t, "healthy", sd)
		}

		// restrict=on: no NTP server answers, so the clock stays
		// unsynchronised while the daemon and its servers are in order.
		ts := expect(t, r, "time-sync", "", "warn")
		expectFinding(t, ts, "time-sync-daemon-active", "pass")
		expectFinding(t, ts, "time-sync-servers-ok", "pass")
		expectFinding(t, ts, "time-sync-clock-unsynced", "warn")
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
			// A JSON report printed to cloud-init's output reaches
			// the journal: its "no ordering cycle" findings are not
			// systemd's words.
			if strings.HasPrefix(strings.TrimSpace(l), `"`) {
				continue
			}
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

	t.Run("readme-runcmd", func(t *testing.T) {
		sctx, cancel := step(ctx, stepTimeout)
		defer cancel()
		r, err := v.Report(sctx, readmeFirstBootReport)
		if err != nil {
			t.Fatalf("the README's runcmd example left no report: %v", err)
		}
		if len(r.Checks) == 0 {
			t.Errorf("%s has no checks", readmeFirstBootReport)
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
		alone, err := func() (*Report, error) {
			sctx, cancel := step(ctx, stepTimeout)
			defer cancel()
			return v.Report(sctx, "/run/guestcheck/runcmd-cloud-init.json")
		}()
		if err != nil {
			t.Fatal(err)
		}
		logDurations(t, "runcmd, cloud-init alone", alone)
		logDurations(t, "runcmd, every check", rr)
		expect(t, alone, "cloud-init", "cloud-init-running-in-final", "pass")
		expect(t, rr, "cloud-init", "cloud-init-running-in-final", "pass")
		// Inside cloud-final the systemd check sees its own unit's job as
		// the boot's last: that is not a stuck boot.
		if sd := expect(t, rr, "systemd", "", "pass", "warn"); sd != nil {
			for _, f := range sd.Findings {
				if f.Status == "warn" && !allowedWarnings[f.Code] {
					t.Errorf("systemd from runcmd: unexpected warning %s: %s", f.Code, f.Message)
				}
			}
			if f := sd.Finding("systemd-boot-in-progress"); f != nil && f.Detail["own_unit"] != "cloud-final.service" {
				t.Errorf("systemd from runcmd: own_unit %q, want cloud-final.service", f.Detail["own_unit"])
			}
		}
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

	t.Run("examples", func(t *testing.T) { examplesScenario(ctx, t, v) }) // examples_test.go

	t.Run("freeze-for-real", func(t *testing.T) {
		if c, err := checkOf(r, "fs-freeze"); err != nil || c.Status != "pass" {
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

// sealInGuest runs `sealprep apply --yes --poweroff` in v through the
// agent, waits for QEMU to exit by itself (a guest-initiated QMP
// SHUTDOWN), and verifies the sealed disk with `sealprep verify --root`.
func sealInGuest(ctx context.Context, t *testing.T, e *env, v *VM) {
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
	sealed := filepath.Join(e.scratch, "sealed-in-guest.img")
	if _, err := run(ctx, "qemu-img", "convert", "-O", "raw", v.Overlay, sealed); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(sealed)
	mnt := t.TempDir()
	if _, err := run(ctx, "mount", "-o", "loop,ro,noload", sealed, mnt); err != nil {
		t.Fatal(err)
	}
	out, verr := exec.CommandContext(ctx, e.sealprep, "verify", "--root", mnt).CombinedOutput()
	if _, err := run(context.Background(), "umount", mnt); err != nil {
		t.Error(err)
	}
	if verr != nil {
		t.Fatalf("sealprep verify --root on the disk sealed in the guest: %v\n%s", verr, out)
	}
	t.Logf("sealprep verify --root: %s", strings.TrimSpace(tail(string(out), 1)))
}

// brokenGuest has four faults at once, each of which must make exactly
// its own check fail, for its own reason.
func brokenGuest(ctx context.Context, t *testing.T, e *env) {
	v := startVM(ctx, t, spec{
		Name: "broken", Base: e.img.Root, Image: e.img,
		InstanceID: "gc-broken-1", Hostname: "gc-broken",
		// The second NIC's default route has the lower metric (100 < 200):
		// the dual-NIC takeover (see networkConfig).
		UserData: baseUserData + `bootcmd:
  # qemu-ga with the freeze RPCs blocked (guest-exec stays allowed).
  - [sh, -c, "mkdir -p /etc/qemu && printf '[general]\\nblock-rpcs=guest-fsfreeze-freeze,guest-fsfreeze-freeze-list,guest-fsfreeze-thaw\\n' >/etc/qemu/qemu-ga.conf && systemctl --no-block restart qemu-guest-agent.service"]
  # A data disk in fstab by kernel name, without nofail.
  - [sh, -c, "grep -q ' /data ' /etc/fstab || echo '/dev/vdb /data ext4 defaults 0 2' >>/etc/fstab; mkdir -p /data; mountpoint -q /data || mount /data"]
write_files:
  # A drop-in read before sshd_config's own line (the first value wins)
  # that turns password login back on against ssh_pwauth: false.
  - path: /etc/ssh/sshd_config.d/10-password.conf
    content: "PasswordAuthentication yes\n"
  # A service that fails as soon as it starts.
  - path: /etc/systemd/system/gc-false.service
    content: "[Unit]\nDescription=A service that fails on purpose (guestcheck VM test)\n[Service]\nExecStart=/bin/false\n"
  # Two services ordered after each other: starting the first pulls in
  # the second (Wants=), and systemd deletes a job to break the loop.
  - path: /etc/systemd/system/gc-cycle-a.service
    content: "[Unit]\nDescription=Ordering cycle, first half (guestcheck VM test)\nWants=gc-cycle-b.service\nAfter=gc-cycle-b.service\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n"
  - path: /etc/systemd/system/gc-cycle-b.service
    content: "[Unit]\nDescription=Ordering cycle, second half (guestcheck VM test)\nAfter=gc-cycle-a.service\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/true\n"
  # A module that fails: nothing can be written under /proc. Last, since
  # write_files stops at the first file it cannot write.
  - path: /proc/guestcheck-cannot-write-here
    content: "this write fails on purpose\n"
runcmd:
  - systemctl daemon-reload
  # Type=simple: start returns once /bin/false runs; it then fails.
  - systemctl start gc-false.service || true
  # The ordering cycle, met by this start request (journal and unit graph).
  - systemctl start gc-cycle-a.service || true
  # No time daemon.
  - systemctl mask --now systemd-timesyncd.service
`,
		NICs:     []nic{mgmtNIC, secondNIC},
		DataDisk: true,
		// Spare CPU and DIMM slots for the hotplug subtest, last. At boot
		// the hotplug check only warns about them (no rule onlines what
		// would arrive), which no assertion here minds.
		Hotplug: true,
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
	t.Run("ssh", func(t *testing.T) {
		c := expectOnlyFailures(t, r, "ssh", "ssh-auth-baseline")
		if f := c.Finding("ssh-auth-baseline"); f != nil {
			if f.Detail["setting"] != "PasswordAuthentication" || f.Detail["at"] != "/etc/ssh/sshd_config.d/10-password.conf:1" {
				t.Errorf("ssh-auth-baseline: setting %q at %q, want PasswordAuthentication at /etc/ssh/sshd_config.d/10-password.conf:1", f.Detail["setting"], f.Detail["at"])
			}
		}
	})
	t.Run("systemd", func(t *testing.T) {
		// The cloud-init fault fails cloud-init.service as well (cloud-init
		// 22.4 exits 1 after a module error, and the cloud-init check
		// reports it as cloud-init-unit-failed): that failed unit is the
		// cloud-init fault's, seen by systemd. No other unit may fail.
		c := expectOnlyFailures(t, r, "systemd", "systemd-unit-failed", "systemd-ordering-cycle", "systemd-ordering-cycle-broken")
		expectCycle(ctx, t, v, c) // template_test.go
		failed := map[string]bool{}
		for _, f := range c.Findings {
			if f.Code != "systemd-unit-failed" {
				continue
			}
			t.Logf("%s: %s (%v)", f.Code, f.Message, f.Detail)
			u := f.Detail["unit"]
			failed[u] = true
			switch u {
			case "gc-false.service":
				if f.Detail["result"] != "exit-code" || f.Detail["journal"] != "journalctl -b -u gc-false.service" {
					t.Errorf("gc-false.service: result %q, journal %q; want exit-code and journalctl -b -u gc-false.service", f.Detail["result"], f.Detail["journal"])
				}
			case "cloud-init.service":
				if ci, _ := checkOf(r, "cloud-init"); ci.Finding("cloud-init-unit-failed") == nil {
					t.Errorf("systemd says cloud-init.service failed, the cloud-init check does not")
				}
			default:
				t.Errorf("failed unit %s that no fault explains: %s", u, f.Message)
			}
		}
		if !failed["gc-false.service"] {
			t.Errorf("no systemd-unit-failed finding for gc-false.service")
		}
		// At boot guestcheck.service is part of the boot, so the state is
		// still "starting"; once the boot has finished a run through the
		// agent sees the system degraded.
		w := mustExec(ctx, t, v, "/usr/bin/systemctl", "is-system-running", "--wait")
		if got := strings.TrimSpace(w.Stdout); got != "degraded" {
			t.Errorf("systemctl is-system-running --wait: %q, want degraded", got)
		}
		later := mustExec(ctx, t, v, "/usr/bin/guestcheck", "--only", "systemd", "--format", "json")
		lr, err := reportv1.Decode([]byte(later.Stdout))
		if err != nil {
			t.Fatalf("guestcheck --only systemd after boot: %v\n%s%s", err, later.Stdout, later.Stderr)
		}
		lc := expectOnlyFailures(t, &lr, "systemd", "systemd-degraded", "systemd-unit-failed", "systemd-ordering-cycle", "systemd-ordering-cycle-broken")
		if f := lc.Finding("systemd-degraded"); f != nil && !strings.Contains(f.Message, "gc-false.service (exit-code)") {
			t.Errorf("systemd-degraded does not name gc-false.service (exit-code): %s", f.Message)
		}
		expectFinding(t, lc, "systemd-boot-finished", "pass")
		expectKernelLogCycle(ctx, t, v) // template_test.go; last: it adds a cycle to the journal
	})
	t.Run("time-sync", func(t *testing.T) {
		c := expectOnlyFailures(t, r, "time-sync", "time-sync-no-daemon")
		if f := c.Finding("time-sync-no-daemon"); f != nil && !strings.Contains(f.Message, "masked") {
			t.Errorf("time-sync-no-daemon does not say the daemon is masked: %s", f.Message)
		}
	})
	t.Run("others-unaffected", func(t *testing.T) {
		// Each fault fails its own check only; the checks with no fault
		// of their own pass.
		expect(t, r, "hostname", "", "pass")
		expect(t, r, "network-identity", "", "pass")
		expect(t, r, "disk-size", "", "pass", "skip")
		if r.Host.Hostname != "gc-broken" {
			t.Errorf("host.hostname = %q, want gc-broken", r.Host.Hostname)
		}
		faulty := map[string]bool{"routes": true, "fstab": true, "qemu-guest-agent": true, "cloud-init": true, "ssh": true, "systemd": true, "time-sync": true,
			// fs-freeze fails with the freeze RPCs blocked: the same fault
			// as qemu-guest-agent's, seen from the snapshot's side.
			"fs-freeze": true}
		for _, c := range r.Checks {
			if !faulty[c.ID] && (c.Status == "fail" || c.Status == "error") && c.ID != "cloud-config" {
				t.Errorf("check without a fault of its own: %s", &c)
			}
		}
		// cloud-config compares user-data with the system, so two of the
		// faults are rightly its findings too: ssh_pwauth: false against
		// the drop-in that turns passwords back on, and the write_files
		// entry under /proc. Nothing else of it may fail.
		if cc := expect(t, r, "cloud-config", "", "fail", "warn", "pass"); cc != nil {
			for _, f := range cc.Findings {
				kp := f.Detail["key_path"]
				if (f.Status == "fail" || f.Status == "error") && kp != "ssh_pwauth" && !strings.HasPrefix(kp, "write_files") {
					t.Errorf("cloud-config %s %s at %q, from no fault of its own: %s", f.Status, f.Code, kp, f.Message)
				}
			}
		}
	})
	t.Run("probe", func(t *testing.T) { probeScenario(ctx, t, v, "cloud-init", "fstab") }) // probe_test.go
	// Last: it hot-plugs CPUs and memory and writes udev rules.
	t.Run("hotplug", func(t *testing.T) { hotplugScenario(ctx, t, v, r) }) // hotplug_test.go
}
