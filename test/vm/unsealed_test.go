//go:build vmtest

package vm

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/guestid"
)

// unsealedClones boots two clones of the healthy guest's disk, powered off
// without sealing, at once and with new instance-ids, a minute or two after
// the template's own boot: the pipeline that builds, boots and clones within
// minutes. Both keep the template's machine-id, and network-identity must
// fail on each with identity-clone-kept-machine-id, whatever the time
// between the two boots. clone-1 is then sealed in place (sealprep apply
// --poweroff), which gives the sealed image the next scenario clones.
//
// clone-2 also boots without the guest-agent channel (the cheapest honest
// home for that scenario: it needs no agent, only its report, and the
// missing channel and the kept machine-id are judged by different checks).
// It is read through its console and an export disk instead (noChannel).
func unsealedClones(ctx context.Context, t *testing.T, e *env) {
	start := time.Now()
	var mu sync.Mutex
	ids := map[string]string{}
	reports := map[string]*Report{}
	t.Run("boot", func(t *testing.T) {
		for i := 1; i <= 2; i++ {
			t.Run(fmt.Sprintf("clone-%d", i), func(t *testing.T) {
				t.Parallel()
				name := fmt.Sprintf("gc-unsealed-%d", i)
				n := mgmtNIC
				n.MAC = fmt.Sprintf("52:54:00:00:04:%02x", i)
				sp := spec{
					Name: name, Base: e.unsealed, Image: e.img,
					MetaData: fmt.Sprintf("instance-id: %s-iid\nlocal-hostname: %s\n", name, name),
					UserData: baseUserData,
					NICs:     []nic{n},
				}
				noAgent := i == 2
				if noAgent {
					sp.NoAgentChannel, sp.ExportDisk = true, true
					sp.UserData += exportUserData()
				}
				v := startVM(ctx, t, sp)
				var r *Report
				var mid, iid string
				var exported map[string][]byte
				if noAgent {
					r, exported = noChannel(ctx, t, v)
					mid = strings.TrimSpace(string(exported["root/etc/machine-id"]))
					iid = strings.TrimSpace(string(exported["root/var/lib/cloud/data/instance-id"]))
				} else {
					r, _ = bootReport(ctx, t, v)
					mid = readGuest(ctx, t, v, "/etc/machine-id")
					iid = readGuest(ctx, t, v, "/var/lib/cloud/data/instance-id")
				}
				mu.Lock()
				ids[name], reports[name] = mid, r
				mu.Unlock()
				if mid != e.template.machineID {
					t.Errorf("machine-id %s, want the template's %s: the scenario needs a clone that kept it", mid, e.template.machineID)
				}
				c := expect(t, r, "network-identity", "identity-clone-kept-machine-id", "fail")
				if f := c.Finding("identity-clone-kept-machine-id"); f != nil {
					t.Logf("%s: %s: %s (evidence %s)", name, f.Code, f.Message, f.Detail["evidence"])
				}
				// Only the identity is wrong: cloud-init ran as a new
				// instance and the other checks are unaffected.
				expect(t, r, "cloud-init", "cloud-init-done", "pass")
				expect(t, r, "hostname", "", "pass")
				if iid != name+"-iid" {
					t.Errorf("cloud-init instance-id = %q, want %s-iid", iid, name)
				}
				if dir := os.Getenv("GUESTCHECK_VM_CAPTURE"); dir != "" {
					dir = filepath.Join(dir, "debian12-unsealed-clone-"+fmt.Sprint(i))
					if noAgent {
						writeCapture(t, name, exported, dir)
					} else {
						captureIdentity(ctx, t, v, dir)
					}
				}
				if i == 1 {
					// cloud-init gave this clone new host keys: they are the
					// ones the seal records (expectSealedSSH).
					e.sealedKey = readGuest(ctx, t, v, "/etc/ssh/ssh_host_ed25519_key.pub")
					t.Run("seal", func(t *testing.T) { seal(ctx, t, e, v) })
				}
			})
		}
	})
	t.Logf("unsealed clones booted, judged and clone-1 sealed in %s", time.Since(start).Round(time.Second))
	t.Run("identity", func(t *testing.T) { compareUnsealed(t, e, ids, reports) })
}

// compareUnsealed compares the identities the two clones' boot reports
// carry, with guestid.Collisions as guestcheck fleet and sealprep prove
// do: they share the template's machine-id, shown only as its hash, and
// neither a hostname, an instance-id, a MAC nor a host key (cloud-init
// made new keys). Each clone is on a QEMU user network of its own, so
// their equal addresses (10.0.2.15) are on different networks.
func compareUnsealed(t *testing.T, e *env, ids map[string]string, reports map[string]*Report) {
	var members []guestid.Member
	for name, r := range reports {
		if r == nil || r.Identity == nil {
			t.Fatalf("%s: the boot report has no identity", name)
		}
		id := *r.Identity
		t.Logf("%s: identity %+v", name, id)
		want, _ := guestid.MachineIDHash(ids[name])
		if id.MachineIDHash != want || id.InstanceID != name+"-iid" || id.Hostname != name || len(id.HostKeys) == 0 || len(id.Interfaces) == 0 {
			t.Errorf("%s: identity %+v, want machine-id hash %s, instance-id %s-iid, hostname %s, host keys and interfaces", name, id, want, name, name)
		}
		nets := map[string]string{}
		for _, i := range id.Interfaces {
			nets[i.MAC] = "user network of " + name
		}
		members = append(members, guestid.Member{Name: name, ID: id, Networks: nets})
	}
	got := guestid.Collisions(members)
	for _, c := range got {
		t.Logf("shared %s %s by %v", c.Item, c.Value, c.Members)
		if c.Item != guestid.ItemMachineID && c.Item != guestid.ItemDHCPClient {
			t.Errorf("the clones share %s %s: only the machine-id (and what derives from it) was cloned", c.Item, c.Value)
		}
	}
	if want, _ := guestid.MachineIDHash(e.template.machineID); len(got) == 0 || got[0].Item != guestid.ItemMachineID || got[0].Value != want || len(got[0].Members) != 2 {
		t.Errorf("collisions %+v, want the template's machine-id hash %s shared by both clones first", got, want)
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
	var r Report
	if err := json.Unmarshal(files["report/report.json"], &r); err != nil {
		t.Fatalf("%s: exported report.json: %v", v.spec.Name, err)
	}
	if m := summaryLine.FindStringSubmatch(line); m[1] != strings.ToUpper(r.Status) {
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
// (the source of internal/netcheck/testdata/identity/), replacing it.
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
