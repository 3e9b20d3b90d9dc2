package networkd

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// unit splits test input into entries: "[Section]" lines and key=value
// lines, nothing more (the real INI reader is the caller's).
func unit(name, s string) Unit {
	u := Unit{File: name}
	section, sectionLine := "", 0
	for i, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
			section, sectionLine = l[1:len(l)-1], i+1
		case strings.Contains(l, "="):
			k, v, _ := strings.Cut(l, "=")
			u.Entries = append(u.Entries, Entry{Section: section, Key: strings.TrimSpace(k), Value: strings.TrimSpace(v), Line: i + 1, SectionLine: sectionLine})
		}
	}
	return u
}

func TestParseNetwork(t *testing.T) {
	t.Parallel()
	in := "[Match]\nMACAddress=52:54:00:12:34:56 zz:zz\nName=eth0 en*\n[Network]\nDHCP=IPv4\n[DHCPv4]\nClientIdentifier=duid\nDUIDType=link-layer\n[DHCPv6]\nDUIDType=uuid\n"
	u, probs := ParseNetwork(unit("u.network", in))
	if len(probs) != 1 || probs[0].Line != 2 || !strings.Contains(probs[0].Msg, `"zz:zz" is not a MAC address`) {
		t.Errorf("problems = %v", probs)
	}
	if len(u.Match.MACs) != 1 || u.Match.MACs[0].MAC.String() != "52:54:00:12:34:56" || u.Match.MACs[0].At != "u.network:2" {
		t.Errorf("MACs = %+v", u.Match.MACs)
	}
	if !u.DHCPv4() || u.DHCPv6() || u.ClientID != "duid" || u.DUIDType4 != "link-layer" || u.DUIDType6 != "uuid" ||
		!slices.Equal(u.Match.Names, []string{"eth0", "en*"}) || u.DHCPAt != "u.network:5" {
		t.Errorf("unit = %+v", u)
	}
	for v, want := range map[string][2]bool{"yes": {true, true}, "ipv6": {false, true}, "no": {false, false}, "both": {true, true}, "": {false, false}} {
		u := Network{DHCP: v}
		if u.DHCPv4() != want[0] || u.DHCPv6() != want[1] {
			t.Errorf("DHCP=%s: v4 %v v6 %v", v, u.DHCPv4(), u.DHCPv6())
		}
	}
	// An empty assignment resets a list, as in systemd.
	u, _ = ParseNetwork(unit("u.network", "[Match]\nMACAddress=52:54:00:12:34:56\nMACAddress=\nName=a\nName=\nName=b\n[Network]\nDNS=192.0.2.1\nDNS=\nDNS=192.0.2.2\n"))
	if len(u.Match.MACs) != 0 || !slices.Equal(u.Match.Names, []string{"b"}) || len(u.DNS) != 1 || u.DNS[0].Addr.String() != "192.0.2.2" {
		t.Errorf("reset lists kept: %+v", u)
	}
}

func TestParseNetworkAddressing(t *testing.T) {
	t.Parallel()
	n, probs := ParseNetwork(unit("/etc/systemd/network/10-eth0.network", `[Match]
Name=eth0
Driver=virtio_net
[Link]
MTUBytes=9K
RequiredForOnline=no
[Network]
Address=192.0.2.10/24
Gateway=_dhcp4
DNS=192.0.2.53 [2001:db8::53]:53 192.0.2.54%eth0#dns.test
Domains=example.test ~routing.test
VLAN=vlan7 vlan8
Bond=bond0
[Address]
Address=2001:db8::10/64
[Route]
Destination=198.51.100.0/24
Gateway=192.0.2.254
[Route]
Gateway=192.0.2.1
Metric=50
[Route]
Gateway=192.0.2.2
Table=100
`))
	if len(probs) != 0 {
		t.Errorf("problems: %v", probs)
	}
	var got []string
	for _, a := range n.Addresses {
		got = append(got, a.Prefix.String()+"@"+a.At)
	}
	for _, g := range n.Gateways {
		got = append(got, "gw "+g.Addr.String()+" metric "+g.Metric+"@"+g.At)
	}
	for _, d := range n.DNS {
		got = append(got, "dns "+d.Addr.String())
	}
	for _, d := range n.Domains {
		got = append(got, "search "+d.Value)
	}
	want := []string{
		"192.0.2.10/24@/etc/systemd/network/10-eth0.network:8", "2001:db8::10/64@/etc/systemd/network/10-eth0.network:15",
		"gw 192.0.2.1 metric 50@/etc/systemd/network/10-eth0.network:20",
		"dns 192.0.2.53", "dns 2001:db8::53", "dns 192.0.2.54", "search example.test",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n.MTU != 9216 || !n.Optional || n.Match.Driver != "virtio_net" || !slices.Equal(n.VLANs, []string{"vlan7", "vlan8"}) || n.Bond != "bond0" || n.BondAt == "" {
		t.Errorf("network = %+v", n)
	}
	_, probs = ParseNetwork(unit("x.network", "[Network]\nAddress=nope\nGateway=1.2.3\nDNS=x\n[Link]\nMTUBytes=9\n[Route]\nGateway=nope\n"))
	var lines []int
	for _, p := range probs {
		lines = append(lines, p.Line)
	}
	if !slices.Equal(lines, []int{2, 3, 8, 4, 6}) {
		t.Errorf("problems: %v", probs)
	}
}

func TestParseLinkNetDevConf(t *testing.T) {
	t.Parallel()
	l, probs := ParseLink(unit("a.link", "[Match]\nPermanentMACAddress=52:54:00:12:34:56\n[Link]\nName=lan0\n"))
	if len(probs) != 0 || l.Name != "lan0" || len(l.Match.MACs) != 1 || l.Match.MACs[0].At != "a.link:2" {
		t.Errorf("link = %+v %v", l, probs)
	}
	d, probs := ParseNetDev(unit("v.netdev", "[NetDev]\nName=vlan7\nKind=vlan\nMTUBytes=1400\n[VLAN]\nId=7\n"))
	if len(probs) != 0 || d.Name != "vlan7" || d.NameAt != "v.netdev:2" || d.Kind != "vlan" || d.VLANID != 7 || d.MTU != 1400 {
		t.Errorf("netdev = %+v %v", d, probs)
	}
	if _, probs := ParseNetDev(unit("v.netdev", "[VLAN]\nId=5000\n")); len(probs) != 1 || probs[0].Line != 2 {
		t.Errorf("problems = %v", probs)
	}
	var c Conf
	c.Apply(unit("/etc/systemd/networkd.conf", "[DHCPv4]\nDUIDType=vendor\n"))
	c.Apply(unit("/etc/systemd/networkd.conf.d/x.conf", "[DHCPv6]\nDUIDType=Link-Layer\n"))
	if c.DUIDType4 != "vendor" || c.DUIDType6 != "link-layer" || c.At != "/etc/systemd/networkd.conf.d/x.conf:2" {
		t.Errorf("conf = %+v", c)
	}
	if !MACDUID("link-layer") || !MACDUID("link-layer-time:2020-01-01 00:00:00") || MACDUID("vendor") || MACDUID("") || MACDUID("uuid") {
		t.Error("MACDUID")
	}
}

func FuzzParseNetwork(f *testing.F) {
	f.Add("[Match]\nName=eth0\nMACAddress=52:54:00:12:34:56\n[Network]\nDHCP=yes\nAddress=192.0.2.1/24\nDNS=[2001:db8::1]:53%eth0#x\nVLAN=v\n[Route]\nGateway=192.0.2.254\n[Link]\nMTUBytes=9K\n[NetDev]\nName=v\nKind=vlan\n[VLAN]\nId=9\n")
	f.Fuzz(func(t *testing.T, s string) {
		u := unit("f", s)
		n := strings.Count(s, "\n") + 1
		check := func(probs []problem.Problem) {
			for _, p := range probs {
				if p.Line < 1 || p.Line > n || p.File != "f" || p.Msg == "" {
					t.Fatalf("problem %q outside the %d-line input", p, n)
				}
			}
		}
		nw, probs := ParseNetwork(u)
		check(probs)
		if nw.MTU != 0 && (nw.MTU < 68 || nw.MTU > 65535) {
			t.Fatalf("MTU %d", nw.MTU)
		}
		for _, a := range nw.Addresses {
			if !a.Prefix.IsValid() || a.At == "" {
				t.Fatalf("bad address %+v", a)
			}
		}
		for _, a := range append(nw.Gateways, nw.DNS...) {
			if !a.Addr.IsValid() || a.At == "" {
				t.Fatalf("bad address %+v", a)
			}
		}
		_, probs = ParseLink(u)
		check(probs)
		d, probs := ParseNetDev(u)
		check(probs)
		if d.VLANID < 0 || d.VLANID > 4094 {
			t.Fatalf("VLAN ID %d", d.VLANID)
		}
		var c Conf
		c.Apply(u)
	})
}

func TestRawDUID(t *testing.T) {
	for _, tc := range []struct{ typ, raw, want string }{
		{"", "aa:BB:0c", "00:02:aa:bb:0c"},
		{"link-layer-time", "00:01:52:54:00:12:34:56", "00:01:00:01:52:54:00:12:34:56"},
		{"link-layer-time:2023-01-01 00:00:00 UTC", "01", "00:01:01"},
		{"uuid", "01:02", "00:04:01:02"},
		{"300", "ff", "01:2c:ff"},
		{"bogus", "ff", ""},
		{"vendor", "", ""},
		{"vendor", "1:2:300", ""},
		{"vendor", "zz", ""},
	} {
		b, ok := RawDUID(tc.typ, strings.ToLower(tc.raw))
		var hx []string
		for _, c := range b {
			hx = append(hx, fmt.Sprintf("%02x", c))
		}
		if got := strings.Join(hx, ":"); got != tc.want || ok != (tc.want != "") {
			t.Errorf("RawDUID(%q, %q) = %q, %v, want %q", tc.typ, tc.raw, got, ok, tc.want)
		}
	}
}
