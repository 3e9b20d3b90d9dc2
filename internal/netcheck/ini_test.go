package netcheck

import (
	"strings"
	"testing"
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

func TestParseNetworkdUnit(t *testing.T) {
	in := "[Match]\nMACAddress=52:54:00:12:34:56 zz:zz\nName=eth0 en*\n[Network]\nDHCP=IPv4\n[DHCPv4]\nClientIdentifier=duid\nDUIDType=link-layer\n[DHCPv6]\nDUIDType=uuid\n"
	f, _ := ParseINI("u.network", []byte(in), true)
	u, probs := ParseNetworkdUnit(f)
	if len(probs) != 1 || probs[0].Line != 2 || !strings.Contains(probs[0].Msg, `"zz:zz" is not a MAC address`) {
		t.Errorf("problems = %v", probs)
	}
	if len(u.MatchMACs) != 1 || u.MatchMACs[0].MAC.String() != "52:54:00:12:34:56" || u.MatchMACs[0].At != "u.network:2" {
		t.Errorf("MACs = %+v", u.MatchMACs)
	}
	if !u.DHCPv4() || u.DHCPv6() || u.ClientID != "duid" || u.DUIDType4 != "link-layer" || u.DUIDType6 != "uuid" || u.Name() != "eth0 en*" {
		t.Errorf("unit = %+v", u)
	}
	for v, want := range map[string][2]bool{"yes": {true, true}, "ipv6": {false, true}, "no": {false, false}, "both": {true, true}, "": {false, false}} {
		u := NetworkdUnit{DHCP: v}
		if u.DHCPv4() != want[0] || u.DHCPv6() != want[1] {
			t.Errorf("DHCP=%s: v4 %v v6 %v", v, u.DHCPv4(), u.DHCPv6())
		}
	}
	// An empty assignment resets the list, as in systemd.
	f, _ = ParseINI("u.network", []byte("[Match]\nMACAddress=52:54:00:12:34:56\nMACAddress=\n"), true)
	if u, _ := ParseNetworkdUnit(f); len(u.MatchMACs) != 0 {
		t.Errorf("reset list kept %v", u.MatchMACs)
	}
	if !macDUID("link-layer") || !macDUID("link-layer-time:2020-01-01 00:00:00") || macDUID("vendor") || macDUID("") || macDUID("uuid") {
		t.Error("macDUID")
	}
}

func TestParseNMKeyfile(t *testing.T) {
	in := "[connection]\nid=cloud-init eth0\nuuid=1dd9a779-d327-56e1-8454-c65e2556c12c\ntype=ethernet\ninterface-name=eth0\n\n[ethernet]\nmac-address=52:54:00:12:34:56\n\n[ipv4]\nmethod=auto\ndhcp-client-id=duid\n"
	f, _ := ParseINI("c.nmconnection", []byte(in), false)
	c, probs := ParseNMKeyfile(f)
	if len(probs) != 0 || c.ID != "cloud-init eth0" || c.InterfaceName != "eth0" || c.MAC == nil || c.MAC.At != "c.nmconnection:8" ||
		!c.DHCPv4() || !c.machineClientID() {
		t.Errorf("connection = %+v %v", c, probs)
	}
	for in, want := range map[string]string{
		"52:54:00:12:34:56;":  "52:54:00:12:34:56",
		"82;84;0;18;52;86;":   "52:54:00:12:34:56",
		"82;84;0;18;52":       "",
		"82;84;0;18;52;999;":  "",
		"not-a-mac":           "",
		"52:54:00:AB:CD:EF  ": "",
	} {
		mac, err := parseNMMAC(in)
		if got := ""; err == nil {
			got = mac.String()
			if got != want {
				t.Errorf("parseNMMAC(%q) = %s, want %q", in, got, want)
			}
		} else if want != "" {
			t.Errorf("parseNMMAC(%q): %v", in, err)
		}
	}
	f, _ = ParseINI("c", []byte("[ethernet]\nmac-address=xx\n[ipv4]\nmethod=manual\n"), false)
	c, probs = ParseNMKeyfile(f)
	if len(probs) != 1 || probs[0].Line != 2 || c.DHCPv4() || c.machineClientID() {
		t.Errorf("bad keyfile: %+v %v", c, probs)
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

func TestParsePersistentNetRules(t *testing.T) {
	in := `# This file was automatically generated by the /lib/udev/write_net_rules
# PCI device 0x1af4:0x1000 (virtio-pci)
SUBSYSTEM=="net", ACTION=="add", DRIVERS=="?*", ATTR{address}=="52:54:00:12:34:56", ATTR{dev_id}=="0x0", ATTR{type}=="1", KERNEL=="eth*", NAME="eth0"
SUBSYSTEM=="net", ACTION=="add", ATTR{address}=="52:54:00:*", NAME="eth9"
SUBSYSTEM=="net", ATTR{address}=="zz", NAME="eth8"
this is not a rule
SUBSYSTEM=="net", NAME="eth7"
`
	rules, probs := ParsePersistentNetRules("/etc/udev/rules.d/70-persistent-net.rules", []byte(in))
	if len(rules) != 1 || rules[0].Name != "eth0" || rules[0].MAC.String() != "52:54:00:12:34:56" || rules[0].At != "/etc/udev/rules.d/70-persistent-net.rules:3" {
		t.Errorf("rules = %+v", rules)
	}
	if len(probs) != 2 || probs[0].Line != 5 || probs[1].Line != 6 {
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
		_, uprobs := ParseNetworkdUnit(ini)
		fuzzLines(t, b, uprobs)
		_, nprobs := ParseNMKeyfile(ini)
		fuzzLines(t, b, nprobs)
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

func FuzzParsePersistentNetRules(f *testing.F) {
	f.Add([]byte(`SUBSYSTEM=="net", ATTR{address}=="52:54:00:12:34:56", NAME="eth0"` + "\n"))
	f.Add([]byte(`A="`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rules, probs := ParsePersistentNetRules("f", b)
		fuzzLines(t, b, probs)
		for _, r := range rules {
			if len(r.MAC) == 0 || !strings.HasPrefix(r.At, "f:") {
				t.Fatalf("bad rule %+v", r)
			}
		}
	})
}
