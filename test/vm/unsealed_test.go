//go:build vmtest

package vm

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// noChannelClone boots one clone of the unsealed template (the healthy
// guest's disk, powered off without sealing), a minute or two after the
// template's own boot and with a new instance-id, without the guest-agent
// channel. sealprep prove boots the unsealed template's clones that have
// an agent (proveUnsealed); this one is the harness's own, because prove
// always gives its clones the channel. It keeps the template's
// machine-id, so network-identity must fail with
// identity-clone-kept-machine-id while cloud-init and hostname pass: the
// missing channel and the kept machine-id are judged by different checks,
// so one boot serves both. It is read through its console and an export
// disk (noChannel).
func noChannelClone(ctx context.Context, t *testing.T, e *env) {
	name := "gc-unsealed-2"
	n := mgmtNIC
	n.MAC = "52:54:00:00:04:02"
	v := startVM(ctx, t, spec{
		Name: name, Base: e.unsealed, Image: e.img,
		InstanceID: name + "-iid", Hostname: name,
		UserData:       baseUserData + exportUserData(),
		NICs:           []nic{n},
		NoAgentChannel: true, ExportDisk: true,
	})
	r, exported := noChannel(ctx, t, v)
	mid := strings.TrimSpace(string(exported["root/etc/machine-id"]))
	iid := strings.TrimSpace(string(exported["root/var/lib/cloud/data/instance-id"]))
	if mid != e.template.machineID {
		t.Errorf("machine-id %s, want the template's %s: the scenario needs a clone that kept it", mid, e.template.machineID)
	}
	c := expect(t, r, "network-identity", "identity-clone-kept-machine-id", "fail")
	if f := c.Finding("identity-clone-kept-machine-id"); f != nil {
		t.Logf("%s: %s: %s (evidence %s)", name, f.Code, f.Message, f.Detail["evidence"])
	}
	// Only the identity is wrong: cloud-init ran as a new instance and
	// the other checks are unaffected.
	expect(t, r, "cloud-init", "cloud-init-done", "pass")
	expect(t, r, "hostname", "", "pass")
	if iid != name+"-iid" {
		t.Errorf("cloud-init instance-id = %q, want %s-iid", iid, name)
	}
	if dir := os.Getenv("GUESTCHECK_VM_CAPTURE"); dir != "" {
		writeCapture(t, name, exported, filepath.Join(dir, "debian12-unsealed-clone-2"))
	}
}

// noChannel waits for v's console summary and its export, and asserts what
// guestcheck says of a guest without the guest-agent channel: one
// failure, the channel's, carrying the unit's state and the device it
// waits for; the unit's own finding a skip (the udev rule starts it when
// the channel appears); no inactive-unit or missing-process failures; and
// fs-freeze failing for the same reason. The never-started unit is
// inactive (dead) on a real systemd.
func noChannel(ctx context.Context, t *testing.T, v *VM) (*Report, map[string][]byte) {
	t.Helper()
	start := time.Now()
	sctx, cancel := step(ctx, bootTimeout)
	defer cancel()
	line, err := v.WaitConsole(sctx, summaryLine)
	if err != nil {
		t.Fatalf("%s: guestcheck.service summary on the console: %v", v.spec.Name, err)
	}
	t.Logf("%s: console after %s: %s", v.spec.Name, time.Since(start).Round(time.Second), line)
	wctx, cancel := step(ctx, sealTimeout)
	defer cancel()
	files, err := v.Exported(wctx)
	if err != nil {
		t.Fatal(err)
	}
	v.lastReport = string(files["report/report.txt"])
	r, err := reportv1.Decode(files["report/report.json"])
	if err != nil {
		t.Fatalf("%s: exported report.json: %v", v.spec.Name, err)
	}
	if m := summaryLine.FindStringSubmatch(line); m[1] != strings.ToUpper(string(r.Status)) {
		t.Errorf("%s: console says %s, the exported report.json says %s", v.spec.Name, m[1], r.Status)
	}
	t.Run("no-channel", func(t *testing.T) {
		t.Logf("%s: /run/guestcheck/report.txt:\n%s", v.spec.Name, v.lastReport)
		c := expectOnlyFailures(t, &r, "qemu-guest-agent", "qga-channel-missing")
		if c != nil {
			n := 0
			for _, f := range c.Findings {
				if f.Status == "fail" {
					n++
				}
			}
			if n != 1 {
				t.Errorf("qemu-guest-agent has %d fail findings, want exactly one:\n  %s", n, c)
			}
			if f := c.Finding("qga-channel-missing"); f != nil {
				t.Logf("qga-channel-missing detail: %v", f.Detail)
				if w := f.Detail["unit_waits_for"]; !strings.Contains(w, `dev-virtio\x2dports-org.qemu.guest_agent.0.device`) {
					t.Errorf("qga-channel-missing unit_waits_for = %q, want the channel's device unit", w)
				}
				if st := f.Detail["unit_state"]; st != "qemu-guest-agent.service inactive (dead)" {
					t.Errorf("qga-channel-missing unit_state = %q, want the never-started unit inactive (dead)", st)
				}
			}
			expectFinding(t, c, "qga-unit-waits-for-channel", "skip")
			for _, code := range []string{"qga-unit-inactive", "qga-process-missing"} {
				if f := c.Finding(code); f != nil {
					t.Errorf("qemu-guest-agent has %s although the unit waits for the channel: %s", code, f.Message)
				}
			}
		}
		expectOnlyFailures(t, &r, "fs-freeze", "fs-freeze-no-channel")
	})
	return &r, files
}

// identityCapture lists what captureIdentity copies: the files the
// network-identity check reads, with their times, journal files cut to
// their header (the check reads nothing else of them).
const identityCapture = `set -eu
out=$(mktemp -d)
cd "$out"
mkdir root
put() { mkdir -p "root$(dirname "$1")"; cat "$1" >"root$1"; }
for f in /etc/machine-id /var/lib/cloud/data/instance-id /var/lib/cloud/data/previous-instance-id \
	/proc/stat /proc/sys/kernel/random/boot_id /var/lib/cloud/instances/*/sem/*; do
	[ -f "$f" ] && put "$f"
done
for f in /var/log/journal/*/*.journal /var/log/journal/*/*.journal~; do
	[ -f "$f" ] || continue
	mkdir -p "root$(dirname "$f")"
	head -c 512 "$f" >"root$f"
done
(cd root && find . -type f ! -path './proc/*' | sort | sed 's,^\.,,') | while read -r f; do
	stat -c '%n	%y	%z	%a' "$f"
done >times.txt
cat /proc/uptime >uptime
date -u +%Y-%m-%dT%H:%M:%S.%NZ >capture-date
if [ -n "${GC_EXPORT_REPORT:-}" ]; then
	mkdir report
	cp /run/guestcheck/report.json /run/guestcheck/report.txt report/
fi
tar -cf - .
`

// captureIdentity copies the network-identity evidence out of v into dir
// (the source of internal/checks/network-identity/testdata/identity/), replacing it.
func captureIdentity(ctx context.Context, t *testing.T, v *VM, dir string) {
	t.Helper()
	r := mustExec(ctx, t, v, "/bin/sh", "-c", identityCapture)
	if r.Exit != 0 {
		t.Fatalf("capture: exit %d: %s", r.Exit, r.Stderr)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader([]byte(r.Stdout)))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("capture tar: %v", err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[strings.TrimPrefix(path.Clean(h.Name), "./")] = b
		}
	}
	writeCapture(t, v.spec.Name, files, dir)
}

// writeCapture replaces dir with the captured files (an exported report
// is not part of the evidence tree).
func writeCapture(t *testing.T, name string, files map[string][]byte, dir string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	n := 0
	for f, b := range files {
		if strings.HasPrefix(f, "report/") {
			continue
		}
		p := filepath.Join(dir, filepath.Clean("/"+f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		n++
	}
	times, _ := os.ReadFile(filepath.Join(dir, "times.txt"))
	t.Logf("%s: captured %d files into %s:\n%s", name, n, dir, strings.TrimSpace(string(times)))
}
