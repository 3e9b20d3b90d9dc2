package nmconn

import (
	"strings"
	"testing"
)

// keyfile splits test input into entries: "[group]" lines and key=value
// lines, nothing more (the real keyfile reader is the caller's).
func keyfile(name, s string) Keyfile {
	k := Keyfile{File: name}
	group := ""
	for i, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
			group = l[1 : len(l)-1]
		case strings.Contains(l, "="):
			key, v, _ := strings.Cut(l, "=")
			k.Entries = append(k.Entries, Entry{Section: group, Key: strings.TrimSpace(key), Value: strings.TrimSpace(v), Line: i + 1})
		}
	}
	return k
}

func TestParse(t *testing.T) {
	t.Parallel()
	in := "[connection]\nid=cloud-init eth0\nuuid=1dd9a779-d327-56e1-8454-c65e2556c12c\ntype=ethernet\ninterface-name=eth0\n\n[ethernet]\nmac-address=52:54:00:12:34:56\n\n[ipv4]\nmethod=auto\ndhcp-client-id=duid\n"
	c, probs := Parse(keyfile("c.nmconnection", in))
	if len(probs) != 0 || c.ID != "cloud-init eth0" || c.InterfaceName != "eth0" || c.MAC == nil || c.MAC.At != "c.nmconnection:8" ||
		!c.DHCPv4() || !c.MachineClientID() || c.UUID != "1dd9a779-d327-56e1-8454-c65e2556c12c" || c.Type != "ethernet" {
		t.Errorf("connection = %+v %v", c, probs)
	}
	c, probs = Parse(keyfile("/x/c.nmconnection", "[ethernet]\nmac-address=xx\n[ipv4]\nmethod=manual\n"))
	if len(probs) != 1 || probs[0].Line != 2 || c.DHCPv4() || c.MachineClientID() || c.ID != "c" || c.IDAt != "/x/c.nmconnection:1" {
		t.Errorf("bad keyfile: %+v %v", c, probs)
	}
}

func TestParseMAC(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"52:54:00:12:34:56;":  "52:54:00:12:34:56",
		"82;84;0;18;52;86;":   "52:54:00:12:34:56",
		"82;84;0;18;52":       "",
		"82;84;0;18;52;999;":  "",
		"not-a-mac":           "",
		"52:54:00:AB:CD:EF  ": "",
	} {
		mac, err := ParseMAC(in)
		if got := ""; err == nil {
			got = mac.String()
			if got != want {
				t.Errorf("ParseMAC(%q) = %s, want %q", in, got, want)
			}
		} else if want != "" {
			t.Errorf("ParseMAC(%q): %v", in, err)
		}
	}
}

func TestParseIP(t *testing.T) {
	t.Parallel()
	c, probs := Parse(keyfile("v.nmconnection", `[connection]
id=cloud-init eth0.30
type=vlan
master=br0
[vlan]
id=30
parent=1dd9a779-d327-56e1-8454-c65e2556c12c
[ethernet]
mtu=1400
[ipv4]
method=manual
address1=192.0.2.10/24,192.0.2.1
address2=192.0.2.11/24
route1=0.0.0.0/0,192.0.2.254,100
dns=192.0.2.53;[2001:db8::53]:53;
dns-search=example.test;~route.test;
[ipv6]
method=auto
never-default=true
gateway=2001:db8::1
[ipv6]
dns=nope
`))
	if len(probs) != 1 || probs[0].String() != `v.nmconnection:22: ipv6 dns "nope" is not an IP address` {
		t.Errorf("problems = %v", probs)
	}
	v4, v6 := c.IPv4, c.IPv6
	if c.VLANID != 30 || c.VLANAt != "v.nmconnection:6" || c.VLANParent == "" || c.Master != "br0" || c.MasterAt != "v.nmconnection:4" || c.MTU != 1400 {
		t.Errorf("connection = %+v", c)
	}
	if len(v4.Addresses) != 2 || v4.Gateway == nil || v4.Gateway.Addr.String() != "192.0.2.1" || v4.Gateway.At != "v.nmconnection:12" ||
		len(v4.DNS) != 2 || len(v4.DNSSearch) != 1 || v4.DNSSearch[0].Value != "example.test" || c.DHCPv4() {
		t.Errorf("ipv4 = %+v", v4)
	}
	if !v6.NeverDefault || v6.Gateway == nil || v6.Gateway.Addr.String() != "2001:db8::1" || !c.DHCPv6() {
		t.Errorf("ipv6 = %+v", v6)
	}
	c, _ = Parse(keyfile("d", "[ipv4]\nmethod=disabled\naddress1=nope\n[ipv6]\nmethod=dhcp\n"))
	if !c.IPv4.Off || c.DHCPv4() || len(c.IPv4.Addresses) != 0 || !c.DHCPv6() {
		t.Errorf("disabled ipv4 = %+v", c.IPv4)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("[connection]\nid=a\nuuid=U\ntype=vlan\ninterface-name=eth0\nmaster=b\n[vlan]\nid=4\nparent=u\n[ethernet]\nmac-address=82;84;0;18;52;86\nmtu=1400\n[ipv4]\nmethod=manual\naddress1=192.0.2.1/24,192.0.2.254\nroute1=0.0.0.0/0,192.0.2.1,5\ndns=192.0.2.53;\n")
	f.Fuzz(func(t *testing.T, s string) {
		c, probs := Parse(keyfile("f", s))
		n := strings.Count(s, "\n") + 1
		for _, p := range probs {
			if p.Line < 1 || p.Line > n || p.File != "f" || p.Msg == "" {
				t.Fatalf("problem %q outside the %d-line input", p, n)
			}
		}
		if c.ID == "" || c.MTU != 0 && (c.MTU < 68 || c.MTU > 65535) || c.VLANID < 0 || c.VLANID > 4094 {
			t.Fatalf("bad connection %+v", c)
		}
		for _, ip := range []IP{c.IPv4, c.IPv6} {
			for _, a := range ip.Addresses {
				if !a.Prefix.IsValid() || a.At == "" {
					t.Fatalf("bad address %+v", a)
				}
			}
			if g := ip.Gateway; g != nil && (!g.Addr.IsValid() || g.At == "") {
				t.Fatalf("bad gateway %+v", g)
			}
		}
	})
}
