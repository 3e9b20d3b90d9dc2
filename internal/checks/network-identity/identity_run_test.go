package networkidentity

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/netstate/nstest"
	"github.com/guestcheck/guestcheck/internal/parse/journalhdr"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// imageEnv judges root as a mounted image (--root).
func imageEnv(root *fs.Root) *runner.Env {
	return &runner.Env{Root: root, Live: false, Config: config.Default(), Now: time.Now}
}

// TestNetworkIdentityImageRoots judges the network-config fixtures as
// images. None has /etc/machine-id, so each is a sealed template (it
// "looks sealed"); none has systemd either, so the missing file is no
// boot's concern, and client identifiers derived from the unset machine ID
// are each clone's own. TestNetworkIdentityMissingReadOnly covers the
// missing-file rule with systemd.
func TestNetworkIdentityImageRoots(t *testing.T) {
	const (
		mid   = "pass identity-machine-id-ok"
		inst  = "pass identity-template-no-instance"
		dhcp  = "pass identity-dhcp-ok"
		tmac  = "fail identity-template-mac-binding" // in a template, every binding is the template's NIC
		bound = "pass identity-mac-bindings-ok"
	)
	tests := []struct {
		root string
		want []string
	}{
		{"netplan-cloudinit", []string{mid, inst, dhcp, tmac}},
		{"netplan-mac-identifier", []string{mid, inst, dhcp, bound}},
		// The broken file is named with its line and the valid one is
		// still judged.
		{"netplan-invalid", []string{mid, inst, "warn identity-config-invalid", dhcp, bound}},
		{"networkd", []string{mid, inst, dhcp, tmac}},
		{"networkd-linklayer", []string{mid, inst, dhcp, bound}},
		{"ifcfg-rhel", []string{mid, inst, dhcp, tmac}},
		{"nm-keyfile", []string{mid, inst, dhcp, tmac}},
		{"udev-persistent", []string{mid, inst, dhcp, tmac}},
	}
	for _, tc := range tests {
		t.Run(tc.root, func(t *testing.T) {
			fs := RunIdentity(context.Background(), imageEnv(fixture(t, tc.root)))
			assertConventions(t, fs, Codes)
			if got := codesOf(fs); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v\n%+v", got, tc.want, fs)
			}
		})
	}
}

// TestNetworkIdentityRestoredClone is the Harvester restore case: the VM
// came back under a new instance-id with the original's machine-id, the
// original's journal (which ended a month before the restored instance
// first ran cloud-init) and a netplan file without `dhcp-identifier: mac`.
func TestNetworkIdentityRestoredClone(t *testing.T) {
	const mid = "0123456789abcdef0123456789abcdef"
	created := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	restored := created.Add(30 * 24 * time.Hour)
	journal := "/var/log/journal/" + mid + "/system@0000-0000000000000001-0005f0a0b0c0d0e0.journal"
	root := writeRoot(t, map[string]string{
		"/etc/machine-id":                                         mid + "\n",
		"/var/lib/cloud/data/instance-id":                         "restored-vm-2\n",
		"/var/lib/cloud/data/previous-instance-id":                "restored-vm-2\n",
		"/var/lib/cloud/instances/restored-vm-2/sem/consume_data": "",
		"/etc/netplan/50-cloud-init.yaml":                         "network:\n  version: 2\n  ethernets:\n    enp1s0:\n      dhcp4: true\n",
		journal:                                                   string(journalHeaderBytes(272, 0, mid, "fedcba9876543210fedcba9876543210", 10, created.Add(time.Minute), created.Add(24*time.Hour), time.Hour)),
	})
	sem := filepath.Join(root.Dir(), "var/lib/cloud/instances/restored-vm-2/sem/consume_data")
	if err := os.Chtimes(sem, restored, restored); err != nil {
		t.Fatal(err)
	}
	fs := RunIdentity(context.Background(), imageEnv(root))
	assertConventions(t, fs, Codes)
	want := []string{"pass identity-machine-id-ok", "fail identity-clone-kept-machine-id", "warn identity-dhcp-client-id", "pass identity-mac-bindings-ok"}
	if got := codesOf(fs); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v\n%+v", got, want, fs)
	}
	// The journal is named, its directory (the machine-id) is not.
	if m := fs[1].Message; m != "/etc/machine-id predates cloud-init instance restored-vm-2: the journal "+strings.Replace(journal, mid, "MACHINE-ID", 1)+
		" under it ended at 2026-03-02T00:00:00Z, before the instance first ran cloud-init (2026-03-31T00:00:00Z)" {
		t.Errorf("message %q", m)
	}
}

// TestNetworkIdentityMACBindingsLive compares MAC-bound config with the
// NICs of a network namespace. Root only.
func TestNetworkIdentityMACBindingsLive(t *testing.T) {
	base := map[string]string{
		"/etc/machine-id":                 "0123456789abcdef0123456789abcdef\n",
		"/etc/netplan/50-cloud-init.yaml": "network:\n  version: 2\n  ethernets:\n    enp1s0:\n      dhcp4: true\n      dhcp-identifier: mac\n      match:\n        macaddress: 52:54:00:12:34:56\n      set-name: enp1s0\n",
	}
	t.Run("the bound NIC is there", func(t *testing.T) {
		ns := nstest.New(t)
		ns.NIC(t, "enp1s0", "52:54:00:12:34:56", "192.0.2.10/24")
		fs := RunIdentity(context.Background(), liveEnv(writeRoot(t, base), ns, nil))
		assertConventions(t, fs, Codes)
		want := []string{"pass identity-machine-id-ok", "pass identity-dhcp-ok", "pass identity-mac-bindings-ok"}
		if got := codesOf(fs); !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v\n%+v", got, want, fs)
		}
	})
	t.Run("restored with a new MAC, NIC left bare", func(t *testing.T) {
		ns := nstest.New(t)
		ns.NIC(t, "enp1s0", "52:54:00:65:43:21")
		fs := RunIdentity(context.Background(), liveEnv(writeRoot(t, base), ns, nil))
		assertConventions(t, fs, Codes)
		f := mustFind(t, fs, "identity-mac-binding-orphaned")
		if f.Status != runner.Fail || !strings.HasSuffix(f.Message, "50-cloud-init.yaml:8: configuration for enp1s0 is bound to MAC 52:54:00:12:34:56, which no interface has, and enp1s0 has no address") ||
			f.Detail["nics"] != "enp1s0 52:54:00:65:43:21" {
			t.Errorf("finding = %+v", f)
		}
	})
	t.Run("stale binding beside a configured NIC", func(t *testing.T) {
		ns := nstest.New(t)
		ns.NIC(t, "enp1s0", "52:54:00:65:43:21", "192.0.2.10/24")
		fs := RunIdentity(context.Background(), liveEnv(writeRoot(t, base), ns, nil))
		assertConventions(t, fs, Codes)
		if f := mustFind(t, fs, "identity-mac-binding-stale"); f.Status != runner.Warn {
			t.Errorf("finding = %+v", f)
		}
	})
	// Issue #40 item 7: a booted VM's disk restored as a new VM the
	// Harvester way. The NIC came up on its new MAC, and cloud-init saw
	// no new instance: a copy that kept its source's identity.
	t.Run("a copy on a new MAC that kept its source's instance", func(t *testing.T) {
		ns := nstest.New(t)
		ns.NIC(t, "enp1s0", "52:54:00:65:43:21", "192.0.2.10/24")
		files := maps.Clone(base)
		files["/var/lib/cloud/data/instance-id"] = "i-source\n"
		files["/var/lib/cloud/data/previous-instance-id"] = "i-source\n"
		fs := RunIdentity(context.Background(), liveEnv(writeRoot(t, files), ns, nil))
		assertConventions(t, fs, Codes)
		f := mustFind(t, fs, "identity-copy-kept-instance")
		if f.Status != runner.Fail || !strings.HasPrefix(f.Message, "cloud-init instance i-source was set up for MAC 52:54:00:12:34:56, which no NIC here has") {
			t.Errorf("finding = %+v", f)
		}
		mustFind(t, fs, "identity-mac-binding-stale")
	})
	t.Run("booted with an uninitialized machine-id", func(t *testing.T) {
		ns := nstest.New(t)
		ns.NIC(t, "enp1s0", "52:54:00:12:34:56", "192.0.2.10/24")
		files := map[string]string{"/etc/machine-id": "uninitialized\n"}
		fs := RunIdentity(context.Background(), liveEnv(writeRoot(t, files), ns, nil))
		assertConventions(t, fs, Codes)
		if f := mustFind(t, fs, "identity-machine-id-unset"); f.Status != runner.Fail || !strings.Contains(f.Remediation, "systemd-machine-id-setup") {
			t.Errorf("finding = %+v", f)
		}
	})
}

// journalHeaderBytes builds the fixed header of a journal file the way
// journald lays it out (journal-def.h; internal/parse/journalhdr parses it).
func journalHeaderBytes(size int, state byte, machineID, bootID string, entries uint64, head, tail time.Time, mono time.Duration) []byte {
	b := make([]byte, size)
	copy(b, journalhdr.Signature)
	b[16] = state
	mid, _ := hex.DecodeString(machineID)
	copy(b[40:56], mid)
	bid, _ := hex.DecodeString(bootID)
	copy(b[56:72], bid)
	le := binary.LittleEndian
	le.PutUint64(b[88:], uint64(size))
	le.PutUint64(b[152:], entries)
	le.PutUint64(b[184:], uint64(head.UnixMicro()))
	le.PutUint64(b[192:], uint64(tail.UnixMicro()))
	le.PutUint64(b[200:], uint64(mono/time.Microsecond))
	return b
}
