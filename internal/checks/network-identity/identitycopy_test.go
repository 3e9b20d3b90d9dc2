package networkidentity

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/netstate"
)

// TestJudgeCopyKeptInstance is issue #40 item 7: a booted VM's disk
// restored as a new VM the Harvester way (new MAC; same firmware UUID,
// instance-id and seed). cloud-init sees no new instance, and its
// instance names the source's MAC, which this VM lacks.
func TestJudgeCopyKeptInstance(t *testing.T) {
	t.Parallel()
	boot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	stat := "cpu  1 2 3\nbtime " + strconv.FormatInt(boot.Unix(), 10) + "\nprocesses 10\n"
	source := boot.Add(-3 * time.Hour)
	mac := func(s string) net.HardwareAddr { m, _ := net.ParseMAC(s); return m }
	old := []MACBinding{{MAC: mac("52:54:00:aa:bb:01"), At: "/var/lib/cloud/instance/network-config.json:1", Kind: "cloud-init network-config mac_address", Name: "eth0"}}
	here := []MACBinding{{MAC: mac("52:54:00:00:00:02"), At: "/etc/netplan/50-cloud-init.yaml:5", Kind: "netplan match: macaddress"}}
	type tc struct {
		name      string
		iid, prev string
		macs      []MACBinding
		snap      netstate.Snapshot
		keys      bool
		want      bool
		shares    string
	}
	for _, c := range []tc{
		{"a copy on a new MAC, no new instance", "i-src", "i-src", old, singleNIC(), true, true, "cloud-init instance, machine-id, DHCP client identity derived from the machine-id, SSH host keys"},
		{"a copy whose instance-id is the firmware UUID", "4c4c4544-0042-3510-8056-b4c04f4d3232", "4c4c4544-0042-3510-8056-b4c04f4d3232", old, singleNIC(), false, true, "cloud-init instance, machine-id, DHCP client identity derived from the machine-id"},
		{"an in-place restore keeps its MAC", "i-src", "i-src", here, singleNIC(), true, false, ""},
		{"one of two NICs is still there", "i-src", "i-src", append(append([]MACBinding{}, old...), here...), singleNIC(), true, false, ""},
		{"a new instance began this boot", "i-new", "i-src", old, singleNIC(), true, false, ""},
		{"first boot ever", "i-src", noPreviousInstance, old, singleNIC(), true, false, ""},
		{"the instance names no MAC", "i-src", "i-src", nil, singleNIC(), true, false, ""},
		{"no NIC to compare", "i-src", "i-src", old, netstate.Snapshot{}, true, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := cloneRoot(t, source, c.iid, c.prev, source.Add(time.Minute), map[string]time.Time{c.iid: source.Add(time.Minute)}, stat)
			if c.keys {
				p := filepath.Join(root.Dir(), "etc/ssh/ssh_host_ed25519_key")
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("key"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, source, source); err != nil {
					t.Fatal(err)
				}
			}
			ev := identity.ReadCloneEvidenceTimes(root, true, mtimeOnly)
			keys := ReadHostKeysBefore(root, ev.BootTime, mtimeOnly)
			fs := JudgeCopyKeptInstance(ev, CopyEvidence{InstanceMACs: c.macs, HostKeysBeforeBoot: keys}, netstate.NewTopology(c.snap))
			if !c.want {
				if len(fs) != 0 {
					t.Fatalf("got %+v, want nothing", fs)
				}
				return
			}
			if got := codesOf(fs); !slices.Equal(got, []string{"fail identity-copy-kept-instance"}) {
				t.Fatalf("got %+v", fs)
			}
			assertConventions(t, fs, Codes)
			f := fs[0]
			if f.Detail["shares"] != c.shares || !strings.Contains(f.Message, "was set up for MAC 52:54:00:aa:bb:01, which no NIC here has, and no new instance began: this VM is a copy that kept its source's instance and shares its "+c.shares[len("cloud-init instance, "):]+" (unless its own MAC changed)") ||
				f.Detail["nics"] != "eth0 52:54:00:00:00:02" || f.Detail["instance_macs"] != "52:54:00:aa:bb:01 (/var/lib/cloud/instance/network-config.json:1)" {
				t.Errorf("finding %+v", f)
			}
			if strings.Contains(strings.ToLower(f.Message+f.Detail["instance_id"]), "4c4c4544") || strings.Count(f.Message, "hash") > 1 {
				t.Errorf("the UUID instance-id is shown raw: %+v", f)
			}
			for _, want := range []string{"spec.template.spec.domain.firmware.uuid", "smbios1", "cloud-init clean --machine-id --reboot"} {
				if !strings.Contains(f.Remediation, want) {
					t.Errorf("fix %q does not say %s", f.Remediation, want)
				}
			}
		})
	}
}
