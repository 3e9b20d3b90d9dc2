package networkconfig

import (
	"fmt"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

func judgeIface(in Intent, d IntentIface, f *IntentFacts, claimed map[int]bool) []runner.Finding {
	j := &ifaceJudge{in: in, d: d, f: f, t: f.Topo, sev: runner.Fail,
		det: map[string]string{"interface": d.Label(), "declared_at": d.At, "source": in.Source}}
	if d.Optional {
		j.sev = runner.Warn // declared optional: boot does not wait for it
	}
	ls := f.matches(d)
	if len(ls) == 0 {
		return []runner.Finding{j.missing(claimed)}
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
	sev runner.Status // Fail, or Warn for an optional interface
	det map[string]string
}

// withDet is the interface's detail plus the key/value pairs given.
func (j *ifaceJudge) withDet(kv ...string) map[string]string { return detailer(j.det)(kv...) }

// missing reports a declaration no live link answers, naming the NICs
// (and the one unconfigured NIC, when there is exactly one).
func (j *ifaceJudge) missing(claimed map[int]bool) runner.Finding {
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
	code := CodeNCInterfaceMissing
	// A VLAN, bond or bridge is created by the network service, so its
	// absence is the service's failure; a missing NIC is a naming one.
	fix := code.CaseFix("for a VLAN, bond or bridge", "interface", d.Label())
	if d.Kind == KindEthernet {
		switch {
		case len(free) == 1:
			n, _ := linkByName(t, free[0])
			msg += fmt.Sprintf("; the VM's unconfigured NIC is %s (%s): use that name", n.Name, n.MAC)
			fix = code.CaseFix("when exactly one NIC is left unconfigured", "nic", n.Name, "mac", n.MAC.String())
		case len(nics) > 0:
			msg += "; the VM's NICs are " + strings.Join(nics, ", ")
			fix = code.Fixf("interface", d.Label(), "nics", strings.Join(nics, ", "))
		default:
			msg += "; the VM has no NIC"
			fix = code.Fixf("interface", d.Label(), "nics", "none")
		}
	}
	dd := j.withDet("nics", strings.Join(nics, "\n"))
	if len(free) > 0 {
		dd["unconfigured_nics"] = strings.Join(free, ", ")
	}
	return code.New(j.sev, msg, dd, fix)
}

// nameAndState reports a rename that did not happen and a link that is
// down.
func (j *ifaceJudge) nameAndState() []runner.Finding {
	d, l := j.d, j.l
	var fs []runner.Finding
	if d.Name != "" && l.Name != d.Name {
		fs = append(fs, CodeNCNameMismatch.New(runner.Warn,
			fmt.Sprintf("%s declared at %s matched %s, but the configuration names it %s: the rename did not happen", d.Kind, d.At, l.Name, d.Name),
			j.withDet(), CodeNCNameMismatch.Fixf("link", l.Name, "name", d.Name)))
	}
	if !l.AdminUp || !l.LowerUp {
		state, fix := "administratively down", CodeNCInterfaceDown.CaseFix("when it is administratively down", "link", l.Name)
		if l.AdminUp {
			state, fix = "up without carrier", CodeNCInterfaceDown.Fixf("link", l.Name)
		}
		fs = append(fs, CodeNCInterfaceDown.New(j.sev, fmt.Sprintf("%s is %s", d.Label(), state),
			j.withDet("admin_up", fmt.Sprint(l.AdminUp), "carrier", fmt.Sprint(l.LowerUp)), fix))
	}
	return fs
}

// addresses reports declared addresses the link does not have.
func (j *ifaceJudge) addresses(have []netstate.Addr) []runner.Finding {
	d, l := j.d, j.l
	var fs []runner.Finding
	var missing, addrs []string
	for _, a := range d.Addresses {
		found := false
		for _, h := range have {
			found = found || h.Prefix == a.Prefix
		}
		if !found {
			missing = append(missing, a.Prefix.String()+" ("+a.At+")")
			addrs = append(addrs, a.Prefix.String())
		}
	}
	if len(missing) > 0 {
		fs = append(fs, CodeNCAddressMissing.New(runner.Fail,
			fmt.Sprintf("%s lacks declared address %s; it has %s", l.Name, strings.Join(missing, ", "), netstate.AddrList(globalOnly(have))),
			j.withDet("declared", prefixList(d.Addresses), "assigned", netstate.AddrList(have)),
			CodeNCAddressMissing.Fixf("link", l.Name, "address", strings.Join(addrs, ", "))))
	}
	return fs
}

// dhcp reports, for a family declared for DHCP, a missing lease, and a
// lease's routers and nameservers that nothing uses.
func (j *ifaceJudge) dhcp(fam netstate.Family, have []netstate.Addr) []runner.Finding {
	d, l, t, f := j.d, j.l, j.t, j.f
	var fs []runner.Finding
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
		fs = append(fs, CodeNCNoLease.New(j.sev,
			fmt.Sprintf("%s is declared for DHCP (%s) but holds no %s lease: no dynamic address", l.Name, fam, fam),
			j.withDet("assigned", netstate.AddrList(have)),
			CodeNCNoLease.Fixf("family", fam.String(), "link", l.Name)))
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
		fs = append(fs, CodeNCLeaseRouterUnused.New(runner.Warn,
			fmt.Sprintf("the DHCP lease on %s offers router %s, but no route uses it", l.Name, strings.Join(unused, ", ")),
			j.withDet("lease", le.File, "routes", t.DescribeRoutes(f.Topo.Defaults(fam))),
			CodeNCLeaseRouterUnused.Fixf("link", l.Name, "routers", strings.Join(unused, ", "))))
	}
	servers := f.Resolver.Servers()
	var dnsUnused []string
	for _, a := range le.DNS {
		if !slices.ContainsFunc(servers, func(s netstate.Server) bool { return s.Addr.WithZone("") == a }) {
			dnsUnused = append(dnsUnused, a.String())
		}
	}
	if len(dnsUnused) > 0 {
		fs = append(fs, CodeNCLeaseDNSUnused.New(runner.Warn,
			fmt.Sprintf("the DHCP lease on %s offers nameserver %s, which the resolver does not use", l.Name, strings.Join(dnsUnused, ", ")),
			j.withDet("lease", le.File, "resolver_stack", f.Resolver.Describe()),
			CodeNCLeaseDNSUnused.Fixf("link", l.Name, "servers", strings.Join(dnsUnused, ", "))))
	}
	return fs
}

// gateways reports a declared gateway that is not the default route.
func (j *ifaceJudge) gateways() []runner.Finding {
	in, d, l, t, f := j.in, j.d, j.l, j.t, j.f
	var fs []runner.Finding
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
		fix := CodeNCGatewayNotDefault.CaseFix("when no default route carries general traffic", "gateway", g.Addr.String(), "link", l.Name)
		if ok {
			desc = "the winning default route is " + t.DescribeRoute(w)
			fix = CodeNCGatewayNotDefault.Fixf("link", l.Name, "gateway", g.Addr.String())
		}
		fs = append(fs, CodeNCGatewayNotDefault.New(runner.Fail,
			fmt.Sprintf("declared gateway %s on %s (%s) is not the default route: %s", g.Addr, l.Name, g.At, desc),
			j.withDet("declared_gateway", g.Addr.String()+" ("+g.At+")", "defaults", t.DescribeRoutes(t.Defaults(fam))), fix))
	}
	return fs
}

// mtu reports an MTU other than the declared one.
func (j *ifaceJudge) mtu() []runner.Finding {
	d, l := j.d, j.l
	var fs []runner.Finding
	if d.MTU != 0 && l.MTU != d.MTU {
		fs = append(fs, CodeNCMTUMismatch.New(runner.Warn,
			fmt.Sprintf("%s has MTU %d, declared %d (%s)", l.Name, l.MTU, d.MTU, d.MTUAt), j.withDet(),
			CodeNCMTUMismatch.Fixf("link", l.Name, "mtu", fmt.Sprint(d.MTU))))
	}
	return fs
}

// vlan reports a VLAN with another ID or parent than declared.
func (j *ifaceJudge) vlan() []runner.Finding {
	in, d, l, t, f := j.in, j.d, j.l, j.t, j.f
	var fs []runner.Finding
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
		fs = append(fs, CodeNCVLANMismatch.New(runner.Fail, l.Name+": "+strings.Join(bad, "; "),
			j.withDet("vlan_id", fmt.Sprint(l.VLANID), "parent", t.Name(l.ParentIndex)),
			CodeNCVLANMismatch.Fixf("link", l.Name)))
	}
	return fs
}

// members reports a bond or bridge whose ports are not the declared
// members.
func (j *ifaceJudge) members() []runner.Finding {
	in, d, l, t, f := j.in, j.d, j.l, j.t, j.f
	var fs []runner.Finding
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
		fs = append(fs, CodeNCMembersMismatch.New(runner.Fail, l.Name+": "+strings.Join(bad, "; "),
			j.withDet("declared_members", strings.Join(d.Members, ", ")+" ("+d.MembersAt+")", "ports", strings.Join(ports, ", ")),
			CodeNCMembersMismatch.Fixf("link", l.Name, "members", strings.Join(d.Members, ", "))))
	}
	return fs
}

// ok is the pass finding of an interface that is as declared.
func (j *ifaceJudge) ok() runner.Finding {
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
	return runner.Passf(CodeNCInterfaceOK.ID, msg, j.withDet())
}
