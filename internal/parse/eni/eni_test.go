package eni

import (
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	f, probs := Parse("/etc/network/interfaces", []byte(`# comment
source /etc/network/interfaces.d/*
source-directory extra.d
auto lo eth0
iface lo inet loopback

allow-hotplug eth1
iface eth0 inet static
    address 192.0.2.10
    netmask 255.255.255.0
    dns-nameservers 192.0.2.53 \
        192.0.2.54
no-auto-down eth0
iface eth1 inet6 dhcp
mapping eth2
    script /usr/local/bin/map
    map home eth2-home
allow-ovs br9
`))
	if len(probs) > 0 {
		t.Fatalf("problems: %v", probs)
	}
	if !slices.Equal(f.Sources, []string{"/etc/network/interfaces.d/*"}) || !slices.Equal(f.SrcDirs, []string{"extra.d"}) ||
		!slices.Equal(f.Auto, []string{"lo", "eth0"}) || !slices.Equal(f.Hotplug, []string{"eth1"}) || !slices.Equal(f.Mappings, []string{"eth2"}) {
		t.Errorf("file = %+v", f)
	}
	if len(f.Stanzas) != 3 {
		t.Fatalf("stanzas = %+v", f.Stanzas)
	}
	s := f.Stanzas[1]
	want := []Option{{"address", "192.0.2.10", 9}, {"netmask", "255.255.255.0", 10}, {"dns-nameservers", "192.0.2.53 192.0.2.54", 11}}
	if s.Name != "eth0" || s.Family != "inet" || s.Method != "static" || s.At != "/etc/network/interfaces:8" || !slices.Equal(s.Options, want) {
		t.Errorf("eth0 = %+v", s)
	}
	if s := f.Stanzas[2]; s.Name != "eth1" || s.Family != "inet6" || len(s.Options) != 0 {
		t.Errorf("eth1 = %+v", s)
	}
}

func TestParseProblems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"address 192.0.2.1\n", `x:1: option "address" outside any iface stanza`},
		{"iface eth0 inet\n", `x:1: iface needs a name, an address family and a method: "iface eth0 inet"`},
		{"iface eth0 inet dhcp\nno-scripts eth0\n  mtu 1400\n", `x:3: option "mtu" outside any iface stanza`},
		{"auto eth0\n\xff\n", "x:2: line is not valid UTF-8"},
		{"iface eth0 inet dhcp # no end-of-line comments\n", ""},
		{"\\\n \n", ""}, // a continuation of blanks (main's parser panicked)
	} {
		_, probs := Parse("x", []byte(tc.in))
		var got []string
		for _, p := range probs {
			got = append(got, p.String())
		}
		if strings.Join(got, "\n") != tc.want {
			t.Errorf("Parse(%q) problems %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestInclude(t *testing.T) {
	t.Parallel()
	for _, tc := range [][3]string{
		{"/etc/network/interfaces", "interfaces.d/*", "/etc/network/interfaces.d/*"},
		{"/etc/network/interfaces.d/a", "../extra/*", "/etc/network/extra/*"},
		{"/etc/network/interfaces.d/a", "/etc/other//b", "/etc/other/b"},
	} {
		if got := Include(tc[0], tc[1]); got != tc[2] {
			t.Errorf("Include(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
	for n, want := range map[string]bool{"50-cloud-init": true, "eth0_a": true, "x.cfg": false, "": false, "a~": false} {
		if SourceDirName(n) != want {
			t.Errorf("SourceDirName(%q) != %v", n, want)
		}
	}
}

func TestPrefix(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ addr, mask, family, want string }{
		{"192.0.2.10/24", "", "inet", "192.0.2.10/24"},
		{"192.0.2.10", "255.255.255.0", "inet", "192.0.2.10/24"},
		{"192.0.2.10", "25", "inet", "192.0.2.10/25"},
		{"192.0.2.10", "", "inet", "192.0.2.10/32"},
		{"2001:db8::1", "", "inet6", "2001:db8::1/128"},
		{"2001:db8::1", "64", "inet6", "2001:db8::1/64"},
		{"192.0.2.10", "33", "inet", ""},
		{"192.0.2.10", "255.0.255.0", "inet", ""},
		{"nope", "", "inet", ""},
	} {
		p, ok := Prefix(tc.addr, tc.mask, tc.family)
		got := ""
		if ok {
			got = p.String()
		}
		if got != tc.want {
			t.Errorf("Prefix(%q, %q) = %q, want %q", tc.addr, tc.mask, got, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("source /etc/network/interfaces.d/*\nauto eth0\niface eth0 inet static\n address 192.0.2.1\n netmask 255.255.255.0\\\n\n gateway 192.0.2.254\niface eth0.5 inet dhcp\n vlan-raw-device eth0\nmapping eth1\n script x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, probs := Parse("i", b)
		n := strings.Count(string(b), "\n") + 1
		for _, p := range probs {
			if p.Line < 1 || p.Line > n || p.File != "i" || p.Msg == "" {
				t.Fatalf("problem %q outside the %d-line input", p, n)
			}
		}
		for _, s := range file.Stanzas {
			if s.Name == "" || s.Method == "" || !strings.HasPrefix(s.At, "i:") {
				t.Fatalf("bad stanza %+v", s)
			}
			for _, o := range s.Options {
				if o.Key == "" || o.Line < 1 || o.Line > n {
					t.Fatalf("bad option %+v", o)
				}
			}
		}
		for _, src := range append(file.Sources, file.SrcDirs...) {
			Include("/etc/network/interfaces", src)
		}
	})
}
