package networkconfig

import (
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/netconf"
	"github.com/guestcheck/guestcheck/internal/parse/eni"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// checkIntent holds every parser of declared configuration to the same
// properties: problems name the file and a line of the input, and every
// declared value is well-formed with a location.
func checkIntent(t *testing.T, b []byte, ds []IntentIface, probs []problem.Problem, file string) {
	t.Helper()
	n := len(lines(b)) + strings.Count(string(b), "\r") + 1
	for _, p := range probs {
		if p.Line < 0 || p.Line > n || p.File != file || p.Msg == "" {
			t.Fatalf("problem %q outside the %d-line input", p, n)
		}
	}
	for _, d := range ds {
		if d.Kind == "" || d.At == "" {
			t.Fatalf("declaration without kind or place: %+v", d)
		}
		for _, a := range d.Addresses {
			if !a.Prefix.IsValid() || a.At == "" {
				t.Fatalf("bad address %+v", a)
			}
		}
		for _, g := range append(append([]DeclAddr{}, d.Gateways...), d.Nameservers...) {
			if !g.Addr.IsValid() || g.At == "" {
				t.Fatalf("bad address %+v", g)
			}
		}
		if d.MTU != 0 && (d.MTU < 68 || d.MTU > 65535) {
			t.Fatalf("MTU %d out of range", d.MTU)
		}
		if d.VLANID < 0 || d.VLANID > 4094 {
			t.Fatalf("VLAN ID %d out of range", d.VLANID)
		}
		_ = d.Label()
	}
}

func FuzzParseNetworkYAML(f *testing.F) {
	f.Add([]byte("network:\n  version: 2\n  ethernets:\n    eth0:\n      match: {macaddress: '52:54:00:12:34:56', driver: [a, b]}\n      addresses: [192.0.2.1/24]\n      routes: [{to: default, via: 192.0.2.254}]\n      nameservers: {addresses: [192.0.2.53], search: [x]}\n  vlans: {v: {id: 1, link: eth0}}\n  bonds: {b: {interfaces: [eth0]}}\n"))
	f.Add([]byte(`{"version":1,"config":[{"type":"physical","name":"eth0","mac_address":"52:54:00:12:34:56","subnets":[{"type":"static","address":"192.0.2.4","netmask":"255.255.255.0","gateway":"192.0.2.1","routes":[{"network":"0.0.0.0","netmask":"0.0.0.0","gateway":"192.0.2.1"}]}]},{"type":"nameserver","address":"192.0.2.53","interface":"eth0"},{"type":"route","destination":"0.0.0.0/0","gateway":"192.0.2.1"}]}`))
	f.Add([]byte("a: &a [*a]\nnetwork: *a\n"))
	f.Add([]byte("version: 1\nconfig: disabled\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, probs := ParseNetworkYAML("f.yaml", b)
		checkIntent(t, b, in.Ifaces, probs, "f.yaml")
		JudgeIntentConsistency(in, nil)
	})
}

func FuzzNetworkdIntent(f *testing.F) {
	f.Add([]byte("[Match]\nName=eth0\nMACAddress=52:54:00:12:34:56\n[Network]\nDHCP=yes\nAddress=192.0.2.1/24\nDNS=[2001:db8::1]:53%eth0#x\nVLAN=v\n[Route]\nGateway=192.0.2.254\n[Link]\nMTUBytes=9K\n"),
		[]byte("[NetDev]\nName=v\nKind=vlan\n[VLAN]\nId=9\n"))
	f.Fuzz(func(t *testing.T, network, netdev []byte) {
		a, _ := netconf.ParseUnit("a.network", network)
		b, _ := netconf.ParseUnit("b.netdev", netdev)
		ds, probs := NetworkdIntent([]netconf.INI{a}, []netconf.INI{b})
		var own []problem.Problem
		for _, p := range probs {
			if p.File == "b.netdev" {
				if p.Line < 0 || p.Line > len(lines(netdev))+1 {
					t.Fatalf("problem %q outside the netdev", p)
				}
				continue
			}
			own = append(own, p)
		}
		checkIntent(t, network, ds, own, "a.network")
	})
}

func FuzzNMIntent(f *testing.F) {
	f.Add([]byte("[connection]\nid=a\nuuid=U\ntype=ethernet\ninterface-name=eth0\n[ethernet]\nmac-address=82;84;0;18;52;86\nmtu=1400\n[ipv4]\nmethod=manual\naddress1=192.0.2.1/24,192.0.2.254\ndns=192.0.2.53;\n"),
		[]byte("[connection]\nid=v\ntype=vlan\nmaster=U\n[vlan]\nid=4\nparent=u\n"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		fa, _ := netconf.ParseKeyfile("a", a)
		fb, _ := netconf.ParseKeyfile("a", b)
		ds, probs := NMIntent([]netconf.INI{fa, fb})
		n := max(len(lines(a)), len(lines(b)))
		for _, p := range probs {
			if p.Line < 0 || p.Line > n+1 {
				t.Fatalf("problem %q outside the input", p)
			}
		}
		checkIntent(t, append(append([]byte{}, a...), b...), ds, nil, "a")
	})
}

func FuzzENIIntent(f *testing.F) {
	f.Add([]byte("source /etc/network/interfaces.d/*\nauto eth0\niface eth0 inet static\n address 192.0.2.1\n netmask 255.255.255.0\n gateway 192.0.2.254\n dns-nameservers 192.0.2.53\niface eth0.5 inet dhcp\n vlan-raw-device eth0\niface br0 inet manual\n bridge_ports none\nmapping eth1\n script x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, _ := eni.Parse("i", b)
		ds, probs := ENIIntent([]eni.File{e})
		checkIntent(t, b, ds, probs, "i")
	})
}

func FuzzIfcfgIntent(f *testing.F) {
	f.Add([]byte("DEVICE=eth0\nHWADDR=52:54:00:12:34:56\nIPADDR0=192.0.2.1\nPREFIX0=24\nGATEWAY=192.0.2.254\nDNS1=192.0.2.53\nVLAN=yes\nVLAN_ID=5\nMTU=1500\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		vars, _ := netconf.ParseIfcfg("/x/ifcfg-eth0", b)
		d, probs, ok := IfcfgIntent("/x/ifcfg-eth0", vars)
		if ok {
			checkIntent(t, b, []IntentIface{d}, probs, "/x/ifcfg-eth0")
		}
	})
}

func FuzzLeases(f *testing.F) {
	f.Add([]byte("ADDRESS=192.0.2.1\nROUTER=192.0.2.254\nDNS=192.0.2.53\n"))
	f.Add([]byte("lease {\n interface \"eth0\";\n fixed-address 192.0.2.1;\n option routers 192.0.2.254;\n}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, probs := ParseEnvLease("l", b)
		checkIntent(t, b, nil, probs, "l")
		ParseDhclientLeases("l", b, "eth0")
	})
}
