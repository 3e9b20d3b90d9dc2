package networkconfig

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/netconf"
	"github.com/guestcheck/guestcheck/internal/parse/eni"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// summary renders what network-config judges of a declaration on one
// line, so that tests compare intents across formats.
func summary(d IntentIface) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", d.Kind, d.ID)
	if d.Name != "" {
		fmt.Fprintf(&b, " name=%s", d.Name)
	}
	if d.MatchMAC != nil {
		fmt.Fprintf(&b, " mac=%s", d.MatchMAC)
	}
	if d.MatchDriver != "" {
		fmt.Fprintf(&b, " driver=%s", d.MatchDriver)
	}
	if d.MatchName != "" {
		fmt.Fprintf(&b, " glob=%s", d.MatchName)
	}
	if d.DHCP4 {
		b.WriteString(" dhcp4")
	}
	if d.DHCP6 {
		b.WriteString(" dhcp6")
	}
	list := func(key string, n int, f func(int) string) {
		if n == 0 {
			return
		}
		s := make([]string, n)
		for i := range s {
			s[i] = f(i)
		}
		fmt.Fprintf(&b, " %s=%s", key, strings.Join(s, ","))
	}
	list("addr", len(d.Addresses), func(i int) string { return d.Addresses[i].Prefix.String() })
	list("gw", len(d.Gateways), func(i int) string { return d.Gateways[i].Addr.String() })
	list("dns", len(d.Nameservers), func(i int) string { return d.Nameservers[i].Addr.String() })
	list("search", len(d.Search), func(i int) string { return d.Search[i].Value })
	if d.MTU != 0 {
		fmt.Fprintf(&b, " mtu=%d", d.MTU)
	}
	if d.Kind == KindVLAN {
		fmt.Fprintf(&b, " vlan=%d@%s", d.VLANID, d.VLANLink)
	}
	if d.Members != nil {
		fmt.Fprintf(&b, " members=%s", strings.Join(sortedUnique(d.Members), ","))
	}
	return b.String()
}

func summaries(ds []IntentIface) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = summary(d)
	}
	return out
}

func TestParseNetworkYAML(t *testing.T) {
	cases := []struct {
		name, in string
		source   string
		want     []string
		global   string // global nameservers and search
		probs    []string
	}{
		{
			name: "netplan v2 full",
			in: `network:
  version: 2
  ethernets:
    eth0:
      match: {macaddress: "52:54:00:12:34:56"}
      set-name: mgmt0
      mtu: 1400
      addresses: [192.0.2.10/24, "2001:db8::10/64"]
      routes: [{to: default, via: 192.0.2.1}, {to: 203.0.113.0/24, via: 192.0.2.254}]
      nameservers: {addresses: [192.0.2.53], search: [example.test]}
    eth1:
      match: {driver: [virtio_net, e1000]}
      dhcp4: yes
    ens4: {}
  vlans:
    vlan100: {id: 100, link: eth0, addresses: [{198.51.100.5/24: {label: x}}]}
  bonds:
    bond0: {interfaces: [ens4], dhcp6: true}
`,
			source: "netplan",
			want: []string{
				"ethernet eth0 name=mgmt0 mac=52:54:00:12:34:56 addr=192.0.2.10/24,2001:db8::10/64 gw=192.0.2.1 dns=192.0.2.53 search=example.test mtu=1400",
				"ethernet eth1 driver=virtio_net e1000 dhcp4",
				"ethernet ens4 name=ens4",
				"vlan vlan100 name=vlan100 addr=198.51.100.5/24 vlan=100@eth0",
				"bond bond0 name=bond0 dhcp6 members=ens4",
			},
		},
		{
			name:   "cloud-init v2 without the network key, as JSON",
			in:     `{"version": 2, "ethernets": {"enp1s0": {"dhcp4": true, "gateway4": "192.0.2.1", "match": {"name": "enp*"}}}}`,
			source: "netplan",
			want:   []string{"ethernet enp1s0 glob=enp* dhcp4 gw=192.0.2.1"},
		},
		{
			name: "cloud-init v1",
			in: `network:
  version: 1
  config:
    - type: physical
      name: eth0
      mac_address: "52:54:00:aa:bb:cc"
      mtu: 9000
      subnets:
        - type: static
          address: 192.0.2.10
          netmask: 255.255.255.0
          gateway: 192.0.2.1
          dns_nameservers: [192.0.2.53]
          dns_search: example.test
        - type: dhcp6
    - type: physical
      name: eth1
      subnets: [{type: static, address: 198.51.100.7/25}]
    - type: vlan
      name: eth0.20
      vlan_link: eth0
      vlan_id: 20
      subnets: [{type: dhcp}]
    - type: bond
      name: bond0
      bond_interfaces: [eth2, eth3]
    - type: nameserver
      address: [203.0.113.53]
      search: [corp.test]
    - type: route
      destination: 0.0.0.0/0
      gateway: 198.51.100.1
`,
			source: "cloud-init network-config v1",
			want: []string{
				"ethernet eth0 name=eth0 mac=52:54:00:aa:bb:cc dhcp6 addr=192.0.2.10/24 gw=192.0.2.1 dns=192.0.2.53 search=example.test mtu=9000",
				"ethernet eth1 name=eth1 addr=198.51.100.7/25 gw=198.51.100.1",
				"vlan eth0.20 name=eth0.20 dhcp4 vlan=20@eth0",
				"bond bond0 name=bond0 members=eth2,eth3",
			},
			global: "203.0.113.53 corp.test",
		},
		{
			name: "problems keep the rest",
			in: `network:
  version: 2
  ethernets:
    eth0:
      dhcp4: maybe
      addresses: [192.0.2.10]
      mtu: 12
      match: {macaddress: nope}
    eth1: {dhcp4: true}
  vlans:
    v1: {id: 5000, link: eth0}
`,
			source: "netplan",
			want:   []string{"ethernet eth0", "ethernet eth1 name=eth1 dhcp4", "vlan v1 name=v1 vlan=0@eth0"},
			probs: []string{
				`t.yaml:8: ethernets "eth0" match macaddress "nope" is not a MAC address`,
				`t.yaml:5: ethernets "eth0": "dhcp4" must be true or false, not "maybe"`,
				`t.yaml:6: ethernets "eth0": address "192.0.2.10" is not an address with a prefix length`,
				`t.yaml:7: ethernets "eth0": "mtu" must be a number from 68 to 65535, not "12"`,
				`t.yaml:11: vlans "v1": "id" must be a number from 0 to 4094, not "5000"`,
			},
		},
		{name: "bad version", in: "network: {version: 3}", probs: []string{`t.yaml:1: version must be 1 or 2, not "3"`}},
		{name: "not yaml", in: "network: [\n", probs: []string{"t.yaml:1: invalid YAML: did not find expected node content"}},
		{name: "empty", in: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, probs := ParseNetworkYAML("t.yaml", []byte(tc.in))
			if in.Source != tc.source {
				t.Errorf("source %q, want %q", in.Source, tc.source)
			}
			if got := summaries(in.Ifaces); !slices.Equal(got, tc.want) {
				t.Errorf("interfaces:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			var g []string
			for _, n := range in.Nameservers {
				g = append(g, n.Addr.String())
			}
			for _, s := range in.Search {
				g = append(g, s.Value)
			}
			if strings.Join(g, " ") != tc.global {
				t.Errorf("global nameservers/search %q, want %q", strings.Join(g, " "), tc.global)
			}
			var ps []string
			for _, p := range probs {
				ps = append(ps, p.String())
			}
			if !slices.Equal(ps, tc.probs) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(ps, "\n"), strings.Join(tc.probs, "\n"))
			}
		})
	}
}

func TestNetworkdIntent(t *testing.T) {
	parse := func(name, s string) netconf.INI {
		f, probs := netconf.ParseUnit(name, []byte(s))
		if len(probs) > 0 {
			t.Fatalf("%s: %v", name, probs)
		}
		return f
	}
	networks := []netconf.INI{
		parse("/etc/systemd/network/10-cloud-init-eth0.network", `[Match]
Name=eth0
MACAddress=52:54:00:12:34:56

[Link]
MTUBytes=1450

[Network]
DHCP=ipv4
Address=192.0.2.10/24
DNS=192.0.2.53 [2001:db8::53]:53 192.0.2.54%eth0#dns.test
Domains=example.test ~routing.test
VLAN=vlan7

[Route]
Destination=198.51.100.0/24
Gateway=192.0.2.254

[Route]
Gateway=192.0.2.1

[Route]
Gateway=192.0.2.2
Table=100
`),
		parse("/etc/systemd/network/20-vlan7.network", "[Match]\nName=vlan7\n[Network]\nAddress=203.0.113.9/24\n"),
		parse("/etc/systemd/network/30-ens.network", "[Match]\nName=ens3 ens4\n[Network]\nBond=bond0\n"),
		parse("/etc/systemd/network/40-bond.network", "[Match]\nName=bond0\n[Network]\nDHCP=yes\n"),
	}
	netdevs := []netconf.INI{
		parse("/etc/systemd/network/vlan7.netdev", "[NetDev]\nName=vlan7\nKind=vlan\n[VLAN]\nId=7\n"),
		parse("/etc/systemd/network/bond0.netdev", "[NetDev]\nName=bond0\nKind=bond\n"),
	}
	ds, probs := NetworkdIntent(networks, netdevs)
	if len(probs) > 0 {
		t.Errorf("problems: %v", probs)
	}
	want := []string{
		"ethernet 10-cloud-init-eth0 name=eth0 mac=52:54:00:12:34:56 dhcp4 addr=192.0.2.10/24 gw=192.0.2.1 dns=192.0.2.53,2001:db8::53,192.0.2.54 search=example.test mtu=1450",
		"vlan 20-vlan7 name=vlan7 addr=203.0.113.9/24 vlan=7@10-cloud-init-eth0",
		"ethernet 30-ens glob=ens3 ens4",
		"bond 40-bond name=bond0 dhcp4 dhcp6 members=30-ens",
	}
	if got := summaries(ds); !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	_, probs = NetworkdIntent([]netconf.INI{parse("x.network", "[Network]\nAddress=nope\nGateway=1.2.3\nDNS=x\n[Link]\nMTUBytes=9\n")}, nil)
	if len(probs) != 4 {
		t.Errorf("want 4 problems, got %v", probs)
	}
}

func TestNMIntent(t *testing.T) {
	parse := func(name, s string) netconf.INI {
		f, probs := netconf.ParseKeyfile(name, []byte(s))
		if len(probs) > 0 {
			t.Fatalf("%s: %v", name, probs)
		}
		return f
	}
	files := []netconf.INI{
		parse("/etc/NetworkManager/system-connections/cloud-init-eth0.nmconnection", `[connection]
id=cloud-init eth0
uuid=1dd9a779-d327-56e1-8454-c65e2556c12c
type=ethernet
interface-name=eth0

[ethernet]
mac-address=52:54:00:12:34:56
mtu=1400

[ipv4]
method=manual
address1=192.0.2.10/24,192.0.2.1
dns=192.0.2.53;192.0.2.54;
dns-search=example.test;

[ipv6]
method=auto
`),
		parse("/etc/NetworkManager/system-connections/cloud-init-vlan.nmconnection", `[connection]
id=cloud-init eth0.30
type=vlan
interface-name=eth0.30
[vlan]
id=30
parent=1dd9a779-d327-56e1-8454-c65e2556c12c
[ipv4]
method=auto
never-default=true
gateway=198.51.100.1
`),
		parse("/etc/NetworkManager/system-connections/br.nmconnection", "[connection]\nid=br0\ntype=bridge\ninterface-name=br0\n[ipv4]\nmethod=disabled\n"),
		parse("/etc/NetworkManager/system-connections/port.nmconnection", "[connection]\nid=port1\ntype=ethernet\ninterface-name=ens5\nmaster=br0\nslave-type=bridge\n[ipv4]\nmethod=disabled\n"),
		parse("/etc/NetworkManager/system-connections/wifi.nmconnection", "[connection]\nid=w\ntype=wifi\n"),
	}
	ds, probs := NMIntent(files)
	if len(probs) > 0 {
		t.Errorf("problems: %v", probs)
	}
	want := []string{
		"ethernet cloud-init eth0 name=eth0 mac=52:54:00:12:34:56 dhcp6 addr=192.0.2.10/24 gw=192.0.2.1 dns=192.0.2.53,192.0.2.54 search=example.test mtu=1400",
		"vlan cloud-init eth0.30 name=eth0.30 dhcp4 vlan=30@cloud-init eth0",
		"bridge br0 name=br0 members=port1",
		"ethernet port1 name=ens5",
	}
	if got := summaries(ds); !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestENIIntent(t *testing.T) {
	main, eprobs := eni.Parse("/etc/network/interfaces", []byte(`# comment
source /etc/network/interfaces.d/*
auto lo
iface lo inet loopback

allow-hotplug eth0
iface eth0 inet static
    address 192.0.2.10
    netmask 255.255.255.0
    gateway 192.0.2.1
    dns-nameservers 192.0.2.53 192.0.2.54
    dns-search example.test
    mtu 1400
iface eth0 inet6 dhcp

auto eth0.40
iface eth0.40 inet static
    address 198.51.100.4/24

iface vlan50 inet manual
    vlan-raw-device eth1

auto br0
iface br0 inet dhcp
    bridge_ports eth2 eth3

iface eth0:1 inet static
    address 192.0.2.11/24

iface eth1.60 inet static
    address 203.0.113.6/24
    vlan-raw-device eth1
    vlan_id 61
`))
	if len(eprobs) > 0 {
		t.Fatalf("problems: %v", eprobs)
	}
	if !slices.Equal(main.Sources, []string{"/etc/network/interfaces.d/*"}) {
		t.Errorf("sources %v", main.Sources)
	}
	ds, probs := ENIIntent([]eni.File{main})
	if len(probs) > 0 {
		t.Errorf("problems: %v", probs)
	}
	want := []string{
		"ethernet eth0 name=eth0 dhcp6 addr=192.0.2.10/24,192.0.2.11/24 gw=192.0.2.1 dns=192.0.2.53,192.0.2.54 search=example.test mtu=1400",
		"vlan eth0.40 name=eth0.40 addr=198.51.100.4/24 vlan=40@eth0",
		"vlan vlan50 name=vlan50 vlan=50@eth1",
		"bridge br0 name=br0 dhcp4 members=eth2,eth3",
		"vlan eth1.60 name=eth1.60 addr=203.0.113.6/24 vlan=61@eth1",
	}
	if got := summaries(ds); !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !ds[0].Optional {
		t.Error("allow-hotplug eth0 should be optional")
	}
}

func TestIfcfgIntent(t *testing.T) {
	in := func(name, s string) (IntentIface, []problem.Problem, bool) {
		vars, probs := netconf.ParseIfcfg(name, []byte(s))
		if len(probs) > 0 {
			t.Fatalf("%s: %v", name, probs)
		}
		return IfcfgIntent(name, vars)
	}
	d, probs, ok := in("/etc/sysconfig/network-scripts/ifcfg-eth0", `# Created by cloud-init
DEVICE=eth0
HWADDR=52:54:00:12:34:56
BOOTPROTO=none
IPADDR=192.0.2.10
PREFIX=24
IPADDR1=192.0.2.11
NETMASK1=255.255.255.128
GATEWAY=192.0.2.1
DNS1=192.0.2.53
DOMAIN="example.test other.test"
MTU=1400
IPV6ADDR=2001:db8::10/64
`)
	want := "ethernet eth0 name=eth0 mac=52:54:00:12:34:56 addr=192.0.2.10/24,192.0.2.11/25,2001:db8::10/64 gw=192.0.2.1 dns=192.0.2.53 search=example.test,other.test mtu=1400"
	if !ok || len(probs) > 0 || summary(d) != want {
		t.Errorf("got %q %v %v, want %q", summary(d), probs, ok, want)
	}
	d, _, _ = in("/etc/sysconfig/network-scripts/ifcfg-eth0.60", "DEVICE=eth0.60\nVLAN=yes\nBOOTPROTO=dhcp\n")
	if got := summary(d); got != "vlan eth0.60 name=eth0.60 dhcp4 vlan=60@eth0" {
		t.Errorf("vlan: %q", got)
	}
	if _, _, ok := in("/etc/sysconfig/network-scripts/ifcfg-eth0:1", "IPADDR=192.0.2.5\n"); ok {
		t.Error("an alias file declares no interface")
	}
	_, probs, _ = in("/x/ifcfg-e", "IPADDR=192.0.2.5\nGATEWAY=x\n")
	if len(probs) != 2 {
		t.Errorf("problems %v", probs)
	}
}

func TestLeases(t *testing.T) {
	l, probs := ParseEnvLease("/run/systemd/netif/leases/2", []byte("# This is private data. Do not parse.\nADDRESS=192.0.2.15\nNETMASK=255.255.255.0\nROUTER=192.0.2.2\nDNS=192.0.2.3 192.0.2.4\njunk\n"))
	if l.Address.String() != "192.0.2.15" || fmt.Sprint(l.Routers) != "[192.0.2.2]" || fmt.Sprint(l.DNS) != "[192.0.2.3 192.0.2.4]" {
		t.Errorf("lease %+v", l)
	}
	if len(probs) != 1 || probs[0].Line != 6 {
		t.Errorf("problems %v", probs)
	}
	db := `lease {
  interface "eth0";
  fixed-address 192.0.2.20;
  option routers 192.0.2.1;
  option domain-name-servers 192.0.2.53,192.0.2.54;
}
lease {
  interface "eth1";
  fixed-address 198.51.100.9;
}
lease {
  interface "eth0";
  fixed-address 192.0.2.21;
  option routers 192.0.2.2;
  option domain-name-servers 192.0.2.55;
}
`
	l, ok := ParseDhclientLeases("d", []byte(db), "eth0")
	if !ok || l.Address.String() != "192.0.2.21" || fmt.Sprint(l.Routers) != "[192.0.2.2]" || fmt.Sprint(l.DNS) != "[192.0.2.55]" {
		t.Errorf("dhclient lease %+v %v", l, ok)
	}
	if _, ok := ParseDhclientLeases("d", []byte(db), "eth9"); ok {
		t.Error("no lease for eth9")
	}
}
