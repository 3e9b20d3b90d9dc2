package netplan

import (
	"strings"
	"testing"
)

const cloudInitNetplan = `# This file is generated from information provided by the datasource.
network:
    ethernets:
        eth0:
            dhcp4: true
            match:
                macaddress: 52:54:00:12:34:56
            set-name: eth0
        eth1:
            dhcp4: yes
            dhcp6: on
            dhcp-identifier: mac
            renderer: NetworkManager
    version: 2
`

func TestParse(t *testing.T) {
	np, probs := Parse("/etc/netplan/50-cloud-init.yaml", []byte(cloudInitNetplan))
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	if len(np.Devices) != 2 || np.Renderer != nil {
		t.Fatalf("got %+v", np)
	}
	e0, e1 := np.Devices[0], np.Devices[1]
	if e0.ID != "eth0" || e0.Kind != "ethernets" || e0.At != "/etc/netplan/50-cloud-init.yaml:4" {
		t.Errorf("eth0 = %+v", e0)
	}
	if e0.DHCP4 == nil || !*e0.DHCP4 || e0.DHCP6 != nil || e0.DHCPIdentifier != nil || e0.DHCPAt != "/etc/netplan/50-cloud-init.yaml:5" {
		t.Errorf("eth0 dhcp = %v %v %v %s", e0.DHCP4, e0.DHCP6, e0.DHCPIdentifier, e0.DHCPAt)
	}
	if e0.Match == nil || e0.Match.MAC.String() != "52:54:00:12:34:56" || e0.Match.MACAt != "/etc/netplan/50-cloud-init.yaml:7" || e0.Name() != "eth0" {
		t.Errorf("eth0 match = %+v, name %s", e0.Match, e0.Name())
	}
	if !*e1.DHCP4 || !*e1.DHCP6 || *e1.DHCPIdentifier != "mac" || *e1.Renderer != "NetworkManager" {
		t.Errorf("eth1 = %+v", e1)
	}
}

func TestParseNetplanProblems(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // "line: substring"; empty means valid
		devices  int
	}{
		{name: "empty file", in: ""},
		{name: "only comments", in: "# nothing here\n"},
		{name: "syntax error", in: "network:\n  ethernets:\n    eth0:\n      dhcp4: true\n     bad: [\n", want: []string{"5: invalid YAML"}},
		{name: "syntax error after a multi-line flow list",
			in:   "network:\n  ethernets:\n    eth0:\n      addresses: [192.0.2.1/24,\n        192.0.2.2/24]\n      dhcp4: true\n     bad: [\n",
			want: []string{"7: invalid YAML"}},
		{name: "unterminated quote", in: "network:\n  version: 2\n  ethernets:\n    eth0:\n      set-name: \"eth0\n", want: []string{"5: invalid YAML"}},
		{name: "bad indentation", in: "network:\n  version: 2\n  ethernets:\n    eth0:\n      dhcp4: true\n   eth1:\n      dhcp4: true\n", want: []string{"6: invalid YAML"}},
		{name: "tab indentation", in: "network:\n\tversion: 2\n", want: []string{"2: invalid YAML"}},
		{name: "no network key", in: "version: 2\n", want: []string{"1: no \"network\" key"}},
		{name: "top level list", in: "- a\n- b\n", want: []string{"1: top level is not a mapping"}},
		{name: "network scalar", in: "network: 2\n", want: []string{"1: \"network\" is not a mapping"}},
		{name: "ethernets list", in: "network:\n  ethernets: [eth0]\n", want: []string{"2: \"ethernets\" is not a mapping"}},
		{name: "device scalar", in: "network:\n  ethernets:\n    eth0: yes\n", want: []string{"3: ethernets \"eth0\" is not a mapping"}},
		// netplan refuses it: "expected mapping (check indentation)".
		{name: "device null", in: "network:\n  ethernets:\n    eth0:\n", want: []string{"3: ethernets \"eth0\" is not a mapping"}},
		{name: "dhcp4 not a bool", in: "network:\n  ethernets:\n    eth0:\n      dhcp4: maybe\n", devices: 1,
			want: []string{"4: \"dhcp4\" must be true or false"}},
		{name: "dhcp4 a list", in: "network:\n  ethernets:\n    eth0:\n      dhcp4: [true]\n", devices: 1,
			want: []string{"4: \"dhcp4\" must be true or false"}},
		{name: "bad identifier and mac", in: "network:\n  ethernets:\n    eth0:\n      dhcp-identifier: uuid\n      match:\n        macaddress: nope\n", devices: 1,
			want: []string{"4: dhcp-identifier must be mac or duid", "6: match macaddress \"nope\" is not a MAC address"}},
		{name: "match not a mapping", in: "network:\n  ethernets:\n    eth0:\n      match: eth*\n", devices: 1, want: []string{"4: \"match\" is not a mapping"}},
		{name: "aliases are followed", in: "common: &c\n  dhcp4: true\nnetwork:\n  ethernets:\n    eth0: *c\n", devices: 1},
		{name: "renderer not a string", in: "network:\n  renderer: [a]\n", want: []string{"2: \"renderer\" is not a string"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			np, probs := Parse("/etc/netplan/x.yaml", []byte(tc.in))
			if len(np.Devices) != tc.devices {
				t.Errorf("devices = %d, want %d", len(np.Devices), tc.devices)
			}
			if len(probs) != len(tc.want) {
				t.Fatalf("problems = %v, want %v", probs, tc.want)
			}
			for i, w := range tc.want {
				line, sub, _ := strings.Cut(w, ": ")
				if s := probs[i].String(); !strings.HasPrefix(s, "/etc/netplan/x.yaml:"+line+": ") || !strings.Contains(s, sub) {
					t.Errorf("problem = %q, want line %s with %q", s, line, sub)
				}
			}
		})
	}
}

func TestMerge(t *testing.T) {
	a, _ := Parse("/etc/netplan/50-cloud-init.yaml", []byte(cloudInitNetplan))
	b, _ := Parse("/etc/netplan/90-local.yaml", []byte("network:\n  renderer: networkd\n  ethernets:\n    eth0:\n      dhcp-identifier: mac\n    eth2:\n      dhcp4: false\n"))
	m := Merge([]File{a, b})
	if m.Renderer != "networkd" || len(m.Devices) != 3 {
		t.Fatalf("renderer %q, devices %+v", m.Renderer, m.Devices)
	}
	e0 := m.Devices[0]
	if *e0.DHCPIdentifier != "mac" || e0.DHCPIDAt != "/etc/netplan/90-local.yaml:5" || !*e0.DHCP4 || e0.At != "/etc/netplan/50-cloud-init.yaml:4" {
		t.Errorf("merged eth0 = %+v", e0)
	}
	if r := Merge(nil).Renderer; r != "networkd" {
		t.Errorf("default renderer = %q", r)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(cloudInitNetplan))
	f.Add([]byte("network:\n  ethernets:\n    eth0:\n      match: {macaddress: 'x'}\n      dhcp4: *a\n"))
	f.Add([]byte("a: &a [*a]\nnetwork: *a\n"))
	f.Add([]byte("network:\n\tversion: 2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		np, probs := Parse("f.yaml", b)
		// YAML errors may point just past the last line, and YAML counts a
		// bare carriage return as a line break too.
		n := strings.Count(string(b), "\n") + strings.Count(string(b), "\r") + 1
		for _, p := range probs {
			if p.Line < 0 || p.Line > n || !strings.HasPrefix(p.String(), "f.yaml") {
				t.Fatalf("problem %q outside the %d-line input", p, n)
			}
		}
		for _, d := range np.Devices {
			if d.Match != nil && d.Match.MAC != nil && d.Match.MACAt == "" {
				t.Fatalf("match without location: %+v", d)
			}
		}
		Merge([]File{np, np})
	})
}
