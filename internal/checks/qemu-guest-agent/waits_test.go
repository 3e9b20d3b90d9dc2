package qemuguestagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
)

const debianDevice = `dev-virtio\x2dports-org.qemu.guest_agent.0.device`

// noChannelRoot is a Debian 12 guest on QEMU/KVM with qemu-guest-agent
// installed but no guest-agent channel in the VM definition: no virtio
// port, no /dev/virtio-ports link, no qemu-ga process. The unit and udev
// rule are the package's (testdata/roots/debian); edit changes the files,
// an empty value deletes one.
func noChannelRoot(t *testing.T, edit map[string]string) *fs.Root {
	t.Helper()
	fixture := func(p string) string {
		b, err := os.ReadFile("testdata/roots/debian" + p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	files := map[string]string{
		"/sys/class/dmi/id/sys_vendor":                "QEMU\n",
		"/sys/class/dmi/id/product_name":              "Standard PC (Q35 + ICH9, 2009)\n",
		"/proc/cpuinfo":                               "processor\t: 0\nflags\t\t: fpu vme hypervisor lahf_lm\n",
		"/proc/1/comm":                                "systemd\n",
		"/usr/sbin/qemu-ga":                           fixture("/usr/sbin/qemu-ga"),
		"/lib/systemd/system/" + UnitName:             fixture("/lib/systemd/system/" + UnitName),
		"/lib/udev/rules.d/60-qemu-guest-agent.rules": fixture("/lib/udev/rules.d/60-qemu-guest-agent.rules"),
		"/var/lib/dpkg/status":                        fixture("/var/lib/dpkg/status"),
		"/etc/os-release":                             fixture("/etc/os-release"),
	}
	for p, c := range edit {
		if c == "" {
			delete(files, p)
		} else {
			files[p] = c
		}
	}
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}

// waitingUnit is what systemd reports for Debian's unit while its device
// is absent: loaded, never started.
func waitingUnit(fileState string) fakeSystemd {
	return fakeSystemd{u: systemd.UnitState{Name: UnitName, LoadState: "loaded", ActiveState: "inactive", SubState: "dead", UnitFileState: fileState}}
}

func runOn(t *testing.T, root *fs.Root, sd systemd.Manager) []runner.Finding {
	t.Helper()
	env := &runner.Env{Root: root, Live: true, Systemd: sd, Now: time.Now}
	out := Run(context.Background(), env)
	checktest.Conventions(t, out, Codes)
	for _, f := range out {
		if strings.Contains(f.Remediation, "systemctl start "+UnitName) {
			t.Errorf("%s recommends `systemctl start`, which cannot work without the channel: %s", f.Code, f.Remediation)
		}
	}
	if t.Failed() {
		dump(t, out)
	}
	return out
}

func dump(t *testing.T, out []runner.Finding) {
	for _, f := range out {
		t.Logf("%s %s: %s %v | %s", f.Status, f.Code, f.Message, f.Detail, f.Remediation)
	}
}

func failures(out []runner.Finding) []string {
	var fs []string
	for _, f := range out {
		if f.Status == runner.Fail {
			fs = append(fs, f.Code)
		}
	}
	return fs
}

// TestNoChannelUnitWaits is the VM of the issue: agent installed, no
// channel. One failure (the channel), whose remediation is the channel on
// every platform; the unit's state is evidence, not a second failure with
// `systemctl start`.
func TestNoChannelUnitWaits(t *testing.T) {
	out := runOn(t, noChannelRoot(t, nil), waitingUnit("static"))
	if got := failures(out); len(got) != 1 || got[0] != CodeChannelMissing.ID {
		dump(t, out)
		t.Fatalf("failures %v, want only %s", got, CodeChannelMissing.ID)
	}
	got := index(out)
	ch := got[CodeChannelMissing.ID]
	for k, want := range map[string]string{"unit_state": "inactive (dead)", "unit_waits_for": debianDevice + " (" + DefaultVirtioPath + ")", "agent_processes": "none"} {
		if !strings.Contains(ch.Detail[k], want) {
			t.Errorf("%s detail %s = %q, want %q", CodeChannelMissing.ID, k, ch.Detail[k], want)
		}
	}
	for _, want := range []string{"<target type='virtio' name='org.qemu.guest_agent.0'/>", "-device virtserialport,chardev=qga0,name=org.qemu.guest_agent.0", "KubeVirt", "starts by itself"} {
		if !strings.Contains(ch.Remediation, want) {
			t.Errorf("channel remediation lacks %q: %s", want, ch.Remediation)
		}
	}
	w, ok := got[CodeUnitWaits.ID]
	if !ok || w.Status != runner.Skip || !strings.Contains(w.Message, "waits for the guest-agent channel "+DefaultVirtioPath) ||
		!strings.Contains(w.Detail["started_by"], "60-qemu-guest-agent.rules") {
		t.Errorf("%s = %+v", CodeUnitWaits.ID, w)
	}
	for _, c := range []string{CodeUnitInactive.ID, CodeProcessMissing.ID, CodeUnitDisabled.ID} {
		if f, ok := got[c]; ok {
			t.Errorf("unexpected %s: %+v", c, f)
		}
	}
	// Through the runner: the check's summary is the channel, alone.
	env := &runner.Env{Root: noChannelRoot(t, nil), Live: true, Systemd: waitingUnit("static"), Now: time.Now}
	r := runner.Run(context.Background(), []runner.Check{{ID: "qemu-guest-agent", Run: Run}}, env, runner.RunOptions{})[0]
	if r.Status != runner.Fail || r.Summary != "the VM has no org.qemu.guest_agent.0 virtio-serial channel" {
		t.Errorf("result %s %q", r.Status, r.Summary)
	}
}

func TestNoChannelVariants(t *testing.T) {
	rhelUnit := "[Unit]\nDescription=QEMU Guest Agent\nBindsTo=" + debianDevice + "\nIgnoreOnIsolate=True\n\n[Service]\nExecStart=/usr/bin/qemu-ga\nRestart=always\n\n[Install]\nWantedBy=" + debianDevice + "\n"
	noUdev := map[string]string{"/lib/udev/rules.d/60-qemu-guest-agent.rules": ""}
	for _, tc := range []struct {
		name   string
		edit   map[string]string
		sd     systemd.Manager
		fails  []string
		want   map[string]runner.Status
		absent []string
		says   map[string]string // code -> substring of message or remediation
	}{
		{name: "link-missing", edit: map[string]string{"/sys/class/virtio-ports/vport1p1/name": PortName + "\n", "/sys/module/virtio_console/refcnt": "1\n"},
			sd: waitingUnit("static"), fails: []string{CodeChannelLink.ID},
			want:   map[string]runner.Status{CodeUnitWaits.ID: runner.Skip},
			absent: []string{CodeUnitInactive.ID, CodeProcessMissing.ID, CodeChannelMissing.ID},
			says:   map[string]string{CodeChannelLink.ID: "udevadm trigger"}},
		{name: "rhel-bindsto-without-after", edit: mergeMaps(noUdev, map[string]string{"/lib/systemd/system/" + UnitName: ""}, map[string]string{"/usr/lib/systemd/system/" + UnitName: rhelUnit}),
			sd: waitingUnit("enabled"), fails: []string{CodeChannelMissing.ID},
			want: map[string]runner.Status{CodeUnitWaits.ID: runner.Skip}, absent: []string{CodeUnitInactive.ID, CodeProcessMissing.ID},
			says: map[string]string{CodeUnitWaits.ID: "WantedBy=" + debianDevice + " (enabled)"}},
		{name: "nothing-starts-it", edit: noUdev, sd: waitingUnit("static"), fails: []string{CodeChannelMissing.ID},
			want: map[string]runner.Status{CodeUnitWaits.ID: runner.Warn}, absent: []string{CodeUnitInactive.ID, CodeProcessMissing.ID},
			says: map[string]string{CodeUnitWaits.ID: "systemctl add-wants '" + debianDevice + "' " + UnitName}},
		{name: "unbound-by-drop-in", edit: map[string]string{"/etc/systemd/system/" + UnitName + ".d/override.conf": "[Unit]\nBindsTo=\nAfter=\n"},
			sd: waitingUnit("static"), fails: []string{CodeChannelMissing.ID, CodeUnitInactive.ID, CodeProcessMissing.ID},
			absent: []string{CodeUnitWaits.ID},
			says: map[string]string{CodeUnitInactive.ID: "Add the virtio-serial channel org.qemu.guest_agent.0 to the VM definition (on KubeVirt and Harvester, restart the VM so virt-launcher regenerates the domain) first",
				CodeProcessMissing.ID: "first: qemu-ga exits at once without it"}},
		{name: "requires-without-after", edit: map[string]string{"/lib/systemd/system/" + UnitName: "[Unit]\nRequires=" + debianDevice + "\n[Service]\nExecStart=-/usr/sbin/qemu-ga\n"},
			sd: waitingUnit("static"), fails: []string{CodeChannelMissing.ID, CodeUnitInactive.ID, CodeProcessMissing.ID}, absent: []string{CodeUnitWaits.ID}},
		{name: "requires-with-after", edit: map[string]string{"/lib/systemd/system/" + UnitName: "[Unit]\nRequires=" + debianDevice + "\nAfter=" + debianDevice + "\n[Service]\nExecStart=-/usr/sbin/qemu-ga\n"},
			sd: waitingUnit("static"), fails: []string{CodeChannelMissing.ID}, want: map[string]runner.Status{CodeUnitWaits.ID: runner.Skip}},
		{name: "no-systemd", sd: fakeSystemd{err: fmt.Errorf("%w: test", systemd.ErrNotRunning)},
			fails: []string{CodeChannelMissing.ID, CodeProcessMissing.ID}, want: map[string]runner.Status{CodeNoSystemd.ID: runner.Skip},
			says: map[string]string{CodeProcessMissing.ID: "first: qemu-ga exits at once without it"}},
		{name: "masked", sd: fakeSystemd{u: systemd.UnitState{Name: UnitName, LoadState: "masked", ActiveState: "inactive", SubState: "dead", UnitFileState: "masked"}},
			fails: []string{CodeChannelMissing.ID, CodeUnitMasked.ID, CodeProcessMissing.ID}, absent: []string{CodeUnitWaits.ID},
			says: map[string]string{CodeUnitMasked.ID: "the unit starts with the channel"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := runOn(t, noChannelRoot(t, tc.edit), tc.sd)
			got := index(out)
			if f := failures(out); strings.Join(f, ",") != strings.Join(tc.fails, ",") {
				t.Errorf("failures %v, want %v", f, tc.fails)
			}
			for c, st := range tc.want {
				if f, ok := got[c]; !ok || f.Status != st {
					t.Errorf("want %s %s, got %+v", c, st, f)
				}
			}
			for _, c := range tc.absent {
				if f, ok := got[c]; ok {
					t.Errorf("unexpected %s: %+v", c, f)
				}
			}
			for c, sub := range tc.says {
				f := got[c]
				if !strings.Contains(f.Message+" "+f.Remediation+" "+fmt.Sprint(f.Detail), sub) {
					t.Errorf("%s does not say %q: %+v", c, sub, f)
				}
			}
			if t.Failed() {
				dump(t, out)
			}
		})
	}
}

func mergeMaps(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// TestVersionFromDpkgStatus: a binary without its version string leaves
// dpkg's status file, read by internal/parse/dpkgstatus: the installed stanza
// counts, not a removed one before it, and a bad stanza elsewhere does not
// hide it.
func TestVersionFromDpkgStatus(t *testing.T) {
	status := "Package: qemu-guest-agent\nStatus: deinstall ok config-files\nArchitecture: i386\nVersion: 1:5.2+dfsg-11\n\n" +
		"junk line\n\n" +
		"Package: qemu-guest-agent\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1:8.1.3+ds-1-2\n"
	root := noChannelRoot(t, map[string]string{"/usr/sbin/qemu-ga": "\x7fELF no strings here", "/var/lib/dpkg/status": status})
	out := runOn(t, root, waitingUnit("enabled"))
	for _, f := range out {
		if f.Code == CodeInstalled.ID {
			if f.Detail["version"] != "8.1.3" || f.Detail["version_source"] != "/var/lib/dpkg/status" {
				t.Errorf("detail = %v", f.Detail)
			}
			return
		}
	}
	t.Fatalf("no %s finding", CodeInstalled.ID)
}
