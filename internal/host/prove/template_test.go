package prove

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestReadTemplateRoot: the template is read by guestid's one reader, so
// a lease or a MAC pin the seal left behind is compared with the clones
// as guestcheck and fleet would compare it, and the record adds the host
// keys the template had before the seal.
func TestReadTemplateRoot(t *testing.T) {
	rec := sealrecord.Record{SealedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), SealprepVersion: "1.2.3",
		HostKeys:        []sealrecord.HostKey{{File: "/etc/ssh/ssh_host_ed25519_key", Type: "ssh-ed25519", Fingerprint: keyT}},
		HostKeysRemoved: true, MachineIDHash: sealrecord.HashMachineID(mid1), MachineIDCleared: true,
		Operations: []string{"machine-id", "ssh-host-keys"}}
	files := map[string]string{
		"/etc/machine-id":                    "",
		"/etc/hostname":                      "tmpl\n",
		"/var/lib/cloud/data/instance-id":    "i-template\n",
		"/etc/netplan/50-cloud-init.yaml":    "network:\n  version: 2\n  ethernets:\n    eth0:\n      match:\n        macaddress: \"52:54:00:aa:00:01\"\n      set-name: eth0\n      dhcp4: true\n",
		"/var/lib/dhcp/dhclient.eth0.leases": "lease {\n  interface \"eth0\";\n  option dhcp-client-identifier 1:52:54:0:aa:0:1;\n}\n",
		sealrecord.Path:                      string(rec.Marshal()),
	}
	dir := testenv.WriteTree(t, files)
	root, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	tmpl := ReadTemplateRoot(root)
	id := tmpl.Identity
	if !tmpl.Read || !tmpl.Record || tmpl.record.MachineIDHash != rec.MachineIDHash || !slices.Equal(tmpl.Operations, rec.Operations) || tmpl.SealedAt != "2026-12-01T10:00:00Z" {
		t.Errorf("record: %+v", tmpl)
	}
	if id == nil || id.MachineIDState != "empty" || id.MachineIDHash != "" || id.Hostname != "tmpl" || id.InstanceID != "i-template" {
		t.Fatalf("identity: %+v", id)
	}
	if len(id.HostKeys) != 1 || id.HostKeys[0].Fingerprint != keyT || !strings.HasSuffix(id.HostKeys[0].Path, "(before the seal)") {
		t.Errorf("host keys: %+v", id.HostKeys)
	}
	if len(id.DHCPClients) != 1 || len(id.MACBindings) != 1 {
		t.Fatalf("the lease and the MAC pin the seal left: dhcp %+v, bindings %+v", id.DHCPClients, id.MACBindings)
	}
	// A clone that kept the template's lease shares its client-id.
	c1 := clone(1, mid2, key1, "prove-1", "i-1", "52:54:00:00:00:01", "192.0.2.8/28")
	c1.Identity.Unread = nil
	c1.Identity.DHCPClients = id.DHCPClients
	_, cols := Compare([]CloneResult{c1}, tmpl)
	if !slices.ContainsFunc(cols, func(c guestid.Collision) bool {
		return c.Item == guestid.ItemDHCPClient && slices.Equal(c.Members, []string{"clone-1", TemplateName})
	}) {
		t.Errorf("a clone keeping the template's lease does not collide with it: %+v", cols)
	}
}
