package ifcfg

import (
	"strings"
	"testing"
)

// vars reads test input of plain KEY=value lines (the real reader of the
// shell syntax is the caller's).
func vars(s string) map[string]Var {
	out := map[string]Var{}
	for i, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			out[k] = Var{Value: v, Line: i + 1}
		}
	}
	return out
}

func TestParse(t *testing.T) {
	t.Parallel()
	d, probs, ok := Parse("/etc/sysconfig/network-scripts/ifcfg-eth0", vars(`DEVICE=eth0
HWADDR=52:54:00:12:34:56
BOOTPROTO=none
IPADDR=192.0.2.10
PREFIX=24
IPADDR1=192.0.2.11
NETMASK1=255.255.255.128
GATEWAY=192.0.2.1
DNS1=192.0.2.53
DOMAIN=example.test other.test
MTU=1400
IPV6ADDR=2001:db8::10/64
IPV6_DEFAULTGW=2001:db8::1%eth0
DHCPV6C=yes
MASTER=bond0`))
	if !ok || len(probs) != 0 {
		t.Fatalf("ok %v, problems %v", ok, probs)
	}
	var addrs []string
	for _, a := range d.Addresses {
		addrs = append(addrs, a.Prefix.String())
	}
	if d.Name != "eth0" || d.At != "/etc/sysconfig/network-scripts/ifcfg-eth0:1" || d.MAC == nil || d.MAC.At != "/etc/sysconfig/network-scripts/ifcfg-eth0:2" ||
		d.DHCP4 || !d.DHCP6 || strings.Join(addrs, " ") != "192.0.2.10/24 192.0.2.11/25 2001:db8::10/64" || len(d.Gateways) != 2 ||
		len(d.DNS) != 1 || len(d.Domains) != 2 || d.MTU != 1400 || d.Master != "bond0" || d.Type != "ethernet" {
		t.Errorf("iface = %+v", d)
	}
	d, _, _ = Parse("/x/ifcfg-eth0.60", vars("VLAN=yes\nBOOTPROTO=dhcp"))
	if d.Type != "vlan" || d.VLANID != 60 || d.PhysDev != "eth0" || !d.DHCP4 || d.Name != "eth0.60" || d.At != "/x/ifcfg-eth0.60:1" {
		t.Errorf("vlan = %+v", d)
	}
	d, _, _ = Parse("/x/ifcfg-v", vars("TYPE=Vlan\nPHYSDEV=eth1\nVLAN_ID=7"))
	if d.Type != "vlan" || d.VLANID != 7 || d.PhysDev != "eth1" || d.VLANAt != "/x/ifcfg-v:3" {
		t.Errorf("vlan = %+v", d)
	}
	for _, f := range []string{"/x/ifcfg-eth0:1", "/x/ifcfg-lo"} {
		if _, _, ok := Parse(f, vars("IPADDR=192.0.2.5")); ok {
			t.Errorf("%s declares an interface", f)
		}
	}
}

func TestParseProblems(t *testing.T) {
	t.Parallel()
	_, probs, _ := Parse("/x/ifcfg-e", vars("IPADDR=192.0.2.5\nGATEWAY=x\nHWADDR=zz\nMTU=12\nDNS2=nope\nIPADDR3=192.0.2.6\nNETMASK3=255.0.255.0\nTYPE=vlan\nVLAN_ID=5000\nIPV6ADDR=2001:db8::1"))
	want := []string{
		`/x/ifcfg-e:3: HWADDR "zz" is not a MAC address`,
		`/x/ifcfg-e:9: VLAN_ID "5000" is not a VLAN ID (0-4094)`,
		`/x/ifcfg-e:1: IPADDR "192.0.2.5" has no valid address and PREFIX or NETMASK`,
		`/x/ifcfg-e:6: IPADDR3 "192.0.2.6" has no valid address and PREFIX or NETMASK`,
		`/x/ifcfg-e:10: IPV6ADDR "2001:db8::1" is not an address with a prefix length`,
		`/x/ifcfg-e:2: GATEWAY "x" is not an IP address`,
		`/x/ifcfg-e:5: DNS2 "nope" is not an IP address`,
		`/x/ifcfg-e:4: MTU "12" is not an MTU`,
	}
	var got []string
	for _, p := range probs {
		got = append(got, p.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func FuzzParse(f *testing.F) {
	f.Add("DEVICE=eth0\nHWADDR=52:54:00:12:34:56\nIPADDR0=192.0.2.1\nPREFIX0=24\nGATEWAY=192.0.2.254\nDNS1=192.0.2.53\nVLAN=yes\nVLAN_ID=5\nMTU=1500\n", "ifcfg-eth0.5")
	f.Fuzz(func(t *testing.T, s, name string) {
		d, probs, ok := Parse("/x/"+name, vars(s))
		n := strings.Count(s, "\n") + 1
		for _, p := range probs {
			if p.Line < 1 || p.Line > n || p.Msg == "" {
				t.Fatalf("problem %q outside the %d-line input", p, n)
			}
		}
		if !ok {
			return
		}
		if d.Name == "" && !strings.HasSuffix(name, "ifcfg-") || d.VLANID < 0 || d.VLANID > 4094 || d.MTU != 0 && (d.MTU < 68 || d.MTU > 65535) {
			t.Fatalf("bad iface %+v", d)
		}
		for _, a := range d.Addresses {
			if !a.Prefix.IsValid() || a.At == "" {
				t.Fatalf("bad address %+v", a)
			}
		}
	})
}
