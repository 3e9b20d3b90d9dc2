package netintent

import (
	"context"
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/fs"
	"github.com/guestcheck/guestcheck/internal/guestfile/problem"
	"github.com/guestcheck/guestcheck/internal/netconf"
	"github.com/guestcheck/guestcheck/internal/netstate"
)

// Codes of the network-config check.
const (
	CodeNCNone              = "netconfig-none"
	CodeNCUnreadable        = "netconfig-unreadable"
	CodeNCInvalid           = "netconfig-invalid"
	CodeNCLiveSkipped       = "netconfig-live-skipped"
	CodeNCConsistent        = "netconfig-consistent"
	CodeNCDuplicateAddress  = "netconfig-duplicate-address"
	CodeNCGatewayConflict   = "netconfig-gateway-conflict"
	CodeNCMatchedTwice      = "netconfig-matched-twice"
	CodeNCKernelError       = "netconfig-kernel-error"
	CodeNCInterfaceOK       = "netconfig-interface-ok"
	CodeNCInterfaceMissing  = "netconfig-interface-missing"
	CodeNCNameMismatch      = "netconfig-name-mismatch"
	CodeNCInterfaceDown     = "netconfig-interface-down"
	CodeNCAddressMissing    = "netconfig-address-missing"
	CodeNCNoLease           = "netconfig-dhcp-no-lease"
	CodeNCLeaseRouterUnused = "netconfig-lease-router-unused"
	CodeNCLeaseDNSUnused    = "netconfig-lease-dns-unused"
	CodeNCGatewayNotDefault = "netconfig-gateway-not-default"
	CodeNCNameserversOK     = "netconfig-nameservers-ok"
	CodeNCNameserverMissing = "netconfig-nameserver-missing"
	CodeNCSearchMissing     = "netconfig-search-missing"
	CodeNCMTUMismatch       = "netconfig-mtu-mismatch"
	CodeNCVLANMismatch      = "netconfig-vlan-mismatch"
	CodeNCMembersMismatch   = "netconfig-members-mismatch"
)

// NetworkConfigCodes lists every code the network-config check emits.
func NetworkConfigCodes() []string {
	return []string{CodeNCNone, CodeNCUnreadable, CodeNCInvalid, CodeNCLiveSkipped, CodeNCConsistent,
		CodeNCDuplicateAddress, CodeNCGatewayConflict, CodeNCMatchedTwice, CodeNCKernelError,
		CodeNCInterfaceOK, CodeNCInterfaceMissing, CodeNCNameMismatch, CodeNCInterfaceDown,
		CodeNCAddressMissing, CodeNCNoLease, CodeNCLeaseRouterUnused, CodeNCLeaseDNSUnused,
		CodeNCGatewayNotDefault, CodeNCNameserversOK, CodeNCNameserverMissing, CodeNCSearchMissing,
		CodeNCMTUMismatch, CodeNCVLANMismatch, CodeNCMembersMismatch}
}

// The remediation the Harvester article gives for every mismatch: fix
// the source, not the guest.
const fixAtSource = "Correct the VM's network data (cloud-init network-config) or the template it came from, then reboot or re-run `cloud-init clean --configs network && cloud-init init`; a hand fix inside the guest is lost on the next boot or clone"

// IntentFacts is the running system's side of the comparison: the
// kernel's links, addresses, routes and rules, NIC drivers, the resolver
// configuration and DHCP leases.
type IntentFacts struct {
	Topo     *netstate.Topology
	Drivers  map[string]string // link name -> kernel driver
	Resolver netstate.ResolverStack
	Leases   map[string]Lease // link name -> lease
}

// GatherIntentFacts reads IntentFacts from the running system: netlink
// through k, /sys, the resolver files and the lease files through root.
func GatherIntentFacts(k netstate.Kernel, root *fs.Root) (*IntentFacts, error) {
	snap, err := netstate.TakeSnapshot(k)
	if err != nil {
		return nil, err
	}
	netstate.MarkDevices(root, snap.Links)
	f := &IntentFacts{Topo: netstate.NewTopology(snap), Drivers: map[string]string{}, Resolver: netstate.ReadResolverStack(root)}
	for _, l := range snap.Links {
		if strings.ContainsAny(l.Name, "/\x00") || l.Name == "." || l.Name == ".." {
			continue
		}
		if t, err := root.Readlink("/sys/class/net/" + l.Name + "/device/driver"); err == nil {
			f.Drivers[l.Name] = path.Base(t)
		}
	}
	f.Leases = readLeases(root, snap.Links)
	return f, nil
}

// RunNetworkConfig is the network-config check: it reads the declared
// configuration, judges its own consistency under any root, and on the
// running system compares every declared interface with the kernel's.
func RunNetworkConfig(ctx context.Context, env *check.Env) []check.Finding {
	r := ReadIntent(env.Root)
	fs := JudgeIntentFiles(r)
	if !r.Found {
		return fs
	}
	cons := JudgeIntentConsistency(r.Intent, nil)
	fs = append(fs, cons...)
	if !env.Live {
		if len(cons) == 0 {
			fs = append(fs, check.Passf(CodeNCConsistent, fmt.Sprintf("%d declared interface(s) from %s: no duplicate address, gateway or match",
				len(r.Intent.Ifaces), r.Intent.Source), intentDetail(r.Intent)))
		}
		return append(fs, check.Skipf(CodeNCLiveSkipped, "declared configuration not compared with the interfaces: "+env.NotLiveReason(), intentDetail(r.Intent)))
	}
	if ctx.Err() != nil {
		return fs
	}
	k, done, err := netstate.OpenKernel(env.Netlink)
	if err != nil {
		return append(fs, ncKernelError(err))
	}
	defer done()
	return append(fs[:len(fs)-len(cons)], CompareIntent(r, k, env.Root)...)
}

// CompareIntent judges a declared configuration on the running system
// read through k (and root for /sys, resolver and lease files): its
// consistency against the live links, then every declared interface.
func CompareIntent(r IntentRead, k netstate.Kernel, root *fs.Root) []check.Finding {
	facts, err := GatherIntentFacts(k, root)
	if err != nil {
		return []check.Finding{ncKernelError(err)}
	}
	// Consistency again, now that the interfaces are known: two
	// declarations may match one NIC by different means.
	fs := JudgeIntentConsistency(r.Intent, facts)
	return append(fs, JudgeIntent(r.Intent, facts)...)
}

func ncKernelError(err error) check.Finding {
	return check.Errorf(CodeNCKernelError, "cannot read the network interfaces to compare with the declared configuration",
		map[string]string{"error": err.Error()}, "Run guestcheck on the guest itself, where netlink is available")
}

func intentDetail(in Intent) map[string]string {
	d := map[string]string{"source": in.Source, "files": strings.Join(in.Files, "\n")}
	return d
}

// JudgeIntentFiles reports a missing configuration, unreadable files and
// parse problems (one finding per file).
func JudgeIntentFiles(r IntentRead) []check.Finding {
	var fs []check.Finding
	if len(r.Unreadable) > 0 {
		fs = append(fs, check.Errorf(CodeNCUnreadable, fmt.Sprintf("cannot read %d network configuration file(s)", len(r.Unreadable)),
			map[string]string{"files": strings.Join(r.Unreadable, "\n")},
			"Run guestcheck as root (NetworkManager keyfiles and netplan files are readable by root only)"))
	}
	if !r.Found {
		if len(r.Unreadable) > 0 {
			return fs
		}
		return append(fs, check.Skipf(CodeNCNone, "no declared network configuration found (cloud-init, netplan, NetworkManager, systemd-networkd, ifupdown or ifcfg)",
			map[string]string{"consulted": strings.Join(r.Consulted, "\n")}))
	}
	groups, summary := netconf.ProblemsByFile(r.Intent.Problems)
	for i, ps := range groups {
		f, msg := ps[0].File, summary[i]
		fs = append(fs, check.New(check.Warn, CodeNCInvalid, msg,
			map[string]string{"file": f, "problems": problem.Join(ps), "source": r.Intent.Source},
			"Fix the reported lines: the network service ignores or rejects them, so the interface is not configured as declared"))
	}
	return fs
}

// JudgeIntentConsistency judges the declared configuration on its own:
// an address declared twice, two default gateways of one family on
// different interfaces (netplan refuses those), and two declarations for
// one interface. With facts, "one interface" means one live link,
// whatever the declarations matched it by.
func JudgeIntentConsistency(in Intent, facts *IntentFacts) []check.Finding {
	det := detailer(intentDetail(in))
	fs := judgeDuplicateAddresses(in, det)
	fs = append(fs, judgeGatewayConflicts(in, det)...)
	return append(fs, judgeMatchedTwice(in, facts, det)...)
}

// detailer returns a function that builds a finding's detail: base plus
// the key/value pairs given.
func detailer(base map[string]string) func(kv ...string) map[string]string {
	return func(kv ...string) map[string]string {
		d := map[string]string{}
		for k, v := range base {
			d[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			d[kv[i]] = kv[i+1]
		}
		return d
	}
}

// judgeDuplicateAddresses reports an address declared more than once.
func judgeDuplicateAddresses(in Intent, det func(kv ...string) map[string]string) []check.Finding {
	var fs []check.Finding
	type where struct{ iface, at string }
	addrs := map[netip.Addr][]where{}
	var addrOrder []netip.Addr
	for _, d := range in.Ifaces {
		for _, a := range d.Addresses {
			ip := a.Prefix.Addr()
			if _, ok := addrs[ip]; !ok {
				addrOrder = append(addrOrder, ip)
			}
			addrs[ip] = append(addrs[ip], where{d.Label(), a.At})
		}
	}
	for _, ip := range addrOrder {
		ws := addrs[ip]
		if len(ws) < 2 {
			continue
		}
		var at []string
		for _, w := range ws {
			at = append(at, w.iface+" at "+w.at)
		}
		fs = append(fs, check.New(check.Fail, CodeNCDuplicateAddress,
			fmt.Sprintf("address %s is declared %d times: %s", ip, len(ws), strings.Join(at, "; ")),
			det("address", ip.String(), "declared", strings.Join(at, "\n")),
			"Declare each address once, on the interface that owns it; "+fixAtSource))
	}
	return fs
}

// judgeGatewayConflicts reports default routes of one family and one
// metric on two interfaces: the kernel picks either (netplan reports them
// as conflicting).
func judgeGatewayConflicts(in Intent, det func(kv ...string) map[string]string) []check.Finding {
	var fs []check.Finding
	for _, f := range []netstate.Family{netstate.IPv4, netstate.IPv6} {
		type group struct {
			gws    []string
			ifaces map[string]bool
		}
		groups := map[string]*group{}
		var order []string
		for _, d := range in.Ifaces {
			for _, g := range d.Gateways {
				if netstate.FamilyOf(g.Addr) != f {
					continue
				}
				gr, ok := groups[g.Metric]
				if !ok {
					gr = &group{ifaces: map[string]bool{}}
					groups[g.Metric] = gr
					order = append(order, g.Metric)
				}
				gr.gws = append(gr.gws, g.Addr.String()+" on "+d.Label()+" at "+g.At)
				gr.ifaces[d.ID] = true
			}
		}
		for _, m := range order {
			gr := groups[m]
			if len(gr.ifaces) < 2 {
				continue
			}
			metric := "the same metric " + m
			if m == "" {
				metric = "no metric"
			}
			fs = append(fs, check.New(check.Fail, CodeNCGatewayConflict,
				fmt.Sprintf("%d interfaces declare an %s default gateway with %s: %s", len(gr.ifaces), f, metric, strings.Join(gr.gws, "; ")),
				det("family", f.String(), "gateways", strings.Join(gr.gws, "\n")),
				"Declare the default gateway on the management NIC only, or give the others a higher metric; which one the kernel uses is otherwise arbitrary (netplan refuses such files)"))
		}
	}
	return fs
}

// judgeMatchedTwice reports two declarations of one interface: by name,
// by MAC, or (with facts) by matching the same live link.
func judgeMatchedTwice(in Intent, facts *IntentFacts, det func(kv ...string) map[string]string) []check.Finding {
	var fs []check.Finding
	claims := map[string][]string{}
	var claimOrder []string
	claim := func(key, what string) {
		if _, ok := claims[key]; !ok {
			claimOrder = append(claimOrder, key)
		}
		claims[key] = append(claims[key], what)
	}
	for _, d := range in.Ifaces {
		what := d.Label() + " at " + d.At
		if facts != nil {
			for _, l := range facts.matches(d) {
				claim("interface "+l.Name, what)
			}
			continue
		}
		if d.Name != "" {
			claim("interface name "+d.Name, what)
		}
		if d.MatchMAC != nil && d.Kind == KindEthernet {
			claim("MAC "+d.MatchMAC.String(), what)
		}
	}
	for _, k := range claimOrder {
		ws := slices.Compact(claims[k])
		if len(ws) < 2 {
			continue
		}
		fs = append(fs, check.New(check.Fail, CodeNCMatchedTwice,
			fmt.Sprintf("%s is declared %d times: %s", k, len(ws), strings.Join(ws, "; ")),
			det("declarations", strings.Join(ws, "\n")),
			"Keep one declaration per interface: the network service applies only one of them, and which one depends on file order"))
	}
	return fs
}

// matches returns the live links a declaration applies to, in index order.
func (f *IntentFacts) matches(d IntentIface) []netstate.Link {
	var out []netstate.Link
	for _, l := range f.Topo.Snap.Links {
		if l.Name == "lo" {
			continue
		}
		if d.Matches(l, f.Drivers[l.Name]) {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b netstate.Link) int { return a.Index - b.Index })
	return out
}

// resolve finds the live link of the declaration with ID (or name) ref.
func (f *IntentFacts) resolve(in Intent, ref string) (netstate.Link, bool) {
	for _, d := range in.Ifaces {
		if d.ID == ref || d.Name == ref {
			if ls := f.matches(d); len(ls) > 0 {
				return ls[0], true
			}
		}
	}
	for _, l := range f.Topo.Snap.Links {
		if l.Name == ref {
			return l, true
		}
	}
	return netstate.Link{}, false
}

// winner returns the route that carries general traffic of family f: the
// lowest-metric default of the table the rules consult first.
func (f *IntentFacts) winner(fam netstate.Family) (netstate.Route, bool) {
	all := f.Topo.Defaults(fam)
	table, ok := f.Topo.GeneralTable(fam, all)
	if !ok {
		return netstate.Route{}, false
	}
	var best *netstate.Route
	for i, r := range all {
		if r.Table == table && (best == nil || r.Metric < best.Metric) {
			best = &all[i]
		}
	}
	if best == nil {
		return netstate.Route{}, false
	}
	return *best, true
}

// JudgeIntent compares every declared interface with the running system.
func JudgeIntent(in Intent, f *IntentFacts) []check.Finding {
	var fs []check.Finding
	claimed := map[int]bool{}
	for _, d := range in.Ifaces {
		for _, l := range f.matches(d) {
			claimed[l.Index] = true
		}
	}
	for _, d := range in.Ifaces {
		fs = append(fs, judgeIface(in, d, f, claimed)...)
	}
	return append(fs, judgeResolver(in, f)...)
}

func judgeIface(in Intent, d IntentIface, f *IntentFacts, claimed map[int]bool) []check.Finding {
	j := &ifaceJudge{in: in, d: d, f: f, t: f.Topo, sev: check.Fail,
		det: map[string]string{"interface": d.Label(), "declared_at": d.At, "source": in.Source}}
	if d.Optional {
		j.sev = check.Warn // declared optional: boot does not wait for it
	}
	ls := f.matches(d)
	if len(ls) == 0 {
		return []check.Finding{j.missing(claimed)}
	}
	l := ls[0]
	j.l = l
	j.det["link"] = fmt.Sprintf("%s (index %d, %s, MAC %s)", l.Name, l.Index, l.Kind, l.MAC)
	if len(ls) > 1 {
		var names []string
		for _, x := range ls {
			names = append(names, x.Name)
		}
		j.det["also_matches"] = strings.Join(names[1:], ", ")
	}
	fs := j.nameAndState()
	// Addresses: on the link itself (a bond or bridge holds its own).
	var have []netstate.Addr
	for _, a := range j.t.Snap.Addrs {
		if a.LinkIndex == l.Index {
			have = append(have, a)
		}
	}
	fs = append(fs, j.addresses(have)...)
	for _, fam := range []netstate.Family{netstate.IPv4, netstate.IPv6} {
		fs = append(fs, j.dhcp(fam, have)...)
	}
	fs = append(fs, j.gateways()...)
	fs = append(fs, j.mtu()...)
	switch d.Kind {
	case KindVLAN:
		fs = append(fs, j.vlan()...)
	case KindBond, KindBridge:
		fs = append(fs, j.members()...)
	}
	if len(fs) == 0 {
		fs = append(fs, j.ok())
	}
	return fs
}

// ifaceJudge judges one declared interface against the live link it
// matched; each step is one of the comparisons network-config makes.
type ifaceJudge struct {
	in  Intent
	d   IntentIface
	f   *IntentFacts
	t   *netstate.Topology
	l   netstate.Link // the first link the declaration matched
	sev check.Status  // Fail, or Warn for an optional interface
	det map[string]string
}

// withDet is the interface's detail plus the key/value pairs given.
func (j *ifaceJudge) withDet(kv ...string) map[string]string { return detailer(j.det)(kv...) }

// missing reports a declaration no live link answers, naming the NICs
// (and the one unconfigured NIC, when there is exactly one).
func (j *ifaceJudge) missing(claimed map[int]bool) check.Finding {
	d, t, f := j.d, j.t, j.f
	how := "no interface named " + d.Name
	switch {
	case d.MatchMAC != nil:
		how = "no interface has MAC " + d.MatchMAC.String()
		if d.MatchDriver != "" {
			how += " with driver " + d.MatchDriver
		}
	case d.MatchDriver != "":
		how = "no interface uses driver " + d.MatchDriver
	case d.MatchName != "":
		how = "no interface name matches " + d.MatchName
	}
	var nics, free []string
	for _, n := range t.NICs {
		drv := f.Drivers[n.Name]
		s := n.Name + " " + n.MAC.String()
		if drv != "" {
			s += " (" + drv + ")"
		}
		nics = append(nics, s)
		if !claimed[n.Index] {
			free = append(free, n.Name)
		}
	}
	msg := fmt.Sprintf("%s %s declared at %s: %s", d.Kind, d.Label(), d.At, how)
	fix := fixAtSource
	if d.Kind == KindEthernet {
		switch {
		case len(free) == 1:
			n, _ := linkByName(t, free[0])
			msg += fmt.Sprintf("; the VM's unconfigured NIC is %s (%s): use that name", n.Name, n.MAC)
			fix = fmt.Sprintf("Name the interface %s in the network data (or match it by `macaddress: %s`); %s", n.Name, n.MAC, fixAtSource)
		case len(nics) > 0:
			msg += "; the VM's NICs are " + strings.Join(nics, ", ")
		default:
			msg += "; the VM has no NIC"
		}
	} else {
		fix = "Check that the network service created it (journal of systemd-networkd, NetworkManager or ifupdown); " + fixAtSource
	}
	dd := j.withDet("nics", strings.Join(nics, "\n"))
	if len(free) > 0 {
		dd["unconfigured_nics"] = strings.Join(free, ", ")
	}
	return check.New(j.sev, CodeNCInterfaceMissing, msg, dd, fix)
}

// nameAndState reports a rename that did not happen and a link that is
// down.
func (j *ifaceJudge) nameAndState() []check.Finding {
	d, l := j.d, j.l
	var fs []check.Finding
	if d.Name != "" && l.Name != d.Name {
		fs = append(fs, check.New(check.Warn, CodeNCNameMismatch,
			fmt.Sprintf("%s declared at %s matched %s, but the configuration names it %s: the rename did not happen", d.Kind, d.At, l.Name, d.Name),
			j.withDet(), "Check the rename rule (netplan set-name, a .link file, cloud-init's udev rule) and whether the name is taken; "+fixAtSource))
	}
	if !l.AdminUp || !l.LowerUp {
		state := "administratively down"
		if l.AdminUp {
			state = "up without carrier"
		}
		fs = append(fs, check.New(j.sev, CodeNCInterfaceDown, fmt.Sprintf("%s is %s", d.Label(), state),
			j.withDet("admin_up", fmt.Sprint(l.AdminUp), "carrier", fmt.Sprint(l.LowerUp)),
			"Check the VM's network attachment (cable, bridge, VLAN on the host side) and the network service's journal"))
	}
	return fs
}

// addresses reports declared addresses the link does not have.
func (j *ifaceJudge) addresses(have []netstate.Addr) []check.Finding {
	d, l := j.d, j.l
	var fs []check.Finding
	var missing []string
	for _, a := range d.Addresses {
		found := false
		for _, h := range have {
			found = found || h.Prefix == a.Prefix
		}
		if !found {
			missing = append(missing, a.Prefix.String()+" ("+a.At+")")
		}
	}
	if len(missing) > 0 {
		fs = append(fs, check.New(check.Fail, CodeNCAddressMissing,
			fmt.Sprintf("%s lacks declared address %s; it has %s", l.Name, strings.Join(missing, ", "), netstate.AddrList(globalOnly(have))),
			j.withDet("declared", prefixList(d.Addresses), "assigned", netstate.AddrList(have)),
			"Find who assigned the other address (a DHCP client, a hand-made config, a second declaration) and make the declared one win; "+fixAtSource))
	}
	return fs
}

// dhcp reports, for a family declared for DHCP, a missing lease, and a
// lease's routers and nameservers that nothing uses.
func (j *ifaceJudge) dhcp(fam netstate.Family, have []netstate.Addr) []check.Finding {
	d, l, t, f := j.d, j.l, j.t, j.f
	var fs []check.Finding
	want := d.DHCP4
	if fam == netstate.IPv6 {
		want = d.DHCP6
	}
	if !want {
		return nil
	}
	var dyn []netstate.Addr
	for _, h := range have {
		if h.Dynamic && h.Global() && netstate.FamilyOf(h.Prefix.Addr()) == fam {
			dyn = append(dyn, h)
		}
	}
	le, hasLease := f.Leases[l.Name]
	if len(dyn) == 0 && hasLease && netstate.FamilyOf(le.Address) == fam {
		// A client that assigns its lease without a lifetime: the
		// lease file's address on the link is the evidence instead.
		for _, h := range have {
			if h.Prefix.Addr() == le.Address {
				dyn = append(dyn, h)
			}
		}
	}
	if len(dyn) == 0 {
		fs = append(fs, check.New(j.sev, CodeNCNoLease,
			fmt.Sprintf("%s is declared for DHCP (%s) but holds no %s lease: no dynamic address", l.Name, fam, fam),
			j.withDet("assigned", netstate.AddrList(have)),
			"Check that a DHCP server serves this network (the VM's network, VLAN ID and the DHCP range), and the DHCP client's journal"))
		return fs
	}
	if !hasLease || fam != netstate.FamilyOf(le.Address) {
		return fs
	}
	var unused []string
	for _, r := range le.Routers {
		if !f.routeVia(l.Index, r) {
			unused = append(unused, r.String())
		}
	}
	if len(unused) > 0 {
		fs = append(fs, check.New(check.Warn, CodeNCLeaseRouterUnused,
			fmt.Sprintf("the DHCP lease on %s offers router %s, but no route uses it", l.Name, strings.Join(unused, ", ")),
			j.withDet("lease", le.File, "routes", t.DescribeRoutes(f.Topo.Defaults(fam))),
			"If this NIC should carry the default route, allow DHCP routes on it (netplan `dhcp4-overrides: {use-routes: true}`, NetworkManager `ipv4.ignore-auto-routes no`); otherwise nothing to do"))
	}
	servers := f.Resolver.Servers()
	var dnsUnused []string
	for _, a := range le.DNS {
		if !slices.ContainsFunc(servers, func(s netstate.Server) bool { return s.Addr.WithZone("") == a }) {
			dnsUnused = append(dnsUnused, a.String())
		}
	}
	if len(dnsUnused) > 0 {
		fs = append(fs, check.New(check.Warn, CodeNCLeaseDNSUnused,
			fmt.Sprintf("the DHCP lease on %s offers nameserver %s, which the resolver does not use", l.Name, strings.Join(dnsUnused, ", ")),
			j.withDet("lease", le.File, "resolver_stack", f.Resolver.Describe()),
			"Let the DHCP client feed the resolver (systemd-resolved, or resolvconf for ifupdown), or declare the nameservers statically"))
	}
	return fs
}

// gateways reports a declared gateway that is not the default route.
func (j *ifaceJudge) gateways() []check.Finding {
	in, d, l, t, f := j.in, j.d, j.l, j.t, j.f
	var fs []check.Finding
	for _, g := range d.Gateways {
		fam := netstate.FamilyOf(g.Addr)
		w, ok := f.winner(fam)
		wantHop := func(h netstate.Hop) bool { return h.LinkIndex == l.Index && h.Gateway.WithZone("") == g.Addr }
		if ok && slices.ContainsFunc(w.Hops, wantHop) {
			continue
		}
		// A gateway declared with a higher metric than another one is a
		// fallback: it must be installed, not win.
		if !primaryGateway(in, g) && f.routeVia(l.Index, g.Addr) {
			continue
		}
		desc := "no " + fam.String() + " default route carries general traffic"
		if ok {
			desc = "the winning default route is " + t.DescribeRoute(w)
		}
		fs = append(fs, check.New(check.Fail, CodeNCGatewayNotDefault,
			fmt.Sprintf("declared gateway %s on %s (%s) is not the default route: %s", g.Addr, l.Name, g.At, desc),
			j.withDet("declared_gateway", g.Addr.String()+" ("+g.At+")", "defaults", t.DescribeRoutes(t.Defaults(fam))),
			netstate.FixTakeover))
	}
	return fs
}

// mtu reports an MTU other than the declared one.
func (j *ifaceJudge) mtu() []check.Finding {
	d, l := j.d, j.l
	var fs []check.Finding
	if d.MTU != 0 && l.MTU != d.MTU {
		fs = append(fs, check.New(check.Warn, CodeNCMTUMismatch,
			fmt.Sprintf("%s has MTU %d, declared %d (%s)", l.Name, l.MTU, d.MTU, d.MTUAt), j.withDet(),
			"A DHCP MTU option or the parent's MTU may override it; align the declared MTU with the network's, "+fixAtSource))
	}
	return fs
}

// vlan reports a VLAN with another ID or parent than declared.
func (j *ifaceJudge) vlan() []check.Finding {
	in, d, l, t, f := j.in, j.d, j.l, j.t, j.f
	var fs []check.Finding
	var bad []string
	if l.Kind != "vlan" {
		bad = append(bad, "it is a "+l.Kind+" link, not a VLAN")
	} else {
		if d.VLANAt != "" && l.VLANID != d.VLANID {
			bad = append(bad, fmt.Sprintf("its VLAN ID is %d, declared %d (%s)", l.VLANID, d.VLANID, d.VLANAt))
		}
		if d.VLANLink != "" {
			p, ok := f.resolve(in, d.VLANLink)
			switch {
			case !ok:
				bad = append(bad, "its declared parent "+d.VLANLink+" does not exist")
			case p.Index != l.ParentIndex:
				bad = append(bad, fmt.Sprintf("it sits on %s, declared on %s (%s)", t.Name(l.ParentIndex), p.Name, d.VLANLink))
			}
		}
	}
	if len(bad) > 0 {
		fs = append(fs, check.New(check.Fail, CodeNCVLANMismatch, l.Name+": "+strings.Join(bad, "; "),
			j.withDet("vlan_id", fmt.Sprint(l.VLANID), "parent", t.Name(l.ParentIndex)),
			"A wrong VLAN ID puts the VM on another network where DHCP and the gateway do not answer; "+fixAtSource))
	}
	return fs
}

// members reports a bond or bridge whose ports are not the declared
// members.
func (j *ifaceJudge) members() []check.Finding {
	in, d, l, t, f := j.in, j.d, j.l, j.t, j.f
	var fs []check.Finding
	want := "bond"
	if d.Kind == KindBridge {
		want = "bridge"
	}
	var ports []string
	for _, x := range t.Snap.Links {
		if x.MasterIndex == l.Index {
			ports = append(ports, x.Name)
		}
	}
	var bad []string
	if l.Kind != want {
		bad = append(bad, "it is a "+l.Kind+" link, not a "+want)
	}
	for _, m := range d.Members {
		ml, ok := f.resolve(in, m)
		switch {
		case !ok:
			bad = append(bad, "member "+m+" does not exist")
		case ml.MasterIndex != l.Index:
			where := "no " + want
			if ml.MasterIndex != 0 {
				where = t.Name(ml.MasterIndex)
			}
			bad = append(bad, fmt.Sprintf("member %s belongs to %s", ml.Name, where))
		}
	}
	if len(bad) > 0 {
		fs = append(fs, check.New(check.Fail, CodeNCMembersMismatch, l.Name+": "+strings.Join(bad, "; "),
			j.withDet("declared_members", strings.Join(d.Members, ", ")+" ("+d.MembersAt+")", "ports", strings.Join(ports, ", ")),
			"Check the member interfaces' names or matches and the network service's journal; "+fixAtSource))
	}
	return fs
}

// ok is the pass finding of an interface that is as declared.
func (j *ifaceJudge) ok() check.Finding {
	d, l := j.d, j.l
	var what []string
	if n := len(d.Addresses); n > 0 {
		what = append(what, prefixList(d.Addresses))
	}
	if d.DHCP4 || d.DHCP6 {
		what = append(what, "DHCP lease held")
	}
	if len(d.Gateways) > 0 {
		what = append(what, "default route via "+d.Gateways[0].Addr.String())
	}
	msg := fmt.Sprintf("%s is %s as declared", d.Label(), l.Name)
	if d.Label() == l.Name {
		msg = l.Name + " is up as declared"
	}
	if len(what) > 0 {
		msg += ": " + strings.Join(what, ", ")
	}
	return check.Passf(CodeNCInterfaceOK, msg, j.withDet())
}

// routeVia reports whether some route in any table leaves link through gw.
func (f *IntentFacts) routeVia(link int, gw netip.Addr) bool {
	for _, r := range f.Topo.Snap.Routes {
		for _, h := range r.Hops {
			if h.LinkIndex == link && h.Gateway.WithZone("") == gw {
				return true
			}
		}
	}
	return false
}

// judgeResolver compares declared nameservers and search domains with
// what the resolver uses: /etc/resolv.conf and, behind the
// systemd-resolved stub, its upstream list (which holds every link's
// servers and domains).
func judgeResolver(in Intent, f *IntentFacts) []check.Finding {
	var ns []DeclAddr
	var search []DeclString
	ns = append(ns, in.Nameservers...)
	search = append(search, in.Search...)
	for _, d := range in.Ifaces {
		ns = append(ns, d.Nameservers...)
		search = append(search, d.Search...)
	}
	if len(ns) == 0 && len(search) == 0 {
		return nil
	}
	servers := f.Resolver.Servers()
	var used []string
	for _, s := range servers {
		used = append(used, s.Addr.String())
	}
	usedSearch := slices.Clone(f.Resolver.Main.Conf.Search)
	if f.Resolver.Upstream != nil {
		usedSearch = append(usedSearch, f.Resolver.Upstream.Conf.Search...)
	}
	d := map[string]string{"source": in.Source, "resolver_stack": f.Resolver.Describe(),
		"resolver_servers": strings.Join(used, ", "), "resolver_search": strings.Join(usedSearch, " ")}
	var fs []check.Finding
	var missing []string
	seen := map[netip.Addr]bool{}
	for _, a := range ns {
		if seen[a.Addr] {
			continue
		}
		seen[a.Addr] = true
		if !slices.ContainsFunc(servers, func(s netstate.Server) bool { return s.Addr.WithZone("") == a.Addr.WithZone("") }) {
			missing = append(missing, a.Addr.String()+" ("+a.At+")")
		}
	}
	if len(missing) > 0 {
		fix := fixAtSource
		if !f.Resolver.Stub {
			fix = "Make the network service feed the resolver (systemd-resolved, or the resolvconf package for ifupdown's dns-nameservers), or " + strings.ToLower(fixAtSource[:1]) + fixAtSource[1:]
		}
		fs = append(fs, check.New(check.Fail, CodeNCNameserverMissing,
			fmt.Sprintf("declared nameserver %s is not used by the resolver (%s)", strings.Join(missing, ", "), f.Resolver.Describe()), d, fix))
	}
	var smissing []string
	sseen := map[string]bool{}
	for _, s := range search {
		v := strings.TrimSuffix(strings.ToLower(s.Value), ".")
		if sseen[v] {
			continue
		}
		sseen[v] = true
		if !slices.ContainsFunc(usedSearch, func(u string) bool { return strings.TrimSuffix(strings.ToLower(u), ".") == v }) {
			smissing = append(smissing, s.Value+" ("+s.At+")")
		}
	}
	if len(smissing) > 0 {
		fs = append(fs, check.New(check.Warn, CodeNCSearchMissing,
			fmt.Sprintf("declared search domain %s is not in the resolver's search list", strings.Join(smissing, ", ")), d,
			"Short names will not resolve as intended; "+fixAtSource))
	}
	if len(fs) == 0 {
		fs = append(fs, check.Passf(CodeNCNameserversOK, fmt.Sprintf("the resolver uses the %d declared nameserver(s) and %d search domain(s)", len(seen), len(sseen)), d))
	}
	return fs
}

func globalOnly(as []netstate.Addr) []netstate.Addr {
	var out []netstate.Addr
	for _, a := range as {
		if !a.Prefix.Addr().IsLinkLocalUnicast() {
			out = append(out, a)
		}
	}
	return out
}

func prefixList(ps []DeclPrefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.Prefix.String()
	}
	return strings.Join(s, ", ")
}

func linkByName(t *netstate.Topology, name string) (netstate.Link, bool) {
	for _, l := range t.Snap.Links {
		if l.Name == name {
			return l, true
		}
	}
	return netstate.Link{}, false
}

// primaryGateway reports whether g has the lowest declared metric among
// the default gateways of its family (an undeclared metric counts as 0).
func primaryGateway(in Intent, g DeclAddr) bool {
	metric := func(x DeclAddr) int {
		n, _ := strconv.Atoi(x.Metric)
		return n
	}
	for _, d := range in.Ifaces {
		for _, o := range d.Gateways {
			if netstate.FamilyOf(o.Addr) == netstate.FamilyOf(g.Addr) && metric(o) < metric(g) {
				return false
			}
		}
	}
	return true
}
