package prove

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
)

// copyReport is a --copy run: clone-1 powered off, then a Harvester
// Clone of its disk kept its instance (machine-id, host keys, hostname,
// instance-id) and had no network
// on its new MAC, and a VirtualMachineClone came up as a new instance
// sharing only the machine-id on the disk.
func copyReport() Report {
	src := clone(1, mid1, key1, "prove-1", "prove-abc-1", "52:54:00:00:00:01", "192.0.2.8/28")
	src.Notes = []string{"powered off for the copies through the guest agent's guest-shutdown mode=powerdown"}
	hv := clone(1, mid1, key1, "prove-1", "prove-abc-1", "52:54:00:00:00:a1", "192.0.2.8/28")
	hv.Name, hv.FirmwareUUID = "copy-1", src.FirmwareUUID
	hv.Identity.Interfaces = []guestid.Interface{{Name: "ens3", MAC: "52:54:00:00:00:a1"}, {Name: "lo"}}
	hv.Verdict = &BootVerdict{Status: "FAIL", Checks: 3, Counts: Counts{Pass: 2, Fail: 1}}
	hv.Checks[1] = CheckVerdict{ID: "network-identity", Status: "fail", Summary: "this VM is a copy that kept its source's cloud-init instance"}
	hv.Failing = []string{"network-identity: this VM is a copy that kept its source's cloud-init instance"}
	kv := clone(2, mid1, key2, "prove-copy-2", "prove-abc-copy-2", "52:54:00:00:00:b2", "192.0.2.10/28")
	kv.Name, kv.FirmwareUUID = "copy-2", "6f1c0a52-3b8e-4d2a-9c71-0000000000b2"
	r := baseReport([]CloneResult{src}, TemplateIdentity{NotRead: "the template's own identity is read only as root"})
	s := Clone{Name: "clone-1", MAC: src.MAC}
	hp, _ := PlatformByName("harvester-clone")
	kp, _ := PlatformByName("kubevirt-clone")
	r.Copies = []CopyResult{
		{Platform: "harvester-clone", Of: "clone-1", Kept: hp.kept(), Copy: hv, Shared: sharedItems(src.Identity, hv.Identity),
			Network: copyNetwork(Clone{MAC: hv.MAC}, hv.Identity, pinnedTo(Config{}, s, hp))},
		{Platform: "kubevirt-clone", Of: "clone-1", Kept: kp.kept(), Copy: kv, Shared: sharedItems(src.Identity, kv.Identity),
			Network: copyNetwork(Clone{MAC: kv.MAC}, kv.Identity, pinnedTo(Config{}, s, kp))},
	}
	r.Failures = append(r.Failures, copyFailures(r.Copies)...)
	r.Proven = len(r.Failures) == 0
	return r
}

// TestCopyJudged: the Harvester copy fails on guestcheck, every item it
// kept and its network pinned to the source's MAC, each with Harvester's
// fix; the VirtualMachineClone fails on the machine-id alone, whose fix
// is a seal, not a UUID.
func TestCopyJudged(t *testing.T) {
	r := copyReport()
	var hv, kv []string
	for _, f := range r.Failures {
		if f.Step != StepCopy {
			t.Errorf("a failure of the copy run outside step copy: %+v", f)
			continue
		}
		what := string(f.Item)
		if what == "" {
			what = "clone"
			if strings.Contains(f.Message, networkDown) {
				what = "network"
			}
		}
		if f.Fix == "" {
			t.Errorf("no fix: %+v", f)
		}
		switch f.Clone {
		case "copy-1":
			hv = append(hv, what)
			if f.Item != "" && f.Item != guestid.ItemMachineID && !strings.Contains(f.Fix, "spec.template.spec.domain.firmware.uuid") {
				t.Errorf("Harvester copy: fix without the firmware UUID: %+v", f)
			}
		case "copy-2":
			kv = append(kv, what)
		}
	}
	// No address: its network did not come up.
	if want := []string{"clone", "machine-id", "ssh-host-key", "hostname", "instance-id", "network"}; !slices.Equal(hv, want) {
		t.Errorf("Harvester copy failed on %v, want %v", hv, want)
	}
	if want := []string{"machine-id"}; !slices.Equal(kv, want) {
		t.Errorf("VirtualMachineClone failed on %v, want %v", kv, want)
	}
	n := r.Copies[0].Network
	if n.Up || !strings.Contains(n.Reason, "by the source's MAC 52:54:00:00:00:01") {
		t.Errorf("Harvester copy network %+v", n)
	}
	if n := r.Copies[1].Network; !n.Up || n.Reason != "" {
		t.Errorf("VirtualMachineClone network %+v", n)
	}
	for _, f := range r.Failures {
		if f.Clone == "copy-2" && strings.Contains(f.Fix, "firmware UUID") {
			t.Errorf("a new-UUID copy is told to change its UUID: %s", f.Fix)
		}
	}
	text := render(t, r, func(b *bytes.Buffer, r Report) error { return WriteText(b, r) })
	for _, want := range []string{"COPY OF clone-1", "copy-1           harvester-clone  firmware-uuid, seed  up    FAIL     DOWN     machine-id, ssh-host-key, hostname, instance-id\n",
		"copy-2           kubevirt-clone   nothing              up    PASS     up       machine-id\n", "FAIL copy-1 (harvester-clone copy): shares the SSH host keys", "NOT PROVEN"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	junit := render(t, r, func(b *bytes.Buffer, r Report) error { return WriteJUnit(b, r) })
	for _, want := range []string{`name="copy-1 (harvester-clone): boots"`, `name="copy-1 (harvester-clone): machine-id not shared with clone-1"`,
		`name="copy-1 (harvester-clone): network up on its MAC"`, `name="copy-2 (kubevirt-clone): ssh-host-key not shared with clone-1"`} {
		if !strings.Contains(junit, want) {
			t.Errorf("JUnit lacks %s", want)
		}
	}
}

// TestNewCopy: each platform keeps the source's MAC and firmware UUID
// or gives new ones; every copy sits on the source's disk and network
// with an address of its own.
func TestNewCopy(t *testing.T) {
	src, err := NewClone(0, "/run/x/clone-1")
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range Platforms {
		c, err := newCopy(i, "/run/x", src, p)
		if err != nil {
			t.Fatal(err)
		}
		if (c.MAC == src.MAC) != p.KeepsMAC || (c.UUID == src.UUID) != p.KeepsUUID {
			t.Errorf("%s: MAC kept %v, UUID kept %v", p.Name, c.MAC == src.MAC, c.UUID == src.UUID)
		}
		if c.Net != src.Net || c.Base != src.Overlay() || c.own() == src.own() || c.Name != "copy-"+string(rune('1'+i)) {
			t.Errorf("%s: %+v", p.Name, c)
		}
		args := strings.Join(Args(c, Boot{Firmware: FirmwareBIOS}, Devices{}), " ")
		for _, want := range []string{`"node-name":"base0"`, `"read-only":true`, `"backing":"base0"`, "dhcpstart=" + c.own().String()} {
			if !strings.Contains(args, want) {
				t.Errorf("%s: QEMU's command line lacks %s:\n%s", p.Name, want, args)
			}
		}
	}
}

// TestPinnedTo: a kept seed names the source's MAC when prove wrote it,
// or when the user's network-config does; a copy that keeps the MAC, or
// gets a new seed, is not pinned.
func TestPinnedTo(t *testing.T) {
	s := Clone{MAC: "52:54:00:00:00:01"}
	hv, _ := PlatformByName("harvester-restore-new")
	pr, _ := PlatformByName("proxmox-restore")
	kc, _ := PlatformByName("kubevirt-clone")
	for _, c := range []struct {
		cfg  Config
		p    Platform
		want string
	}{
		{Config{}, hv, s.MAC},
		{Config{NetworkConfig: []byte("version: 2\nethernets:\n  e:\n    match: {macaddress: \"52:54:00:00:00:01\"}\n")}, hv, s.MAC},
		{Config{NetworkConfig: []byte("version: 2\nethernets:\n  e:\n    match: {name: \"en*\"}\n    dhcp4: true\n")}, hv, ""},
		{Config{}, pr, ""},
		{Config{}, kc, ""},
	} {
		if got := pinnedTo(c.cfg, s, c.p); got != c.want {
			t.Errorf("%s with %q: %q, want %q", c.p.Name, c.cfg.NetworkConfig, got, c.want)
		}
	}
}

// TestCopyOptions: --copy takes the platforms' words, each once.
func TestCopyOptions(t *testing.T) {
	ok := Config{Image: "t.qcow2", Clones: 1, MemoryMiB: 1024, CPUs: 2, Timeout: DefaultTimeout, Firmware: FirmwareAuto, Accel: AccelAuto}
	for _, c := range []struct {
		copies []string
		want   string
	}{
		{[]string{"harvester-clone", "proxmox-restore"}, ""},
		{[]string{"vmware"}, `--copy "vmware": one of harvester-clone, harvester-restore-new, kubevirt-restore, kubevirt-clone, proxmox-clone, proxmox-restore`},
		{[]string{"kubevirt-clone", "kubevirt-clone"}, "--copy kubevirt-clone: given twice; each platform's copy boots once"},
	} {
		cfg := ok
		cfg.Copies = c.copies
		err := cfg.Validate()
		if got := ""; err != nil {
			got = err.Error()
			if got != c.want {
				t.Errorf("%v: %q, want %q", c.copies, got, c.want)
			}
		} else if c.want != "" {
			t.Errorf("%v: accepted, want %q", c.copies, c.want)
		}
	}
	if got := (Config{Copies: []string{"kubevirt-clone"}}).withDefaults().Clones; got != 1 {
		t.Errorf("--copy's default clones: %d, want 1", got)
	}
}
