package networkconfig

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/netconf"
	"github.com/guestcheck/guestcheck/internal/parse/netplan"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// handNetplan are netplan files written the way cloud-init, Harvester
// templates and administrators write them.
var handNetplan = []string{
	`network:
  version: 2
  ethernets:
    eth0:
      match: {macaddress: "52:54:00:12:34:56"}
      set-name: mgmt0
      mtu: 1400
      addresses: [192.0.2.10/24, "2001:db8::10/64"]
      routes: [{to: default, via: 192.0.2.1}, {to: 203.0.113.0/24, via: 192.0.2.254}]
      nameservers: {addresses: [192.0.2.53, "2001:db8::53"], search: [example.test, corp.test]}
    eth1:
      match: {driver: virtio_net}
      dhcp4: true
      dhcp-identifier: mac
    ens4: {dhcp4: false}
    ens5: {}
  vlans:
    vlan100: {id: 100, link: eth0, addresses: [198.51.100.5/24]}
  bonds:
    bond0: {interfaces: [ens4, ens5], dhcp4: true, mtu: 9000}
`,
	`network:
  version: 2
  ethernets:
    enp1s0:
      dhcp4: true
      dhcp6: true
    enp2s0:
      addresses: [198.51.100.20/24]
      gateway4: 198.51.100.1
      nameservers: {addresses: [198.51.100.53]}
  bridges:
    br0:
      interfaces: [enp3s0]
      addresses: ["2001:db8:1::1/64"]
  ethernets:
    enp3s0: {}
`,
	`network:
  version: 2
  ethernets:
    lan:
      match: {name: "en*"}
      dhcp4: yes
      routes:
        - to: 0.0.0.0/0
          via: 203.0.113.1
          table: 100
`,
}

// genNetplan writes a random netplan configuration netplan accepts:
// ethernets named, matched by MAC or by driver, static or DHCP, one
// default gateway, VLANs on them and a bond of spare NICs.
func genNetplan(r *rand.Rand) string {
	var b strings.Builder
	b.WriteString("network:\n  version: 2\n  ethernets:\n")
	n := 1 + r.IntN(4)
	gwDone := map[bool]bool{}
	var eths []string
	for i := range n {
		id := fmt.Sprintf("eth%d", i)
		eths = append(eths, id)
		fmt.Fprintf(&b, "    %s:\n", id)
		switch r.IntN(3) {
		case 1:
			fmt.Fprintf(&b, "      match: {macaddress: \"52:54:00:00:00:%02x\"}\n      set-name: net%d\n", i, i)
		case 2:
			if r.IntN(2) == 0 {
				fmt.Fprintf(&b, "      match: {macaddress: \"52:54:00:00:01:%02x\"}\n", i)
			} else {
				fmt.Fprintf(&b, "      match: {driver: drv%d}\n", i)
			}
		}
		v4 := r.IntN(2) == 0
		if v4 {
			b.WriteString("      dhcp4: true\n")
		}
		if r.IntN(4) == 0 {
			b.WriteString("      dhcp6: true\n")
		}
		if r.IntN(2) == 0 {
			v6 := r.IntN(3) == 0
			if v6 {
				fmt.Fprintf(&b, "      addresses: [\"2001:db8:%x::%x/64\"]\n", i+1, r.IntN(200)+2)
			} else {
				v4 = true
				fmt.Fprintf(&b, "      addresses: [192.0.2.%d/%d]\n", 10+i*20+r.IntN(10), 24+r.IntN(3))
			}
			if !gwDone[v6] && r.IntN(2) == 0 {
				gwDone[v6] = true
				if v6 {
					fmt.Fprintf(&b, "      routes: [{to: default, via: \"2001:db8:%x::1\"}]\n", i+1)
				} else {
					b.WriteString("      routes: [{to: default, via: 192.0.2.1}]\n")
				}
			}
		}
		// An IPv4 nameserver on an interface without IPv4 is dropped by
		// netplan's NetworkManager renderer ([ipv4] method=disabled).
		if v4 && r.IntN(3) == 0 {
			fmt.Fprintf(&b, "      nameservers: {addresses: [198.51.100.%d], search: [d%d.example.test]}\n", 50+i, i)
		}
		if r.IntN(4) == 0 {
			fmt.Fprintf(&b, "      mtu: %d\n", 1280+r.IntN(8000))
		}
	}
	if r.IntN(2) == 0 {
		b.WriteString("    spare0: {}\n    spare1: {}\n  bonds:\n    bond0:\n      interfaces: [spare0, spare1]\n      dhcp4: true\n")
	}
	if r.IntN(2) == 0 {
		b.WriteString("  vlans:\n")
		for i := range 1 + r.IntN(2) {
			fmt.Fprintf(&b, "    vlan%d:\n      id: %d\n      link: %s\n      addresses: [203.0.113.%d/24]\n", i, 1+r.IntN(4094), eths[r.IntN(len(eths))], 10+i)
		}
	}
	return b.String()
}

// normalize sorts what order does not matter for, so that two parsers'
// intents compare equal when they declare the same.
func normalize(ds []IntentIface, prefix string) []string {
	var out []string
	for _, d := range ds {
		d.ID = strings.TrimPrefix(d.ID, prefix)
		d.VLANLink = strings.TrimPrefix(d.VLANLink, prefix)
		for i := range d.Members {
			d.Members[i] = strings.TrimPrefix(d.Members[i], prefix)
		}
		slices.SortFunc(d.Addresses, func(a, b DeclPrefix) int { return strings.Compare(a.Prefix.String(), b.Prefix.String()) })
		slices.SortFunc(d.Gateways, func(a, b DeclAddr) int { return a.Addr.Compare(b.Addr) })
		d.Gateways = slices.CompactFunc(d.Gateways, func(a, b DeclAddr) bool { return a.Addr == b.Addr })
		slices.SortFunc(d.Nameservers, func(a, b DeclAddr) int { return a.Addr.Compare(b.Addr) })
		d.Nameservers = slices.CompactFunc(d.Nameservers, func(a, b DeclAddr) bool { return a.Addr == b.Addr })
		slices.SortFunc(d.Search, func(a, b DeclString) int { return strings.Compare(a.Value, b.Value) })
		d.Search = slices.CompactFunc(d.Search, func(a, b DeclString) bool { return a.Value == b.Value })
		out = append(out, summary(d))
	}
	slices.Sort(out)
	return out
}

// netplanGenerate runs `netplan generate` on one file under a fresh root
// and returns the root; an error carries netplan's message.
func netplanGenerate(t *testing.T, bin, yaml string) (string, error) {
	t.Helper()
	return netplanGenerateFiles(t, bin, map[string]string{"50-cloud-init.yaml": yaml})
}

// netplanGenerateFiles is netplanGenerate for several /etc/netplan files.
func netplanGenerateFiles(t *testing.T, bin string, files map[string]string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "etc/netplan"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, y := range files {
		if err := os.WriteFile(filepath.Join(dir, "etc/netplan", name), []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "generate", "--root-dir", dir).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	// netplan 0.106 reports some refusals (conflicting default routes) on
	// stderr and still exits 0.
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Error") {
			return dir, fmt.Errorf("%s", l)
		}
	}
	return dir, nil
}

// generateAgrees runs netplan on y and holds its verdict to ours: netplan
// refuses a file exactly when we found a problem in it or a conflict of
// default routes. ok is false when both refuse (nothing to compare).
func generateAgrees(t *testing.T, bin, y string, in Intent, probs []problem.Problem) (string, bool) {
	t.Helper()
	conflict := slices.ContainsFunc(JudgeIntentConsistency(in, nil), func(f runner.Finding) bool { return f.Code == CodeNCGatewayConflict.ID })
	dir, err := netplanGenerate(t, bin, y)
	switch {
	case err != nil && len(probs) == 0 && !conflict:
		t.Fatalf("netplan refuses what we found nothing wrong with: %v\n%s", err, y)
	case err == nil && (len(probs) > 0 || conflict):
		t.Fatalf("netplan accepts what we found problems in: %v (conflict %v)\n%s", probs, conflict, y)
	}
	return dir, err == nil
}

func readINIs(t *testing.T, dir, glob string, continuation bool) []netconf.INI {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(dir, glob))
	slices.Sort(ms)
	var out []netconf.INI
	for _, m := range ms {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		parse := netconf.ParseKeyfile
		if continuation {
			parse = netconf.ParseUnit
		}
		f, probs := parse(filepath.Base(m), b)
		if len(probs) > 0 {
			t.Errorf("%s: %v", m, probs)
		}
		out = append(out, f)
	}
	return out
}

// TestNetplanDifferential holds the netplan parser to netplan itself:
// for hand-made and generated files, the intent read from the YAML equals
// the intent read from the systemd-networkd units `netplan generate`
// renders (interfaces, matches, DHCP, addresses, default gateways,
// nameservers, search domains, MTU, VLAN ID and link, bond and bridge
// members). netplan refusing a file that ParseNetworkYAML found no
// problem in fails the test too, except for the conflicts
// JudgeIntentConsistency reports.
func TestNetplanDifferential(t *testing.T) {
	bin := testenv.Tool(t, "netplan", "netplan.io")
	inputs := slices.Clone(handNetplan)
	r := rand.New(rand.NewPCG(1, 2))
	for range 30 {
		inputs = append(inputs, genNetplan(r))
	}
	for i, y := range inputs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			in, probs := ParseNetworkYAML("50-cloud-init.yaml", []byte(y))
			dir, ok := generateAgrees(t, bin, y, in, probs)
			if !ok {
				return
			}
			nd := filepath.Join(dir, "run/systemd/network")
			ds, probs := NetworkdIntent(readINIs(t, nd, "*.network", true), readINIs(t, nd, "*.netdev", true))
			if len(probs) > 0 {
				t.Errorf("problems in netplan's output: %v", probs)
			}
			got, want := normalize(ds, "10-netplan-"), normalize(in.Ifaces, "")
			if !slices.Equal(got, want) {
				t.Errorf("netplan rendered:\n%s\nParseNetworkYAML read:\n%s\ninput:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), y)
			}
		})
	}
}

// TestNetplanConflictsAgree checks the consistency judgement against
// netplan: files declaring two default gateways of one family are the
// ones netplan refuses.
func TestNetplanConflictsAgree(t *testing.T) {
	bin := testenv.Tool(t, "netplan", "netplan.io")
	cases := []struct {
		yaml     string
		conflict bool
	}{
		{"network:\n  ethernets:\n    a: {addresses: [192.0.2.2/24], routes: [{to: default, via: 192.0.2.1}]}\n    b: {addresses: [198.51.100.2/24], routes: [{to: default, via: 198.51.100.1}]}\n", true},
		{"network:\n  ethernets:\n    a: {addresses: [192.0.2.2/24], routes: [{to: default, via: 192.0.2.1}]}\n    b: {addresses: [\"2001:db8::2/64\"], routes: [{to: default, via: \"2001:db8::1\"}]}\n", false},
		{"network:\n  ethernets:\n    a: {addresses: [192.0.2.2/24], gateway4: 192.0.2.1}\n    b: {addresses: [198.51.100.2/24], routes: [{to: default, via: 198.51.100.1, table: 7}]}\n", false},
	}
	for i, tc := range cases {
		in, _ := ParseNetworkYAML("x.yaml", []byte(tc.yaml))
		ours := slices.ContainsFunc(JudgeIntentConsistency(in, nil), func(f runner.Finding) bool { return f.Code == CodeNCGatewayConflict.ID })
		_, err := netplanGenerate(t, bin, tc.yaml)
		theirs := err != nil && strings.Contains(err.Error(), "Conflicting default route")
		if ours != tc.conflict || theirs != tc.conflict {
			t.Errorf("case %d: we say conflict=%v, netplan %v (%v), want %v", i, ours, theirs, err, tc.conflict)
		}
	}
}

// TestNetplanNetworkManagerDifferential does the same through netplan's
// NetworkManager renderer for configurations NetworkManager can express
// (no driver match), which holds NMIntent to netplan's keyfiles.
func TestNetplanNetworkManagerDifferential(t *testing.T) {
	bin := testenv.Tool(t, "netplan", "netplan.io")
	r := rand.New(rand.NewPCG(3, 4))
	var inputs []string
	for len(inputs) < 15 {
		y := genNetplan(r)
		if !strings.Contains(y, "driver:") {
			inputs = append(inputs, strings.Replace(y, "  version: 2\n", "  version: 2\n  renderer: NetworkManager\n", 1))
		}
	}
	for i, y := range inputs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			in, probs := ParseNetworkYAML("50-cloud-init.yaml", []byte(y))
			dir, ok := generateAgrees(t, bin, y, in, probs)
			if !ok {
				return
			}
			ds, probs := NMIntent(readINIs(t, filepath.Join(dir, "run/NetworkManager/system-connections"), "*.nmconnection", false))
			if len(probs) > 0 {
				t.Errorf("problems in netplan's output: %v", probs)
			}
			// With set-name, netplan's NetworkManager renderer leaves the
			// MAC to a udev rename rule and keys the profile to the new
			// name: the profile no longer matches by MAC.
			for j := range in.Ifaces {
				if d := &in.Ifaces[j]; d.Name != "" && d.MatchMAC != nil {
					d.MatchMAC = nil
				}
			}
			got, want := normalize(ds, "netplan-"), normalize(in.Ifaces, "")
			if !slices.Equal(got, want) {
				t.Errorf("netplan rendered:\n%s\nParseNetworkYAML read:\n%s\ninput:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), y)
			}
		})
	}
}

// netplanOverride writes a later netplan file that changes some of the
// ethernets genNetplan declared: DHCP turned off or on, another address,
// another nameserver, a new MTU, or a match and set-name added.
func netplanOverride(r *rand.Rand, base string) string {
	var b strings.Builder
	b.WriteString("network:\n  ethernets:\n")
	for i := 0; strings.Contains(base, fmt.Sprintf("    eth%d:\n", i)); i++ {
		if r.IntN(2) == 0 {
			continue
		}
		fmt.Fprintf(&b, "    eth%d:\n", i)
		switch r.IntN(4) {
		case 0:
			fmt.Fprintf(&b, "      dhcp4: %v\n", r.IntN(2) == 0)
		case 1:
			fmt.Fprintf(&b, "      addresses: [198.51.100.%d/24]\n", 100+i)
		case 2:
			fmt.Fprintf(&b, "      mtu: %d\n", 1280+r.IntN(8000))
		case 3:
			fmt.Fprintf(&b, "      dhcp6: true\n      nameservers: {addresses: [\"2001:db8:53::%x\"]}\n", i+1)
		}
	}
	b.WriteString("    extra0: {dhcp4: true}\n")
	return b.String()
}

// TestNetplanMergeDifferential holds the merge of several netplan files
// to netplan: what ReadIntent reads from a cloud-init file and a later
// administrator's file equals what `netplan generate` renders from both.
func TestNetplanMergeDifferential(t *testing.T) {
	bin := testenv.Tool(t, "netplan", "netplan.io")
	type pair struct{ base, local string }
	inputs := []pair{
		// A later file turns DHCP off, adds an address and a nameserver
		// (sequences append) and adds a driver to the match (mappings merge).
		{"network:\n  ethernets:\n    eth0:\n      match: {macaddress: \"52:54:00:12:34:56\"}\n      set-name: lan0\n      dhcp4: true\n      addresses: [192.0.2.10/24]\n      nameservers: {addresses: [192.0.2.53]}\n",
			"network:\n  ethernets:\n    eth0:\n      match: {driver: virtio_net}\n      dhcp4: false\n      addresses: [192.0.2.11/24]\n      nameservers: {addresses: [192.0.2.54], search: [example.test]}\n"},
		{"network:\n  bonds:\n    bond0: {interfaces: [ens4], dhcp4: true}\n  ethernets:\n    ens4: {}\n    ens5: {}\n",
			"network:\n  bonds:\n    bond0: {interfaces: [ens5], mtu: 9000}\n"},
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 15 {
		base := genNetplan(r)
		inputs = append(inputs, pair{base, netplanOverride(r, base)})
	}
	for i, in := range inputs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			files := map[string]string{"50-cloud-init.yaml": in.base, "90-local.yaml": in.local}
			root := writeRoot(t, map[string]string{"etc/netplan/50-cloud-init.yaml": in.base, "etc/netplan/90-local.yaml": in.local})
			ri := ReadIntent(root)
			conflict := slices.ContainsFunc(JudgeIntentConsistency(ri.Intent, nil), func(f runner.Finding) bool { return f.Code == CodeNCGatewayConflict.ID })
			dir, err := netplanGenerateFiles(t, bin, files)
			switch {
			case err != nil && len(ri.Intent.Problems) == 0 && !conflict:
				t.Fatalf("netplan refuses what we found nothing wrong with: %v\n%s---\n%s", err, in.base, in.local)
			case err == nil && (len(ri.Intent.Problems) > 0 || conflict):
				t.Fatalf("netplan accepts what we found problems in: %v (conflict %v)", ri.Intent.Problems, conflict)
			case err != nil:
				return
			}
			nd := filepath.Join(dir, "run/systemd/network")
			ds, probs := NetworkdIntent(readINIs(t, nd, "*.network", true), readINIs(t, nd, "*.netdev", true))
			if len(probs) > 0 {
				t.Errorf("problems in netplan's output: %v", probs)
			}
			got, want := normalize(ds, "10-netplan-"), normalize(ri.Intent.Ifaces, "")
			if !slices.Equal(got, want) {
				t.Errorf("netplan rendered:\n%s\nReadIntent read:\n%s\ninput:\n%s---\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), in.base, in.local)
			}
		})
	}
}

// TestNetplanRendererDifferential holds the renderer network-identity
// judges by (netplan.Merge) to the one netplan generate renders with: the
// last file's network-level renderer applies to the devices of every file,
// a device's own renderer wins.
func TestNetplanRendererDifferential(t *testing.T) {
	bin := testenv.Tool(t, "netplan", "netplan.io")
	for i, files := range []map[string]string{
		{"10-a.yaml": "network:\n  renderer: NetworkManager\n  ethernets:\n    eth0: {dhcp4: true}\n", "20-b.yaml": "network:\n  renderer: networkd\n  ethernets:\n    eth1: {dhcp4: true}\n"},
		{"10-a.yaml": "network:\n  renderer: networkd\n  ethernets:\n    eth0: {dhcp4: true}\n", "20-b.yaml": "network:\n  renderer: NetworkManager\n"},
		{"10-a.yaml": "network:\n  ethernets:\n    eth0: {dhcp4: true, renderer: NetworkManager}\n    eth1: {dhcp4: true}\n"},
		{"10-a.yaml": "network:\n  ethernets:\n    eth0: {dhcp4: true}\n", "20-b.yaml": "network:\n  ethernets:\n    eth0: {renderer: NetworkManager}\n"},
	} {
		dir, err := netplanGenerateFiles(t, bin, files)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		var parsed []netplan.File
		for _, name := range slices.Sorted(maps.Keys(files)) {
			f, probs := netplan.Parse(name, []byte(files[name]))
			if len(probs) > 0 {
				t.Fatalf("case %d: %v", i, probs)
			}
			parsed = append(parsed, f)
		}
		m := netplan.Merge(parsed)
		for _, d := range m.Devices {
			r := m.Renderer
			if d.Renderer != nil {
				r = *d.Renderer
			}
			_, nd := os.Stat(filepath.Join(dir, "run/systemd/network/10-netplan-"+d.ID+".network"))
			_, nm := os.Stat(filepath.Join(dir, "run/NetworkManager/system-connections/netplan-"+d.ID+".nmconnection"))
			if got := map[bool]string{true: "networkd", false: "NetworkManager"}[nd == nil]; got != r || (nd == nil) == (nm == nil) {
				t.Errorf("case %d: %s: we say renderer %s, netplan rendered it for %s", i, d.ID, r, got)
			}
		}
	}
}

// TestNetplanRefusalsAgree holds netplan.Parse's problems to netplan: each
// of these files is refused by `netplan generate`, and both checks read
// them through netplan.Parse, which must report a problem. On main,
// network-identity took a device without a mapping as a device, and
// network-config accepted a file without "network:", any dhcp-identifier
// and any via of a route that was not a default one.
func TestNetplanRefusalsAgree(t *testing.T) {
	bin := testenv.Tool(t, "netplan", "netplan.io")
	for _, y := range []string{
		"network:\n  ethernets:\n    eth0:\n",
		"ethernets:\n  eth0: {dhcp4: true}\n",
		"network:\n  ethernets:\n    eth0: {dhcp4: true, dhcp-identifier: uuid}\n",
		"network:\n  ethernets:\n    eth0: {routes: [{to: 198.51.100.0/24, via: nope}]}\n",
		"network:\n  wifis: 3\n",
		"network:\n  ethernets:\n    eth0: {dhcp4: maybe}\n",
	} {
		if _, probs := netplan.Parse("a.yaml", []byte(y)); len(probs) == 0 {
			t.Errorf("no problem found in\n%s", y)
		}
		if _, err := netplanGenerate(t, bin, y); err == nil {
			t.Errorf("netplan accepts\n%s", y)
		}
	}
}
