package netplan

import (
	"strings"
	"testing"
)

func TestParseNetworkConfig(t *testing.T) {
	t.Parallel()
	v1 := `network:
  version: 1
  config:
    - type: physical
      name: eth0
      mac_address: "52:54:00:aa:bb:cc"
      subnets:
        - {type: static, address: 192.0.2.10, netmask: 255.255.255.0, dns_nameservers: [192.0.2.53]}
        - {type: static6, address: "2001:db8::10/64"}
        - {type: dhcp6}
    - {type: bond, name: bond0, bond_interfaces: [eth1, eth2], subnets: [{type: dhcp}]}
    - {type: nameserver, address: 203.0.113.53, search: corp.test}
    - {type: nameserver, address: [192.0.2.54], interface: eth0}
    - {type: route, destination: 0.0.0.0/0, gateway: 192.0.2.1, metric: 100}
`
	c, probs := ParseNetworkConfig("n.yaml", []byte(v1))
	if len(probs) != 0 || c.Version != 1 || len(c.V1.Ifaces) != 2 {
		t.Fatalf("config %+v, problems %v", c, probs)
	}
	e0, b0 := c.V1.Ifaces[0], c.V1.Ifaces[1]
	if e0.Type != "physical" || e0.Name != "eth0" || e0.At != "n.yaml:5" || e0.MAC.String() != "52:54:00:aa:bb:cc" || e0.DHCP4 || !e0.DHCP6 ||
		len(e0.Addresses) != 2 || e0.Addresses[0].Prefix.String() != "192.0.2.10/24" || len(e0.Nameservers) != 2 ||
		len(e0.Gateways) != 1 || e0.Gateways[0].Metric != "100" {
		t.Errorf("eth0 = %+v", e0)
	}
	if b0.Type != "bond" || !b0.DHCP4 || strings.Join(b0.Members, ",") != "eth1,eth2" || len(b0.Gateways) != 0 {
		t.Errorf("bond0 = %+v", b0)
	}
	if len(c.V1.Nameservers) != 1 || c.V1.Nameservers[0].Addr.String() != "203.0.113.53" || len(c.V1.Search) != 1 {
		t.Errorf("global = %+v %+v", c.V1.Nameservers, c.V1.Search)
	}

	// Version 2 without the "network" key, as JSON, is netplan's shape.
	c, probs = ParseNetworkConfig("n.json", []byte(`{"version": 2, "ethernets": {"eth0": {"dhcp4": true, "match": {"name": "en*"}}}}`))
	if len(probs) != 0 || c.Version != 2 || len(c.V2.Devices) != 1 || c.V2.Devices[0].Name() != "" || !*c.V2.Devices[0].DHCP4 {
		t.Errorf("v2 = %+v %v", c, probs)
	}
	// "config: disabled" declares nothing, however it is written.
	for _, in := range []string{"network: {config: disabled}\n", "network:\n  config: disabled\n  version: 1\n", `{"config": "disabled"}`} {
		c, probs := ParseNetworkConfig("n", []byte(in))
		if !c.Disabled || c.Version != 0 || len(probs) != 0 {
			t.Errorf("ParseNetworkConfig(%q) = %+v, %v; want disabled", in, c, probs)
		}
	}
	for in, want := range map[string]string{
		"network: {version: 3}":                    `n:1: version must be 1 or 2, not "3"`,
		"network: [a]":                             `n:1: "network" is not a mapping`,
		"version: 1\nconfig: [{name: x}]\n":        "n:2: config entry without a type",
		"version: 1\nconfig: [{type: physical}]\n": `n:2: physical entry without a name`,
		"version: 1\nconfig:\n  - type: physical\n    name: e\n    subnets: [{type: static}]\n":                                     `n:5: physical "e": static subnet without an address`,
		"version: 1\nconfig:\n  - type: physical\n    name: e\n    subnets: [{type: bogus}]\n":                                      `n:5: physical "e": unknown subnet type "bogus"`,
		"version: 1\nconfig:\n  - {type: physical, name: e, subnets: [{type: static, address: 192.0.2.1, netmask: 255.0.255.0}]}\n": `n:3: physical "e": netmask "255.0.255.0" is not a netmask`,
	} {
		_, probs := ParseNetworkConfig("n", []byte(in))
		if len(probs) != 1 || probs[0].String() != want {
			t.Errorf("ParseNetworkConfig(%q) problems %v, want %q", in, probs, want)
		}
	}
}

// TestMergeRules pins netplan's merge rules that TestNetplanMergeDifferential
// (in internal/checks/network-config) checks against netplan generate.
func TestMergeRules(t *testing.T) {
	t.Parallel()
	a, _ := Parse("/etc/netplan/50-cloud-init.yaml", []byte("network:\n  ethernets:\n    eth0:\n      dhcp4: true\n      match: {macaddress: \"52:54:00:12:34:56\"}\n      addresses: [192.0.2.10/24]\n      set-name: lan0\n"))
	b, _ := Parse("/etc/netplan/90-local.yaml", []byte("network:\n  renderer: NetworkManager\n  ethernets:\n    eth0:\n      dhcp4: false\n      match: {driver: virtio_net}\n      addresses: [192.0.2.11/24]\n"))
	m := Merge([]File{a, b})
	d := m.Devices[0]
	if m.Renderer != "NetworkManager" || len(m.Devices) != 1 || *d.DHCP4 || d.Match.MAC == nil || len(d.Match.Drivers) != 1 ||
		len(d.Addresses) != 2 || d.Name() != "lan0" || d.At != "/etc/netplan/50-cloud-init.yaml:3" {
		t.Errorf("merged = %+v", m)
	}
	// Merging leaves the parsed files as they were.
	if len(a.Devices[0].Addresses) != 1 || a.Devices[0].Match.Drivers != nil || !*a.Devices[0].DHCP4 {
		t.Errorf("merge changed the first file: %+v", a.Devices[0])
	}
}

func FuzzParseNetworkConfig(f *testing.F) {
	f.Add([]byte("network:\n  version: 2\n  ethernets:\n    eth0:\n      match: {macaddress: '52:54:00:12:34:56', driver: [a, b]}\n      addresses: [192.0.2.1/24]\n      routes: [{to: default, via: 192.0.2.254}]\n      nameservers: {addresses: [192.0.2.53], search: [x]}\n  vlans: {v: {id: 1, link: eth0}}\n  bonds: {b: {interfaces: [eth0]}}\n"))
	f.Add([]byte(`{"version":1,"config":[{"type":"physical","name":"eth0","mac_address":"52:54:00:12:34:56","subnets":[{"type":"static","address":"192.0.2.4","netmask":"255.255.255.0","gateway":"192.0.2.1","routes":[{"network":"0.0.0.0","netmask":"0.0.0.0","gateway":"192.0.2.1"}]}]},{"type":"nameserver","address":"192.0.2.53","interface":"eth0"},{"type":"route","destination":"0.0.0.0/0","gateway":"192.0.2.1"}]}`))
	f.Add([]byte("a: &a [*a]\nnetwork: *a\n"))
	f.Add([]byte("network:\n  config: disabled\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, probs := ParseNetworkConfig("f", b)
		n := strings.Count(string(b), "\n") + strings.Count(string(b), "\r") + 1
		for _, p := range probs {
			if p.Line < 0 || p.Line > n || p.File != "f" || p.Msg == "" {
				t.Fatalf("problem %q outside the %d-line input", p, n)
			}
		}
		if c.Disabled && (c.Version != 0 || len(c.V1.Ifaces) != 0 || len(c.V2.Devices) != 0) {
			t.Fatalf("a disabled config declares %+v", c)
		}
		for _, d := range c.V1.Ifaces {
			if d.Name == "" || d.At == "" || d.VLANID < 0 || d.VLANID > 4094 || d.MTU != 0 && (d.MTU < 68 || d.MTU > 65535) {
				t.Fatalf("bad v1 entry %+v", d)
			}
		}
		for _, d := range Merge([]File{c.V2, c.V2}).Devices {
			if d.At == "" || d.VLANID != nil && (*d.VLANID < 0 || *d.VLANID > 4094) {
				t.Fatalf("bad device %+v", d)
			}
			for _, a := range d.Addresses {
				if !a.Prefix.IsValid() || a.At == "" {
					t.Fatalf("bad address %+v", a)
				}
			}
		}
	})
}
