package dhcplease

import (
	"bytes"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// A dhclient6 lease file as isc-dhcp-client 4.4 writes it: the DUID as
// a quoted string with octal escapes (quotify_buf), then lease6 blocks.
const dhclient6 = `default-duid "\000\001\000\001.\215\222\226RT\000\0224V";
lease6 {
  interface "enp1s0";
  ia-na 12:34:56:78 {
    starts 1764633600;
    renew 1800;
    rebind 2880;
    iaaddr 2001:db8::10 {
      starts 1764633600;
      preferred-life 3600;
      max-life 7200;
    }
  }
  option dhcp6.client-id 0:1:0:1:2e:8d:92:96:52:54:0:12:34:56;
  option dhcp6.server-id 0:1:0:1:aa:bb:cc:dd:52:54:0:ab:cd:ef;
}
`

// A dhclient (v4) lease file with two leases; the second's client
// identifier is printable, so dhclient wrote it as a string.
const dhclient4 = `# comment
lease {
  interface "eth0";
  fixed-address 192.0.2.10;
  option subnet-mask 255.255.255.0;
  option dhcp-client-identifier 1:52:54:0:12:34:56;
  option domain-name "example.com";
  renew 2 2026/12/01 10:00:00;
}
lease {
  interface "eth1";
  fixed-address 198.51.100.7;
  option dhcp-client-identifier "vm-one\"x\\";
}
`

func TestParseDhclient(t *testing.T) {
	d, probs := ParseDhclient("/var/lib/dhcp/dhclient6.leases", []byte(dhclient6))
	if len(probs) != 0 {
		t.Fatalf("problems %v", probs)
	}
	if got, want := Hex(d.DefaultDUID), "00:01:00:01:2e:8d:92:96:52:54:00:12:34:56"; got != want || d.DUIDLine != 1 {
		t.Errorf("default-duid %s at %d, want %s at 1", got, d.DUIDLine, want)
	}
	if len(d.Leases) != 1 || !d.Leases[0].V6 || d.Leases[0].Interface != "enp1s0" || d.Leases[0].Line != 2 || d.Leases[0].ClientIDLine != 14 ||
		Hex(d.Leases[0].ClientID) != "00:01:00:01:2e:8d:92:96:52:54:00:12:34:56" {
		t.Errorf("leases %+v", d.Leases)
	}
	d, probs = ParseDhclient("dhclient.leases", []byte(dhclient4))
	if len(probs) != 0 || d.DefaultDUID != nil || len(d.Leases) != 2 {
		t.Fatalf("%+v, %v", d, probs)
	}
	if l := d.Leases[0]; l.V6 || l.Interface != "eth0" || Hex(l.ClientID) != "01:52:54:00:12:34:56" || l.ClientIDLine != 6 {
		t.Errorf("first lease %+v", l)
	}
	if l := d.Leases[1]; l.Interface != "eth1" || string(l.ClientID) != `vm-one"x\` {
		t.Errorf("second lease %+v", l)
	}
}

func TestParseDhclientProblems(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string // "line: message prefix"
	}{
		{"lease {\n option dhcp-client-identifier 1:zz;\n}\n", []string{"f:2: option dhcp-client-identifier \"1:zz\": byte 2 is not hexadecimal"}},
		{"lease {\n interface eth0;\n}\n", []string{"f:2: interface wants one quoted name"}},
		{"default-duid \"\\000\\001\n", []string{"f:1: string is not terminated"}},
		{"lease {\n interface \"eth0\";\n", []string{"f:1: the block opened here is not closed"}},
		{"}\n", []string{"f:1: '}' closes no block"}},
		{"lease {\n option dhcp-client-identifier 1:2 3;\n}\n", []string{"f:2: option dhcp-client-identifier wants one value, has 2"}},
		{"default-duid \"\";\n", []string{"f:1: default-duid is empty"}},
		{"lease {\n interface \"eth0\"\n}\n", []string{"f:2: statement interface has no ';'"}},
		{"default-duid 0:1:0:3:52:54:0:12:34:56", []string{"f:1: statement default-duid has no ';'"}},
		{strings.Repeat("x {\n", 20) + strings.Repeat("}\n", 20), []string{"f:17: blocks nested more than 16 deep"}},
	} {
		_, probs := ParseDhclient("f", []byte(tc.in))
		var got []string
		for _, p := range probs {
			got = append(got, p.String())
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%q: problems %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDhclientLast(t *testing.T) {
	db := `lease {
  interface "eth0";
  fixed-address 192.0.2.20;
  option routers 192.0.2.1;
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
lease6 {
  interface "eth2";
}
`
	d, _ := ParseDhclient("d", []byte(db))
	for _, tc := range []struct {
		iface string
		ok    bool
		addr  string
		line  int
	}{
		{"eth0", true, "192.0.2.21", 10},
		{"eth1", true, "198.51.100.9", 6},
		{"eth2", true, "invalid IP", 16},
		{"eth9", false, "invalid IP", 0},
	} {
		l, ok := d.Last(tc.iface)
		if ok != tc.ok || l.Address.String() != tc.addr || l.Line != tc.line {
			t.Errorf("Last(%s) = %+v, %v; want %s at line %d, %v", tc.iface, l, ok, tc.addr, tc.line, tc.ok)
		}
	}
}

func TestParseSDLease(t *testing.T) {
	in := "# This is private data. Do not parse.\nADDRESS=192.0.2.10\nNETMASK=255.255.255.0\nCLIENTID=ff0ad7b65f00020000ab11617740de1342c3a2\n"
	l, probs := ParseSDLease("/run/systemd/netif/leases/2", []byte(in))
	if len(probs) != 0 || l.Address != "192.0.2.10" || l.ClientIDLine != 4 ||
		Hex(l.ClientID) != "ff:0a:d7:b6:5f:00:02:00:00:ab:11:61:77:40:de:13:42:c3:a2" {
		t.Errorf("%+v %v", l, probs)
	}
	// Read as networkd reads it back (systemd's env-file rules): a line
	// without '=' is a problem, and the last CLIENTID= is the one judged.
	_, probs = ParseSDLease("x", []byte("ADDRESS=192.0.2.1\nbogus\nCLIENTID=ff0\nCLIENTID=zz\n"))
	got := strings.Join(strs(probs), "|")
	if !strings.HasPrefix(got, "x:2: ") || !strings.HasSuffix(got, "x:4: CLIENTID= is not an identifier in hexadecimal") {
		t.Errorf("problems %q", got)
	}
}

func TestParseDUIDFile(t *testing.T) {
	for _, tc := range []struct {
		in, want, prob string
	}{
		{"00:01:00:01:2e:8d:92:96:52:54:00:12:34:56\n", "00:01:00:01:2e:8d:92:96:52:54:00:12:34:56", ""},
		{"\n  00:04:AB:CD:01\n", "00:04:ab:cd:01", ""},
		{"", "", ""},
		{"00:01\n", "", "d:1: not a DUID: 2 bytes, want 3 to 130"},
		{"\n0001000105\n", "", "d:2: not a DUID: byte 1 is not one or two hexadecimal digits"},
		{strings.Repeat("00:", 130) + "00\n", "", "d:1: not a DUID: 131 bytes, want 3 to 130"},
	} {
		d, probs := ParseDUIDFile("d", []byte(tc.in))
		if Hex(d) != tc.want || strings.Join(strs(probs), "|") != tc.prob {
			t.Errorf("%q: %s %v, want %s %q", tc.in, Hex(d), probs, tc.want, tc.prob)
		}
	}
}

func TestHex(t *testing.T) {
	if got := Hex([]byte{0, 0xab, 0x0f}); got != "00:ab:0f" {
		t.Errorf("Hex = %q", got)
	}
	if Hex(nil) != "" {
		t.Error("Hex(nil) not empty")
	}
	b, err := ParseHex("0:ab:F")
	if err != nil || !bytes.Equal(b, []byte{0, 0xab, 0x0f}) {
		t.Errorf("ParseHex = %x, %v", b, err)
	}
	for _, bad := range []string{"", ":", "1::2", "123", "g"} {
		if _, err := ParseHex(bad); err == nil {
			t.Errorf("ParseHex(%q) accepted", bad)
		}
	}
}

func strs(ps []problem.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

// checkProblems holds every parser to the problem conventions: one line,
// the file named, a line number inside the input.
func checkProblems(t *testing.T, b []byte, probs []problem.Problem) {
	t.Helper()
	n := bytes.Count(b, []byte("\n")) + 1
	for _, p := range probs {
		if p.File != "f" || p.Line < 0 || p.Line > n || strings.ContainsAny(p.String(), "\n\r") {
			t.Fatalf("bad problem %+v (input of %d lines)", p, n)
		}
	}
}

func FuzzParseDhclient(f *testing.F) {
	f.Add([]byte(dhclient6))
	f.Add([]byte(dhclient4))
	f.Add([]byte("lease { option dhcp-client-identifier \"a\\\"b\\101\"; } }"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, probs := ParseDhclient("f", b)
		checkProblems(t, b, probs)
		if d.DefaultDUID != nil && len(d.DefaultDUID) == 0 {
			t.Fatal("empty default-duid kept")
		}
		for _, l := range d.Leases {
			if l.ClientID != nil && len(l.ClientID) == 0 || l.ClientID != nil && l.ClientIDLine < l.Line {
				t.Fatalf("bad lease %+v", l)
			}
			// A value written back in dhclient's hex form reads the same.
			if l.ClientID != nil {
				back, err := ParseHex(Hex(l.ClientID))
				if err != nil || !bytes.Equal(back, l.ClientID) {
					t.Fatalf("%x round-trips to %x, %v", l.ClientID, back, err)
				}
			}
		}
	})
}

func FuzzParseSDLease(f *testing.F) {
	f.Add([]byte("ADDRESS=192.0.2.10\nCLIENTID=ff0ad7b65f00020000ab11617740de1342c3a2\n"))
	f.Add([]byte("# x\n\nCLIENTID=\nfoo\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, probs := ParseSDLease("f", b)
		checkProblems(t, b, probs)
		if l.ClientID != nil && (len(l.ClientID) < 2 || l.ClientIDLine < 1) {
			t.Fatalf("bad client id %+v", l)
		}
	})
}

func FuzzParseDUIDFile(f *testing.F) {
	f.Add([]byte("00:01:00:01:2e:8d:92:96:52:54:00:12:34:56\n"))
	f.Add([]byte("\n0:4:1\nxx\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, probs := ParseDUIDFile("f", b)
		checkProblems(t, b, probs)
		if d != nil && (len(d) < minDUID || len(d) > maxDUID || len(probs) > 0) {
			t.Fatalf("DUID %x with problems %v", d, probs)
		}
		if d != nil {
			// What dhcpcd writes back (Hex, a newline) reads the same.
			back, _ := ParseDUIDFile("f", []byte(Hex(d)+"\n"))
			if !bytes.Equal(back, d) {
				t.Fatalf("%x reads back as %x", d, back)
			}
		}
	})
}

// FuzzDhclientLast: the last lease for an interface is the one in force,
// and leases of other interfaces change nothing.
func FuzzDhclientLast(f *testing.F) {
	f.Add([]byte("lease {\n  interface \"eth0\";\n  fixed-address 192.0.2.1;\n  option routers 192.0.2.254;\n  option domain-name-servers 192.0.2.53,192.0.2.54;\n}\n"), "eth0")
	f.Add([]byte("lease {\n interface \"eth1\";\n"), "eth1")
	f.Fuzz(func(t *testing.T, b []byte, iface string) {
		if iface == "" || strings.ContainsAny(iface, "\" \t\r\n\v\f;{}\\\u0085\u00a0") || strings.ContainsFunc(iface, func(r rune) bool { return r > 0x7f }) {
			iface = "eth0"
		}
		last := func(b []byte) (Lease, bool) {
			d, _ := ParseDhclient("f", b)
			return d.Last(iface)
		}
		if l, ok := last(b); !ok && !reflect.DeepEqual(l, Lease{}) {
			t.Fatalf("values %+v without a lease", l)
		}
		// Another interface's lease changes nothing, once every block b
		// leaves open is closed (nesting stops at maxDepth).
		closed := append(append([]byte(nil), b...), "\n"+strings.Repeat("}\n", maxDepth+1)...)
		lc, okc := last(closed)
		lo, oko := last([]byte(string(closed) + "lease {\n interface \"x" + iface + "\";\n fixed-address 198.51.100.1;\n}\n"))
		if oko != okc || !reflect.DeepEqual(lo, lc) {
			t.Fatalf("another interface's lease changed %+v to %+v", lc, lo)
		}
		if stopsParsing(closed) {
			return // nothing after the stop is read
		}
		mine := []byte(string(closed) + "lease {\n interface \"" + iface + "\";\n fixed-address 203.0.113.9;\n option routers 203.0.113.1;\n}\n")
		lm, okm := last(mine)
		if !okm || lm.Address != netip.MustParseAddr("203.0.113.9") || !reflect.DeepEqual(lm.Routers, []netip.Addr{netip.MustParseAddr("203.0.113.1")}) || lm.DNS != nil {
			t.Fatalf("the last lease is not the one in force: %+v, %v", lm, okm)
		}
	})
}

// stopsParsing reports whether ParseDhclient gives up before the end of
// b: at an unterminated string or a block nested too deep.
func stopsParsing(b []byte) bool {
	if _, probs := lex("f", b); len(probs) > 0 {
		return true
	}
	_, probs := ParseDhclient("f", b)
	for _, p := range probs {
		if strings.Contains(p.Msg, "nested more than") {
			return true
		}
	}
	return false
}
