//go:build vmtest

package vm

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	systemdcheck "github.com/guestcheck/guestcheck/internal/checks/systemd"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// keepKeysUserData keeps the image's host keys on a new instance.
// cloud-init's ssh module deletes every /etc/ssh/ssh_host_* key and
// generates new ones on each new instance unless ssh_deletekeys is false,
// so on a cloud-init guest a half-sealed image heals itself; it does not
// on images whose cloud-init is told to keep the keys (ssh_deletekeys:
// false, as images that pin their host keys ship it) or that have no
// cloud-init. This clone stands for those.
const keepKeysUserData = baseUserData + `ssh_deletekeys: false
write_files:
  - path: /etc/guestcheck/vm-template.yaml
    content: "checks: {ssh: {timeout: 60s}, network-identity: {timeout: 60s}}\n"
`

// templateChecks runs ssh and network-identity in the booted guest, with
// the deadlines of vm-template.yaml: the boot run shares two TCG vCPUs
// with cloud-final and twelve other checks, and on a loaded host its 5 s
// per-check deadline ends the ssh check before it judges anything (seen:
// check-timeout at load average 12). The judgement is the same code.
func templateChecks(ctx context.Context, t *testing.T, v *VM) *Report {
	t.Helper()
	if w := mustExec(ctx, t, v, "/usr/bin/systemctl", "is-system-running", "--wait"); strings.TrimSpace(w.Stdout) == "" {
		t.Logf("systemctl is-system-running --wait: exit %d %s", w.Exit, w.Stderr)
	}
	out := mustExec(ctx, t, v, "/usr/bin/guestcheck", "--config", "/etc/guestcheck/vm-template.yaml", "--only", "ssh,network-identity", "--format", "json")
	r, err := reportv1.Decode([]byte(out.Stdout))
	if err != nil {
		t.Fatalf("guestcheck --only ssh,network-identity: %v\n%s%s", err, out.Stdout, out.Stderr)
	}
	return &r
}

// halfSealedClone is the half-sealed template of issue 15: the healthy
// guest's unsealed disk sealed offline with `sealprep apply --root
// --ops -ssh-host-keys`, which records the host keys it leaves in place
// (template.json, ssh_host_keys_removed false) and clears the machine ID.
// One clone of it boots: ssh fails with ssh-hostkey-template naming the
// seal, while network-identity, which judges the machine ID the seal did
// clear, passes. The fully sealed template's clones (proveSealed) are
// the other half: the same record, and ssh passes. Last, the clone is
// sealed from inside (sealprep apply --poweroff through the agent).
func halfSealedClone(ctx context.Context, t *testing.T, e *env) {
	img := filepath.Join(e.scratch, "half-sealed.img")
	var rec sealrecord.Record
	t.Run("seal", func(t *testing.T) {
		if _, err := run(ctx, "cp", "--sparse=always", e.unsealed, img); err != nil {
			t.Fatal(err)
		}
		mnt := t.TempDir()
		if _, err := run(ctx, "mount", "-o", "loop", img, mnt); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if _, err := run(context.Background(), "umount", mnt); err != nil {
				t.Error(err)
			}
		}()
		start := time.Now()
		for _, args := range [][]string{
			{"apply", "--yes", "--root", mnt, "--ops", "-ssh-host-keys"},
			{"verify", "--root", mnt, "--ops", "-ssh-host-keys"},
		} {
			out, err := exec.CommandContext(ctx, e.sealprep, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("sealprep %s: %v\n%s", strings.Join(args, " "), err, tail(string(out), 40))
			}
			t.Logf("sealprep %s: %s", args[0], strings.TrimSpace(tail(string(out), 1)))
		}
		t.Logf("half seal in %s", time.Since(start).Round(time.Millisecond))
		b, err := os.ReadFile(filepath.Join(mnt, sealrecord.Path))
		if err != nil {
			t.Fatal(err)
		}
		if rec, err = sealrecord.Parse(b); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s:\n%s", sealrecord.Path, b)
		if rec.HostKeysRemoved || !rec.MachineIDCleared {
			t.Errorf("record: ssh_host_keys_removed %v, machine_id_cleared %v; want the keys kept and the ID cleared", rec.HostKeysRemoved, rec.MachineIDCleared)
		}
		if rec.MachineIDHash != sealrecord.HashMachineID(e.template.machineID) {
			t.Errorf("record: machine_id_sha256 is not the template's machine ID's hash")
		}
		fp := fingerprint(t, e.template.hostKey)
		if k, ok := rec.KeyByFingerprint(fp); !ok || k.File != "/etc/ssh/ssh_host_ed25519_key" {
			t.Errorf("record does not name the template's ed25519 key %s: %+v", fp, rec.HostKeys)
		}
		pub, err := os.ReadFile(filepath.Join(mnt, "/etc/ssh/ssh_host_ed25519_key.pub"))
		if err != nil || strings.TrimSpace(string(pub)) != e.template.hostKey {
			t.Errorf("the half seal did not leave the template's ed25519 key in place (%v)", err)
		}
		if mid, err := os.ReadFile(filepath.Join(mnt, "/etc/machine-id")); err != nil || len(bytes.TrimSpace(mid)) != 0 {
			t.Errorf("/etc/machine-id after the seal: %q (%v), want empty", mid, err)
		}
	})
	if t.Failed() {
		return
	}
	t.Run("clone", func(t *testing.T) {
		name := "gc-half-sealed"
		n := mgmtNIC
		n.MAC = "52:54:00:00:05:01"
		v := startVM(ctx, t, spec{
			Name: name, Base: img, Image: e.img,
			InstanceID: name + "-iid", Hostname: name,
			UserData: keepKeysUserData,
			NICs:     []nic{n},
		})
		boot, _ := bootReport(ctx, t, v)
		t.Logf("%s: /run/guestcheck/report.txt:\n%s", name, v.lastReport)
		r := templateChecks(ctx, t, v)
		if got := readGuest(ctx, t, v, "/etc/ssh/ssh_host_ed25519_key.pub"); got != e.template.hostKey {
			t.Fatalf("the clone does not present the template's ed25519 key: the scenario needs one that kept it")
		}
		mid := readGuest(ctx, t, v, "/etc/machine-id")
		if mid == e.template.machineID || mid == "" {
			t.Errorf("machine-id %q, want a new one (the seal cleared the template's)", mid)
		}

		// ssh: the keys are the template's. ssh-hostkey-kept (older than
		// the instance) may join it, depending on how long ago the
		// template generated them; nothing else may fail.
		c := expect(t, r, "ssh", "ssh-hostkey-template", "fail")
		if c != nil {
			for _, f := range c.Findings {
				if (f.Status == "fail" || f.Status == "error") && f.Code != "ssh-hostkey-template" && f.Code != "ssh-hostkey-kept" {
					t.Errorf("ssh: %s %s besides the template's keys: %s", f.Status, f.Code, f.Message)
				}
			}
			if f := expectFinding(t, c, "ssh-hostkey-template", "fail"); f != nil {
				t.Logf("%s: %s (%v)", f.Code, f.Message, f.Detail)
				for _, want := range []string{rec.Describe() + " without its ssh-host-keys operation"} {
					if !strings.Contains(f.Message, want) {
						t.Errorf("ssh-hostkey-template does not say %q: %s", want, f.Message)
					}
				}
				if got, want := f.Detail["sealed_at"], rec.SealedAt.UTC().Format(time.RFC3339); got != want {
					t.Errorf("ssh-hostkey-template sealed_at %q, want the record's %s", got, want)
				}
				if f.Detail["record"] != sealrecord.Path {
					t.Errorf("ssh-hostkey-template record %q, want %s", f.Detail["record"], sealrecord.Path)
				}
				if fp := fingerprint(t, e.template.hostKey); !strings.Contains(f.Detail["keys"], "/etc/ssh/ssh_host_ed25519_key ssh-ed25519 "+fp) {
					t.Errorf("ssh-hostkey-template keys do not name the ed25519 key %s:\n%s", fp, f.Detail["keys"])
				}
			}
		}

		// network-identity judges the machine ID, which the seal did
		// clear: the kept host keys and the record must not make it fail
		// or name the template.
		ni := expect(t, r, "network-identity", "", "pass")
		for _, code := range []string{"identity-machine-id-template", "identity-clone-kept-machine-id", "identity-template-record-invalid"} {
			if f := ni.Finding(code); f != nil {
				t.Errorf("network-identity has %s on a clone with a new machine ID: %s", code, f.Message)
			}
		}
		// The boot run: the same verdicts where its deadlines let ssh
		// finish, and nothing else wrong with the clone.
		if bs, err := checkOf(boot, "ssh"); err == nil && bs.Finding("check-timeout") == nil {
			expect(t, boot, "ssh", "ssh-hostkey-template", "fail")
		}
		expect(t, boot, "network-identity", "", "pass")
		expect(t, boot, "cloud-init", "cloud-init-done", "pass")
		expect(t, boot, "hostname", "", "pass")
		for _, ck := range boot.Checks {
			if ck.ID != "ssh" && (ck.Status == "fail" || ck.Status == "error") {
				t.Errorf("%s: a check other than ssh fails: %s", name, &ck)
			}
		}
		// Last, sealed from inside as a template build's last step does
		// it: its own seal (vm_test.go).
		t.Run("seal-in-guest", func(t *testing.T) { sealInGuest(ctx, t, e, v) })
	})
}

// fingerprint is the SHA-256 fingerprint of a .pub line, as ssh-keygen -l
// prints it.
func fingerprint(t *testing.T, pub string) string {
	t.Helper()
	k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(pub))
	if err != nil {
		t.Errorf("parse host key %q: %v", pub, err)
		return ""
	}
	return ssh.FingerprintSHA256(k)
}

// expectCycle asserts the broken guest's ordering cycle (gc-cycle-a after
// gc-cycle-b after gc-cycle-a, b pulled in by a's Wants=, started from
// runcmd) in its systemd check c: the unit graph finding with both units,
// and the journal finding naming the unit whose job systemd deleted,
// against what journalctl itself prints and what systemd then started.
func expectCycle(ctx context.Context, t *testing.T, v *VM, c *CheckResult) {
	t.Helper()
	if f := expectFinding(t, c, "systemd-ordering-cycle", "fail"); f != nil && f.Detail["units"] != "gc-cycle-a.service gc-cycle-b.service" {
		t.Errorf("systemd-ordering-cycle units %q, want gc-cycle-a.service gc-cycle-b.service", f.Detail["units"])
	}
	f := expectFinding(t, c, "systemd-ordering-cycle-broken", "fail")
	if f == nil {
		return
	}
	t.Logf("%s: %s (%v)", f.Code, f.Message, f.Detail)
	u := f.Detail["unit"]
	if u != "gc-cycle-a.service" && u != "gc-cycle-b.service" {
		t.Errorf("systemd-ordering-cycle-broken unit %q is not one of the cycle's", u)
	}
	for _, want := range []string{"gc-cycle-a.service/start", "gc-cycle-b.service/start"} {
		if !strings.Contains(f.Detail["cycle"], want) {
			t.Errorf("systemd-ordering-cycle-broken cycle %q lacks %s", f.Detail["cycle"], want)
		}
	}
	if f.Detail["journal"] != "journalctl -b -u "+u {
		t.Errorf("systemd-ordering-cycle-broken journal %q", f.Detail["journal"])
	}
	// Ground truth: journalctl's own text, and the deleted job's unit
	// never started while the other did.
	all := mustExec(ctx, t, v, "/usr/bin/journalctl", "-b", "-o", "cat", "--no-pager")
	deleted := "Job " + f.Detail["deleted_job"] + " deleted to break ordering cycle"
	if !strings.Contains(all.Stdout, deleted) {
		t.Errorf("the boot journal has no %q", deleted)
	}
	other := "gc-cycle-a.service"
	if u == other {
		other = "gc-cycle-b.service"
	}
	if got := strings.TrimSpace(mustExec(ctx, t, v, "/usr/bin/systemctl", "is-active", u).Stdout); got != "inactive" {
		t.Errorf("%s is %s, want inactive: its job was deleted", u, got)
	}
	if got := strings.TrimSpace(mustExec(ctx, t, v, "/usr/bin/systemctl", "is-active", other).Stdout); got != "active" {
		t.Errorf("%s is %s, want active", other, got)
	}
	// The query guestcheck runs, as journalctl answers it: the source of
	// internal/checks/systemd/testdata with GUESTCHECK_VM_CAPTURE.
	q := mustExec(ctx, t, v, "/usr/bin/journalctl", append([]string{"-b", "--no-pager", "-q", "-o", "json"}, systemdcheck.CycleQuery...)...)
	if q.Exit != 0 {
		t.Fatalf("journalctl %v: exit %d: %s", systemdcheck.CycleQuery, q.Exit, q.Stderr)
	}
	es, err := systemd.ParseJournalJSON(strings.NewReader(q.Stdout))
	if err != nil {
		t.Fatal(err)
	}
	cs := systemdcheck.CyclesFromJournal(es)
	if len(cs) != 1 || cs[0].DeletedUnit() != u {
		t.Errorf("the captured query gives cycles %+v, want one deleting %s", cs, u)
	}
	t.Logf("journalctl %s: %d entries:\n%s", strings.Join(systemdcheck.CycleQuery, " "), len(es), q.Stdout)
	if dir := os.Getenv("GUESTCHECK_VM_CAPTURE"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "debian12-broken-cycle-journal.json")
		if err := os.WriteFile(p, []byte(q.Stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("captured %s", p)
	}
}

// expectKernelLogCycle holds CycleQuery's second term to the real
// journalctl: the boot transaction's cycles are logged by PID 1 to the
// kernel log before journald runs, and journald stores them with
// SYSLOG_IDENTIFIER=systemd and SYSLOG_PID=1 from the "systemd[1]:"
// prefix, without _PID. A cycle cannot be put into this guest's boot
// transaction after the fact, so its three messages are written to
// /dev/kmsg the way PID 1 writes them; the query must return them
// (priorities warning and error) but none of PID 1's info messages from
// the kernel log, and they must read as a second cycle.
func expectKernelLogCycle(ctx context.Context, t *testing.T, v *VM) {
	t.Helper()
	info := mustExec(ctx, t, v, "/usr/bin/journalctl", "-b", "--no-pager", "-q", "-o", "json", "--output-fields=MESSAGE,PRIORITY",
		"_TRANSPORT=kernel", "SYSLOG_IDENTIFIER=systemd", "SYSLOG_PID=1", "PRIORITY=6")
	early, err := systemd.ParseJournalJSON(strings.NewReader(info.Stdout))
	if err != nil {
		t.Fatal(err)
	}
	if len(early) == 0 {
		t.Fatalf("no info message of PID 1 from the kernel log: the boot's early messages are not where CycleQuery looks for them")
	}
	t.Logf("%d info messages of PID 1 from the kernel log, the first: %q", len(early), early[0].Get("MESSAGE"))
	inject := `for m in '<4>systemd[1]: gc-kmsg-a.service: Found ordering cycle on gc-kmsg-b.service/start' \
	'<4>systemd[1]: gc-kmsg-a.service: Found dependency on gc-kmsg-a.service/start' \
	'<3>systemd[1]: gc-kmsg-a.service: Job gc-kmsg-b.service/start deleted to break ordering cycle starting with gc-kmsg-a.service/start'; do
	printf '%s\n' "$m" >/dev/kmsg
done
sleep 2`
	if r := mustExec(ctx, t, v, "/bin/sh", "-c", inject); r.Exit != 0 {
		t.Fatalf("write to /dev/kmsg: exit %d: %s", r.Exit, r.Stderr)
	}
	q := mustExec(ctx, t, v, "/usr/bin/journalctl", append([]string{"-b", "--no-pager", "-q", "-o", "json"}, systemdcheck.CycleQuery...)...)
	es, err := systemd.ParseJournalJSON(strings.NewReader(q.Stdout))
	if err != nil {
		t.Fatal(err)
	}
	kernel := 0
	for _, e := range es {
		if p := e.Get("PRIORITY"); p > "4" || len(p) != 1 {
			t.Errorf("CycleQuery returned an entry of priority %q: %q", p, e.Get("MESSAGE"))
		}
		if e.Get("_TRANSPORT") == "kernel" {
			kernel++
		}
	}
	if kernel != 3 {
		t.Errorf("CycleQuery returned %d entries from the kernel log, want the 3 written", kernel)
	}
	cs := systemdcheck.CyclesFromJournal(es)
	if len(cs) != 2 || cs[1].Deleted != "gc-kmsg-b.service/start" || cs[1].Start != "gc-kmsg-a.service/start" {
		t.Errorf("cycles %+v, want the runcmd one and the kernel log's", cs)
	}
}
