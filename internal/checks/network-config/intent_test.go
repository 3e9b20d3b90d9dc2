package networkconfig

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/fact/netstate/nstest"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
	"github.com/guestcheck/guestcheck/internal/testenv/netstatetest"
)

// runNC runs the network-config check; ns nil means under --root.
func runNC(t *testing.T, ns *nstest.NS, files map[string]string) []runner.Finding {
	t.Helper()
	env := &runner.Env{Root: writeRoot(t, files), Config: config.Default()}
	if ns != nil {
		env.Live, env.Netlink = true, ns.Handle
	}
	fs := RunNetworkConfig(context.Background(), env)
	for _, f := range fs {
		t.Logf("%s %s: %s", f.Status, f.Code, f.Message)
	}
	checktest.Conventions(t, fs, Codes)
	return fs
}

// want fails unless fs holds a finding with code and status whose
// message contains every fragment.
func want(t *testing.T, fs []runner.Finding, st runner.Status, code string, fragments ...string) runner.Finding {
	t.Helper()
	checktest.Conventions(t, fs, Codes)
	for _, f := range fs {
		if f.Code != code || f.Status != st {
			continue
		}
		ok := true
		for _, s := range fragments {
			ok = ok && strings.Contains(f.Message, s)
		}
		if ok {
			return f
		}
	}
	t.Fatalf("no %s %s finding containing %q", st, code, fragments)
	return runner.Finding{}
}

func noFinding(t *testing.T, fs []runner.Finding, code string) {
	t.Helper()
	for _, f := range fs {
		if f.Code == code {
			t.Fatalf("unexpected %s: %s", code, f.Message)
		}
	}
}

func worst(fs []runner.Finding) runner.Status {
	w := runner.Pass
	for _, f := range fs {
		if f.Status == runner.Fail || f.Status == runner.Error || (f.Status == runner.Warn && w == runner.Pass) {
			w = f.Status
		}
	}
	return w
}

const (
	macEth0 = "52:54:00:00:00:10"
	macEth1 = "52:54:00:00:00:11"
)

const healthyNetplan = `network:
  version: 2
  ethernets:
    eth0:
      addresses: [192.0.2.10/24]
      routes: [{to: default, via: 192.0.2.1}]
      nameservers: {addresses: [192.0.2.53], search: [example.test]}
      mtu: 1400
`

// healthy builds the guest the healthy netplan file describes.
func healthy(t *testing.T) (*nstest.NS, netlink.Link) {
	ns := nstest.New(t)
	l := ns.NIC(t, "eth0", macEth0, "192.0.2.10/24")
	ns.PeerAddr(t, "eth0", "192.0.2.1/24")
	ns.Default(t, "eth0", "192.0.2.1", 0, 0, false)
	if err := ns.Handle.LinkSetMTU(l, 1400); err != nil {
		t.Fatal(err)
	}
	return ns, l
}

var healthyResolv = "nameserver 192.0.2.53\nsearch example.test\n"

func TestNetworkConfigHealthy(t *testing.T) {
	ns, _ := healthy(t)
	fs := runNC(t, ns, map[string]string{"etc/netplan/50-cloud-init.yaml": healthyNetplan, "etc/resolv.conf": healthyResolv})
	f := want(t, fs, runner.Pass, CodeNCInterfaceOK.ID, "eth0 is up as declared", "192.0.2.10/24", "default route via 192.0.2.1")
	if f.Detail["source"] != "netplan, rendered by cloud-init" {
		t.Errorf("source %q", f.Detail["source"])
	}
	want(t, fs, runner.Pass, CodeNCNameserversOK.ID, "1 declared nameserver(s) and 1 search domain(s)")
	if w := worst(fs); w != runner.Pass {
		t.Errorf("worst status %s on a healthy guest", w)
	}
}

func TestNetworkConfigInterfaceMissing(t *testing.T) {
	ns := nstest.New(t)
	ns.NIC(t, "ens3", macEth0, "192.0.2.10/24")
	fs := runNC(t, ns, map[string]string{"etc/netplan/50-cloud-init.yaml": "network:\n  ethernets:\n    eth0: {dhcp4: true}\n"})
	f := want(t, fs, runner.Fail, CodeNCInterfaceMissing.ID, "no interface named eth0", "ens3 ("+macEth0+"): use that name")
	if f.Detail["unconfigured_nics"] != "ens3" || !strings.Contains(f.Remediation, "Name the interface ens3") {
		t.Errorf("detail %v, remediation %q", f.Detail, f.Remediation)
	}
	// By MAC: the finding lists every NIC when none is free to suggest.
	fs = runNC(t, ns, map[string]string{"etc/netplan/50-cloud-init.yaml": "network:\n  ethernets:\n    a: {match: {macaddress: \"" + macEth1 + "\"}}\n    ens3: {}\n"})
	want(t, fs, runner.Fail, CodeNCInterfaceMissing.ID, "no interface has MAC "+macEth1, "the VM's NICs are ens3 "+macEth0)
}

func TestNetworkConfigAddressMissing(t *testing.T) {
	ns := nstest.New(t)
	ns.NIC(t, "eth0", macEth0, "192.0.2.11/24")
	fs := runNC(t, ns, map[string]string{"etc/netplan/50-cloud-init.yaml": "network:\n  ethernets:\n    eth0: {addresses: [192.0.2.10/24]}\n"})
	f := want(t, fs, runner.Fail, CodeNCAddressMissing.ID, "eth0 lacks declared address 192.0.2.10/24", "it has 192.0.2.11/24")
	if f.Detail["declared"] != "192.0.2.10/24" {
		t.Errorf("detail %v", f.Detail)
	}
	noFinding(t, fs, CodeNCInterfaceOK.ID)
}

func TestNetworkConfigNameserverMissing(t *testing.T) {
	ns, _ := healthy(t)
	fs := runNC(t, ns, map[string]string{"etc/netplan/50-cloud-init.yaml": healthyNetplan, "etc/resolv.conf": "nameserver 192.0.2.3\n"})
	want(t, fs, runner.Fail, CodeNCNameserverMissing.ID, "declared nameserver 192.0.2.53", "is not used by the resolver")
	want(t, fs, runner.Warn, CodeNCSearchMissing.ID, "example.test")
	// Behind the systemd-resolved stub, the upstream list counts.
	fs = runNC(t, ns, map[string]string{"etc/netplan/50-cloud-init.yaml": healthyNetplan,
		"etc/resolv.conf":                 "nameserver 127.0.0.53\nsearch example.test\n",
		"run/systemd/resolve/resolv.conf": "nameserver 192.0.2.53\nsearch example.test\n"})
	want(t, fs, runner.Pass, CodeNCNameserversOK.ID)
}

// TestJudgeIntentVLAN judges VLANs on fake facts: this test kernel has
// no 8021q support, so no namespace can hold a VLAN link.
func TestJudgeIntentVLAN(t *testing.T) {
	mac, _ := net.ParseMAC(macEth0)
	snap := netstate.Snapshot{Links: []netstate.Link{
		{Index: 2, Name: "eth0", Kind: "device", Encap: "ether", MAC: mac, AdminUp: true, LowerUp: true, Device: true, MTU: 1500},
		{Index: 3, Name: "eth1", Kind: "device", Encap: "ether", AdminUp: true, LowerUp: true, Device: true, MTU: 1500},
		{Index: 4, Name: "vlan100", Kind: "vlan", Encap: "ether", MAC: mac, AdminUp: true, LowerUp: true, ParentIndex: 2, VLANID: 200, MTU: 1500},
	}}
	f := &IntentFacts{Topo: netstate.NewTopology(snap)}
	cfg := "network:\n  ethernets:\n    eth0: {}\n    eth1: {}\n  vlans:\n    vlan100: {id: 100, link: eth0}\n"
	in, _ := ParseNetworkYAML("n.yaml", []byte(cfg))
	fs := JudgeIntent(in, f)
	want(t, fs, runner.Fail, CodeNCVLANMismatch.ID, "vlan100: its VLAN ID is 200, declared 100 (n.yaml:6)")
	in, _ = ParseNetworkYAML("n.yaml", []byte(strings.Replace(strings.Replace(cfg, "id: 100", "id: 200", 1), "link: eth0", "link: eth1", 1)))
	fs = JudgeIntent(in, f)
	want(t, fs, runner.Fail, CodeNCVLANMismatch.ID, "vlan100: it sits on eth0, declared on eth1")
	in, _ = ParseNetworkYAML("n.yaml", []byte(strings.Replace(cfg, "id: 100", "id: 200", 1)))
	fs = JudgeIntent(in, f)
	want(t, fs, runner.Pass, CodeNCInterfaceOK.ID, "vlan100 is up as declared")
	noFinding(t, fs, CodeNCVLANMismatch.ID)
	// A declared bond that is a plain NIC, with a member elsewhere.
	in, _ = ParseNetworkYAML("n.yaml", []byte("network:\n  ethernets:\n    eth1: {}\n  bonds:\n    eth0: {interfaces: [eth1]}\n"))
	want(t, JudgeIntent(in, f), runner.Fail, CodeNCMembersMismatch.ID, "eth0: it is a device link, not a bond; member eth1 belongs to no bond")
}

// TestNetworkConfigTakeover is the Harvester two-NIC case judged from the
// declared intent: the management NIC's declared gateway lost the
// default route to the second NIC's DHCP route.
func TestNetworkConfigTakeover(t *testing.T) {
	ns, _ := healthy(t)
	ns.NIC(t, "eth1", macEth1, "198.51.100.20/24")
	ns.PeerAddr(t, "eth1", "198.51.100.1/24")
	if err := ns.Handle.RouteDel(&netlink.Route{LinkIndex: mustLink(t, ns, "eth0").Attrs().Index, Dst: &net.IPNet{IP: net.IPv4zero, Mask: net.CIDRMask(0, 32)}}); err != nil {
		t.Fatal(err)
	}
	ns.Default(t, "eth0", "192.0.2.1", 200, 0, false)
	ns.Default(t, "eth1", "198.51.100.1", 100, 0, false)
	cfg := healthyNetplan + "    eth1: {dhcp4: true}\n"
	fs := runNC(t, ns, map[string]string{"etc/netplan/50-cloud-init.yaml": cfg, "etc/resolv.conf": healthyResolv})
	f := want(t, fs, runner.Fail, CodeNCGatewayNotDefault.ID, "declared gateway 192.0.2.1 on eth0", "default via 198.51.100.1 dev eth1")
	if !strings.Contains(f.Remediation, "use-routes: false") {
		t.Errorf("remediation %q", f.Remediation)
	}
	// eth1 has a static address, not a lease.
	want(t, fs, runner.Fail, CodeNCNoLease.ID, "eth1 is declared for DHCP (IPv4) but holds no IPv4 lease")
}

func mustLink(t *testing.T, ns *nstest.NS, name string) netlink.Link {
	t.Helper()
	l, err := ns.Handle.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestNetworkConfigDownAndMTU(t *testing.T) {
	ns, l := healthy(t)
	if err := ns.Handle.LinkSetMTU(l, 1500); err != nil {
		t.Fatal(err)
	}
	if err := ns.Handle.LinkSetDown(l); err != nil {
		t.Fatal(err)
	}
	fs := runNC(t, ns, map[string]string{"etc/netplan/50-cloud-init.yaml": healthyNetplan, "etc/resolv.conf": healthyResolv})
	want(t, fs, runner.Fail, CodeNCInterfaceDown.ID, "eth0 is administratively down")
	want(t, fs, runner.Warn, CodeNCMTUMismatch.ID, "eth0 has MTU 1500, declared 1400")
	// Down, the kernel dropped the default route too.
	want(t, fs, runner.Fail, CodeNCGatewayNotDefault.ID, "no IPv4 default route carries general traffic")
}

func TestNetworkConfigLease(t *testing.T) {
	ns := nstest.New(t)
	l := ns.NIC(t, "eth0", macEth0)
	a, _ := netlink.ParseAddr("192.0.2.15/24")
	a.ValidLft, a.PreferedLft = 3600, 3600
	if err := ns.Handle.AddrAdd(l, a); err != nil {
		t.Fatal(err)
	}
	ns.PeerAddr(t, "eth0", "192.0.2.2/24")
	ns.Default(t, "eth0", "192.0.2.2", 100, 0, false)
	idx := strconv.Itoa(l.Attrs().Index)
	cfg := map[string]string{
		"etc/netplan/50-cloud-init.yaml":  "network:\n  ethernets:\n    eth0: {dhcp4: true}\n",
		"etc/resolv.conf":                 "nameserver 192.0.2.3\n",
		"run/systemd/netif/leases/" + idx: "ADDRESS=192.0.2.15\nROUTER=192.0.2.2\nDNS=192.0.2.3\n",
	}
	fs := runNC(t, ns, cfg)
	want(t, fs, runner.Pass, CodeNCInterfaceOK.ID, "DHCP lease held")
	// A lease whose address the client assigned without a lifetime
	// (permanent) still counts through the lease file.
	l2 := ns.NIC(t, "eth1", macEth1, "198.51.100.7/24")
	idx2 := strconv.Itoa(l2.Attrs().Index)
	cfg2 := map[string]string{
		"etc/netplan/50-cloud-init.yaml":   "network:\n  ethernets:\n    eth1: {dhcp4: true}\n",
		"run/systemd/netif/leases/" + idx2: "ADDRESS=198.51.100.7\n",
	}
	want(t, runNC(t, ns, cfg2), runner.Pass, CodeNCInterfaceOK.ID, "eth1 is up as declared: DHCP lease held")
	delete(cfg2, "run/systemd/netif/leases/"+idx2)
	want(t, runNC(t, ns, cfg2), runner.Fail, CodeNCNoLease.ID, "eth1 is declared for DHCP")
	cfg["run/systemd/netif/leases/"+idx] = "ADDRESS=192.0.2.15\nROUTER=192.0.2.9\nDNS=192.0.2.4\n"
	fs = runNC(t, ns, cfg)
	want(t, fs, runner.Warn, CodeNCLeaseRouterUnused.ID, "offers router 192.0.2.9")
	want(t, fs, runner.Warn, CodeNCLeaseDNSUnused.ID, "offers nameserver 192.0.2.4")
}

func TestNetworkConfigBridgeMembers(t *testing.T) {
	ns := nstest.New(t)
	ns.NIC(t, "eth0", macEth0)
	ns.NIC(t, "eth1", macEth1)
	if err := ns.Handle.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}); err != nil {
		t.Fatalf("add bridge: %v", err)
	}
	br := mustLink(t, ns, "br0")
	if err := ns.Handle.LinkSetMaster(mustLink(t, ns, "eth0"), br); err != nil {
		t.Fatal(err)
	}
	if err := ns.Handle.LinkSetUp(br); err != nil {
		t.Fatal(err)
	}
	cfg := "network:\n  ethernets:\n    eth0: {}\n    eth1: {}\n  bridges:\n    br0: {interfaces: [eth0, eth1]}\n"
	fs := runNC(t, ns, map[string]string{"etc/netplan/50-cloud-init.yaml": cfg})
	want(t, fs, runner.Fail, CodeNCMembersMismatch.ID, "br0: member eth1 belongs to no bridge")
}

func TestNetworkConfigNameMismatchAndMatchedTwice(t *testing.T) {
	ns := nstest.New(t)
	ns.NIC(t, "eth0", macEth0)
	cfg := "network:\n  ethernets:\n    lan: {match: {macaddress: \"" + macEth0 + "\"}, set-name: mgmt0}\n    eth0: {}\n"
	fs := runNC(t, ns, map[string]string{"etc/netplan/50-cloud-init.yaml": cfg})
	want(t, fs, runner.Warn, CodeNCNameMismatch.ID, "matched eth0, but the configuration names it mgmt0")
	want(t, fs, runner.Fail, CodeNCMatchedTwice.ID, "interface eth0 is declared 2 times")
}

// TestNetworkConfigUnderRoot judges the files alone and says why the
// live comparison was skipped.
func TestNetworkConfigUnderRoot(t *testing.T) {
	fs := runNC(t, nil, map[string]string{"etc/netplan/50-cloud-init.yaml": healthyNetplan})
	want(t, fs, runner.Pass, CodeNCConsistent.ID, "1 declared interface(s) from netplan, rendered by cloud-init")
	f := want(t, fs, runner.Skip, CodeNCLiveSkipped.ID, "needs the running system, but --root is")
	if f.Detail["files"] == "" {
		t.Error("the skip should name the files")
	}
	bad := `network:
  ethernets:
    eth0:
      match: {macaddress: "52:54:00:00:00:10"}
      addresses: [192.0.2.10/24]
      routes: [{to: default, via: 192.0.2.1}]
    eth1:
      match: {macaddress: "52:54:00:00:00:10"}
      addresses: [192.0.2.10/24]
      gateway4: 192.0.2.254
`
	fs = runNC(t, nil, map[string]string{"etc/netplan/50-cloud-init.yaml": bad})
	want(t, fs, runner.Fail, CodeNCDuplicateAddress.ID, "address 192.0.2.10 is declared 2 times")
	want(t, fs, runner.Fail, CodeNCGatewayConflict.ID, "2 interfaces declare an IPv4 default gateway with no metric")
	want(t, fs, runner.Fail, CodeNCMatchedTwice.ID, "MAC 52:54:00:00:00:10 is declared 2 times")
	noFinding(t, fs, CodeNCConsistent.ID)
}

// TestGatewayMetrics: default gateways with different metrics are a
// deliberate primary and fallback, not a conflict, and only the primary
// has to win.
func TestGatewayMetrics(t *testing.T) {
	v1 := `version: 1
config:
  - type: physical
    name: ens3
    subnets: [{type: static, address: 192.0.2.15/24, gateway: 192.0.2.2, metric: 200}]
  - type: physical
    name: ens4
    subnets: [{type: static, address: 198.51.100.15/24, gateway: 198.51.100.2, metric: 100}]
`
	in, probs := ParseNetworkYAML("n", []byte(v1))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	noFinding(t, JudgeIntentConsistency(in, nil), CodeNCGatewayConflict.ID)
	if primaryGateway(in, in.Ifaces[0].Gateways[0]) || !primaryGateway(in, in.Ifaces[1].Gateways[0]) {
		t.Error("the metric-100 gateway is the primary")
	}
	same := strings.ReplaceAll(v1, "metric: 100", "metric: 200")
	in, _ = ParseNetworkYAML("n", []byte(same))
	want(t, JudgeIntentConsistency(in, nil), runner.Fail, CodeNCGatewayConflict.ID, "with the same metric 200")
}

func TestNetworkConfigFiles(t *testing.T) {
	fs := runNC(t, nil, nil)
	want(t, fs, runner.Skip, CodeNCNone.ID, "no declared network configuration found")
	fs = runNC(t, nil, map[string]string{"etc/netplan/50-cloud-init.yaml": "network:\n  ethernets:\n    eth0: {dhcp4: maybe}\n"})
	f := want(t, fs, runner.Warn, CodeNCInvalid.ID, `50-cloud-init.yaml:3: ethernets "eth0": "dhcp4" must be true or false`)
	if f.Detail["file"] == "" {
		t.Errorf("detail %v", f.Detail)
	}
	// A directory where the file should be cannot be read.
	fs = runNC(t, nil, map[string]string{"var/lib/cloud/instance/network-config.json/x": ""})
	want(t, fs, runner.Error, CodeNCUnreadable.ID, "cannot read 1 network configuration file(s)")
}

func TestNetworkConfigKernelError(t *testing.T) {
	r := ReadIntent(writeRoot(t, map[string]string{"etc/netplan/50-cloud-init.yaml": healthyNetplan}))
	fs := CompareIntent(r, &netstatetest.Kernel{Err: errors.New("netlink: operation not permitted")}, nil, writeRoot(t, nil))
	want(t, fs, runner.Error, CodeNCKernelError.ID, "cannot read the network interfaces")
}

// TestReadIntentSources checks which configuration is taken as the
// intent: cloud-init's own record first, then what it rendered for each
// stack, then the administrator's files.
func TestReadIntentSources(t *testing.T) {
	nm := "[connection]\nid=x\ntype=ethernet\ninterface-name=eth0\n[ipv4]\nmethod=auto\n"
	cases := []struct {
		name   string
		files  map[string]string
		source string
		ifaces string
	}{
		{"network-config.json wins", map[string]string{
			"var/lib/cloud/instance/network-config.json": `{"version": 1, "config": [{"type": "physical", "name": "eth0", "subnets": [{"type": "dhcp"}]}]}`,
			"etc/netplan/50-cloud-init.yaml":             "network: {ethernets: {ens3: {dhcp4: true}}}\n",
		}, "cloud-init network-config v1", "eth0"},
		{"run copy, v2", map[string]string{
			"run/cloud-init/network-config.json": `{"version": 2, "ethernets": {"eth0": {"dhcp4": true}}}`,
		}, "cloud-init network-config v2", "eth0"},
		{"disabled falls through", map[string]string{
			"var/lib/cloud/instance/network-config.json": `{"config": "disabled"}`,
			"etc/netplan/01-admin.yaml":                  "network: {ethernets: {ens3: {dhcp4: true}}}\n",
		}, "netplan (administrator)", "ens3"},
		{"netplan merges every file", map[string]string{
			"etc/netplan/50-cloud-init.yaml": "network: {ethernets: {eth0: {dhcp4: true}}}\n",
			"etc/netplan/90-local.yaml":      "network: {ethernets: {eth0: {mtu: 1400}, eth1: {}}}\n",
		}, "netplan, rendered by cloud-init", "eth0 eth1"},
		{"ifupdown by cloud-init", map[string]string{
			"etc/network/interfaces":                 "auto lo\niface lo inet loopback\nsource /etc/network/interfaces.d/*\n",
			"etc/network/interfaces.d/50-cloud-init": "auto eth0\niface eth0 inet dhcp\n",
		}, "ifupdown, rendered by cloud-init", "eth0"},
		{"NetworkManager by cloud-init", map[string]string{
			"etc/NetworkManager/system-connections/cloud-init-eth0.nmconnection": nm,
			"etc/NetworkManager/system-connections/other.nmconnection":           strings.Replace(nm, "eth0", "eth9", 1),
		}, "NetworkManager, rendered by cloud-init", "eth0"},
		{"networkd by cloud-init", map[string]string{
			"etc/systemd/network/10-cloud-init-eth0.network": "[Match]\nName=eth0\n[Network]\nDHCP=ipv4\n",
		}, "systemd-networkd, rendered by cloud-init", "eth0"},
		{"ifcfg by cloud-init", map[string]string{
			"etc/sysconfig/network-scripts/ifcfg-eth0": "# Created by cloud-init automatically, do not edit.\nBOOTPROTO=dhcp\nDEVICE=eth0\n",
		}, "ifcfg, rendered by cloud-init", "eth0"},
		{"administrator's NetworkManager", map[string]string{
			"etc/NetworkManager/system-connections/lan.nmconnection": nm,
		}, "NetworkManager (administrator)", "eth0"},
		{"administrator's networkd", map[string]string{
			"etc/systemd/network/lan.network":          "[Match]\nName=eth0\n[Network]\nDHCP=ipv4\n",
			"run/systemd/network/10-netplan-x.network": "[Match]\nName=x\n",
		}, "systemd-networkd (administrator)", "eth0"},
		// interfaces(5): a relative include is relative to the directory
		// of the file that names it.
		{"ifupdown relative includes", map[string]string{
			"etc/network/interfaces":         "auto lo\niface lo inet loopback\nsource-directory interfaces.d\n",
			"etc/network/interfaces.d/lan":   "iface eth0 inet dhcp\nsource ../extra/*.cfg\n",
			"etc/network/extra/eth1.cfg":     "iface eth1 inet dhcp\n",
			"etc/extra/eth2.cfg":             "iface eth2 inet dhcp\n",
			"etc/network/interfaces.d/x.cfg": "iface eth3 inet dhcp\n",
		}, "ifupdown (administrator)", "eth0 eth1"},
		{"administrator's ifupdown", map[string]string{
			"etc/network/interfaces": "auto lo\niface lo inet loopback\nallow-hotplug eth0\niface eth0 inet dhcp\n",
		}, "ifupdown (administrator)", "eth0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ReadIntent(writeRoot(t, tc.files))
			var names []string
			for _, d := range r.Intent.Ifaces {
				names = append(names, d.Name)
			}
			if r.Intent.Source != tc.source || strings.Join(names, " ") != tc.ifaces || !r.Found {
				t.Errorf("source %q, interfaces %q; want %q, %q (problems %v)", r.Intent.Source, names, tc.source, tc.ifaces, r.Intent.Problems)
			}
		})
	}
}

// TestJudgeIntentMatchDriver judges a match by driver on fake facts (a
// veth has no driver under /sys in a test namespace).
func TestJudgeIntentMatchDriver(t *testing.T) {
	mac, _ := net.ParseMAC(macEth0)
	snap := netstate.Snapshot{Links: []netstate.Link{{Index: 2, Name: "ens3", Kind: "device", Encap: "ether", MAC: mac, AdminUp: true, LowerUp: true, Device: true, MTU: 1500}}}
	f := &IntentFacts{Topo: netstate.NewTopology(snap), Drivers: map[string]string{"ens3": "virtio_net"}}
	in, _ := ParseNetworkYAML("n.yaml", []byte("network:\n  ethernets:\n    lan: {match: {driver: virtio*}}\n    wan: {match: {driver: e1000}}\n"))
	fs := JudgeIntent(in, f)
	want(t, fs, runner.Pass, CodeNCInterfaceOK.ID, "lan is ens3 as declared")
	want(t, fs, runner.Fail, CodeNCInterfaceMissing.ID, "no interface uses driver e1000", "ens3 "+macEth0+" (virtio_net)")
}
