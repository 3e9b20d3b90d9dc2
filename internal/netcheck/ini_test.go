package netcheck

import (
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/guestfile/networkd"
	"github.com/guestcheck/guestcheck/internal/guestfile/nmconn"
)

func TestParseINI(t *testing.T) {
	in := "# networkd unit\n[Match]\nMACAddress=52:54:00:12:34:56 \\\n  52:54:00:ab:cd:ef\nName=eth0\n\n[Network]\nDHCP=yes\n; comment\nnot a pair\n[Broken\n=novalue\n[DHCPv4]\nClientIdentifier = mac\n"
	f, probs := ParseINI("/etc/systemd/network/20-wired.network", []byte(in), true)
	want := []string{"10: expected key=value", "11: malformed section header", "12: expected key=value"}
	if len(probs) != len(want) {
		t.Fatalf("problems = %v", probs)
	}
	for i, w := range want {
		line, sub, _ := strings.Cut(w, ": ")
		if s := probs[i].String(); !strings.HasPrefix(s, "/etc/systemd/network/20-wired.network:"+line+": ") || !strings.Contains(s, sub) {
			t.Errorf("problem %q, want line %s %q", s, line, sub)
		}
	}
	if e, ok := f.Get("Match", "MACAddress"); !ok || e.Value != "52:54:00:12:34:56  52:54:00:ab:cd:ef" || e.Line != 3 {
		t.Errorf("continued MACAddress = %+v", e)
	}
	if e, _ := f.Get("DHCPv4", "ClientIdentifier"); e.Value != "mac" {
		t.Errorf("ClientIdentifier = %+v", e)
	}
	if _, ok := f.Get("Network", "Nope"); ok {
		t.Error("found a key that is not there")
	}
	// Without continuation (NetworkManager keyfiles) the backslash stays.
	f, _ = ParseINI("k", []byte("[a]\nx=1\\\ny=2\n"), false)
	if e, _ := f.Get("a", "x"); e.Value != "1\\" {
		t.Errorf("x = %q", e.Value)
	}
	_, probs = ParseINI("k", []byte("x=1\n"), false)
	if len(probs) != 1 || !strings.Contains(probs[0].Msg, "outside any [section]") {
		t.Errorf("problems = %v", probs)
	}
}

func TestParseIfcfg(t *testing.T) {
	in := "# Created by cloud-init\nBOOTPROTO=dhcp\nDEVICE=\"eth0\"\nHWADDR='52:54:00:12:34:56'\nNAME=\"System \\\"eth0\\\"\"\nONBOOT=yes # comment\nexport TYPE=Ethernet\nrm -rf /\nBROKEN=\"unterminated\n"
	vars, probs := ParseIfcfg("/etc/sysconfig/network-scripts/ifcfg-eth0", []byte(in))
	for k, want := range map[string]string{"BOOTPROTO": "dhcp", "DEVICE": "eth0", "HWADDR": "52:54:00:12:34:56", "NAME": `System "eth0"`, "ONBOOT": "yes", "TYPE": "Ethernet"} {
		if vars[k].Value != want {
			t.Errorf("%s = %q, want %q", k, vars[k].Value, want)
		}
	}
	if vars["HWADDR"].Line != 4 {
		t.Errorf("HWADDR line %d", vars["HWADDR"].Line)
	}
	if len(probs) != 2 || probs[0].Line != 8 || probs[1].Line != 9 || !strings.Contains(probs[1].Msg, "unterminated quote") {
		t.Errorf("problems = %v", probs)
	}
}

// fuzzLines checks the invariant every parser keeps: problems point at a
// line of the input and name the file.
func fuzzLines(t *testing.T, b []byte, probs []Problem) {
	n := len(lines(b))
	for _, p := range probs {
		if p.Line < 1 || p.Line > n || p.File != "f" {
			t.Fatalf("problem %q outside the %d-line input", p, n)
		}
	}
}

func FuzzParseINI(f *testing.F) {
	f.Add([]byte("[Match]\nMACAddress=52:54:00:12:34:56 \\\n x\n[Network]\nDHCP=yes\n"), true)
	f.Add([]byte("[ethernet]\nmac-address=82;84;0;18;52;86;\n[ipv4]\nmethod=auto\n"), false)
	f.Add([]byte("[\n]\n=\\"), true)
	f.Fuzz(func(t *testing.T, b []byte, cont bool) {
		ini, probs := ParseINI("f", b, cont)
		fuzzLines(t, b, probs)
		_, uprobs := networkd.ParseNetwork(unitOf(ini))
		fuzzLines(t, b, fromParser(uprobs))
		_, nprobs := nmconn.Parse(keyfileOf(ini))
		fuzzLines(t, b, fromParser(nprobs))
	})
}

func FuzzParseIfcfg(f *testing.F) {
	f.Add([]byte("DEVICE=eth0\nHWADDR=\"52:54:00:12:34:56\"\nNAME='x'\n"))
	f.Add([]byte("X=\"a\\\"\nY='\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		vars, probs := ParseIfcfg("f", b)
		fuzzLines(t, b, probs)
		for k, v := range vars {
			if !ifcfgKey.MatchString(k) || v.Line < 1 {
				t.Fatalf("bad variable %q %+v", k, v)
			}
		}
	})
}
