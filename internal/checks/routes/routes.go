package routes

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/fact/store"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// RunRoutes is the routes check: on the running system it reads the
// kernel's links, addresses, routes, rules and neighbours through
// env.Netlink and judges them.
func RunRoutes(ctx context.Context, env *runner.Env) []runner.Finding {
	if !env.Live {
		return []runner.Finding{runner.Skipf(codeRoutesNotLive.ID, env.NotLiveReason(), nil)}
	}
	k, done, err := netstate.OpenKernel(env.Netlink)
	if err != nil {
		return []runner.Finding{kernelError(err)}
	}
	defer done()
	return CheckRoutes(ctx, k, env.Facts, env.Root, settings.Of(env.Config))
}

func kernelError(err error) runner.Finding {
	return codeRoutesKernelError.New(runner.Error, "cannot read the kernel's network state",
		map[string]string{"error": err.Error()}, codeRoutesKernelError.Fixf())
}

// CheckRoutes judges the network state read from k. root supplies
// /sys/class/net (NIC detection) and the resolver files (nameserver
// paths), those once per run of s.
func CheckRoutes(ctx context.Context, k netstate.Kernel, s *store.Store, root *fs.Root, cfg Settings) []runner.Finding {
	t, err := GatherTopology(k, root)
	if err != nil {
		return []runner.Finding{kernelError(err)}
	}
	fs, primary := JudgeTopology(t, cfg)
	if ctx.Err() != nil {
		return fs
	}
	probes, bad := pathProbes(ctx, k, netstate.Resolver(s, root), cfg.Targets)
	fs = append(fs, bad...)
	return append(fs, JudgePaths(t, probes, primary)...)
}

// GatherTopology reads the kernel's network state through k, with root's
// /sys/class/net telling NICs from virtual links.
func GatherTopology(k netstate.Kernel, root *fs.Root) (*netstate.Topology, error) {
	snap, err := netstate.TakeSnapshot(k)
	if err != nil {
		return nil, err
	}
	netstate.MarkDevices(root, snap.Links)
	return netstate.NewTopology(snap), nil
}

// JudgeTopology judges links, default routes, gateways and asymmetric
// routing, and returns the interface per family that nameserver paths
// are compared with: the expected one when it is known (after a takeover
// the winner is the wrong reference), else the one that won the default
// route.
func JudgeTopology(t *netstate.Topology, cfg Settings) ([]runner.Finding, map[netstate.Family]*netstate.Link) {
	fs := JudgeLinks(t)
	if exp := ExpectedInterface(t, cfg.DefaultInterface, netstate.IPv4); exp.Missing != "" {
		fs = append(fs, codeRoutesExpectedMissing.New(runner.Fail,
			fmt.Sprintf("routes.default_interface %q matches no interface", exp.Missing),
			map[string]string{"interfaces": t.LinkList()}, codeRoutesExpectedMissing.Fixf("configured", exp.Missing)))
	}
	primary := map[netstate.Family]*netstate.Link{}
	for _, f := range []netstate.Family{netstate.IPv4, netstate.IPv6} {
		// IPv4 is always judged unless the guest is IPv6-only; IPv6 only
		// when the guest has global IPv6 addresses.
		if f == netstate.IPv6 && !t.HasGlobal(netstate.IPv6) || f == netstate.IPv4 && !t.HasGlobal(netstate.IPv4) && t.HasGlobal(netstate.IPv6) {
			continue
		}
		exp := ExpectedInterface(t, cfg.DefaultInterface, f)
		dfs, w := JudgeDefaults(t, f, exp)
		fs = append(fs, dfs...)
		if primary[f] = exp.Link; primary[f] == nil {
			primary[f] = w
		}
	}
	fs = append(fs, JudgeGateways(t)...)
	return append(fs, JudgeAsymmetric(t)...), primary
}

// JudgeLinks checks that every NIC is up with an address.
func JudgeLinks(t *netstate.Topology) []runner.Finding {
	if len(t.NICs) == 0 {
		return []runner.Finding{codeRoutesNoNIC.New(runner.Fail, "no network card found",
			map[string]string{"interfaces": t.LinkList()}, codeRoutesNoNIC.Fixf())}
	}
	var fs []runner.Finding
	detail := map[string]string{}
	withAddr := 0
	for _, n := range t.NICs {
		h := t.Holder(n)
		name := n.Name
		if h.Index != n.Index {
			name += " (via " + h.Name + ")"
		}
		addrs := t.NICAddrs(n)
		if len(addrs) > 0 {
			withAddr++
		}
		state := "up"
		if !n.Up() || !h.Up() {
			state = "down"
		}
		detail["nic_"+snake(n.Name)] = fmt.Sprintf("%s, %s, mac %s, addresses: %s", name, state, n.MAC, netstate.AddrList(addrs))
		d := map[string]string{"interface": n.Name, "holder": h.Name, "admin_up": fmt.Sprint(n.AdminUp && h.AdminUp),
			"carrier": fmt.Sprint(n.LowerUp && h.LowerUp), "mac": n.MAC.String()}
		switch {
		case state == "down":
			fix := codeRoutesNICDown.Fixf("interface", n.Name)
			if h.Index != n.Index && !h.Up() {
				fix = codeRoutesNICDown.CaseFix("when the bridge or bond holding it is down", "holder", h.Name, "interface", n.Name)
			}
			fs = append(fs, codeRoutesNICDown.New(runner.Warn, name+" is down", d, fix))
		case len(addrs) == 0:
			fs = append(fs, codeRoutesNICNoAddress.New(runner.Warn, name+" is up but has no global address", d,
				codeRoutesNICNoAddress.Fixf("interface", n.Name)))
		}
	}
	if withAddr == 0 {
		return append(fs, codeRoutesNoAddress.New(runner.Fail, "no network card has a global address", detail, codeRoutesNoAddress.Fixf()))
	}
	return append(fs, runner.Passf(codeRoutesLinksOK.ID, fmt.Sprintf("%d of %d network card(s) have a global address", withAddr, len(t.NICs)), detail))
}

// Expectation is the interface that must carry the winning default route.
type Expectation struct {
	Link    *netstate.Link // nil when unknown
	From    string         // how it was chosen, for the detail
	Missing string         // routes.default_interface when it matched nothing
}

// ExpectedInterface decides which interface must hold family f's default
// route: routes.default_interface (a name or a MAC address) when
// configured, else the interface holding the first NIC's address, the
// first NIC being the one with the lowest interface index that has a
// global address of family f (PCI order, which on KubeVirt/Harvester is
// the order of the VM's interfaces). Per family, because a management
// network without IPv6 beside a dual-stack VLAN rightly sends IPv6 out of
// the VLAN.
func ExpectedInterface(t *netstate.Topology, configured string, f netstate.Family) Expectation {
	if configured = strings.TrimSpace(configured); configured != "" {
		mac, macErr := net.ParseMAC(configured)
		for _, l := range t.Snap.Links {
			if l.Name == configured || macErr == nil && (netstate.MACEqual(l.MAC, mac) || netstate.MACEqual(l.PermMAC, mac)) {
				h := t.Holder(l)
				from := "config routes.default_interface=" + configured
				if h.Name != configured {
					from += " (" + l.Name + ")"
				}
				if h.Index != l.Index {
					from += ", whose address is held by " + h.Name
				}
				return Expectation{Link: &h, From: from}
			}
		}
		return Expectation{Missing: configured, From: "config routes.default_interface=" + configured + " (no such interface)"}
	}
	for _, n := range t.NICs {
		as := t.FamilyAddrs(n, f)
		if len(as) == 0 {
			continue
		}
		// The holder when it has an address itself, else the first VLAN
		// stacked on the NIC that has one.
		h := t.Holder(n)
		if !slices.ContainsFunc(as, func(a netstate.Addr) bool { return a.LinkIndex == h.Index }) {
			h, _ = t.Link(as[0].LinkIndex)
		}
		from := fmt.Sprintf("first NIC with a global %s address (lowest interface index): %s", f, n.Name)
		if h.Index != n.Index {
			from += ", whose address is held by " + h.Name
		}
		return Expectation{Link: &h, From: from}
	}
	return Expectation{From: fmt.Sprintf("unknown: no NIC has a global %s address", f)}
}

// JudgeDefaults judges the default routes of family f: there must be one,
// the lowest metric must not be shared between interfaces, and it must
// leave through the expected interface. It returns the interface that
// carries general traffic (nil when there is none).
func JudgeDefaults(t *netstate.Topology, f netstate.Family, exp Expectation) ([]runner.Finding, *netstate.Link) {
	all := t.Defaults(f)
	table, ok := t.GeneralTable(f, all)
	var gen, policy []netstate.Route
	for _, r := range all {
		if ok && r.Table == table {
			gen = append(gen, r)
		} else {
			policy = append(policy, r)
		}
	}
	d := map[string]string{"family": f.String(), "expected_interface": "unknown", "expected_from": exp.From}
	if exp.Link != nil {
		d["expected_interface"] = exp.Link.Name
	}
	if len(policy) > 0 {
		d["policy_defaults"] = t.DescribeRoutes(policy)
		var rules []string
		for _, tb := range uniqueTables(policy) {
			rules = append(rules, t.RulesTo(f, tb)...)
		}
		if len(rules) > 0 {
			d["policy_rules"] = strings.Join(rules, "\n")
		}
	}
	if len(all) == 0 {
		return []runner.Finding{codeRoutesNoDefault.New(runner.Fail,
			fmt.Sprintf("no %s default route in any routing table", f), d, codeRoutesNoDefault.Fixf("family", f.String()))}, nil
	}
	if len(gen) == 0 {
		return []runner.Finding{codeRoutesNoDefault.New(runner.Fail,
			fmt.Sprintf("no %s default route for general traffic; only policy tables %s have one", f, tableList(policy)), d,
			codeRoutesNoDefault.CaseFix("when only policy tables have a default route", "family", f.String(), "tables", tableList(policy)))}, nil
	}
	slices.SortStableFunc(gen, func(a, b netstate.Route) int { return a.Metric - b.Metric })
	d["table"] = netstate.TableName(table)
	d["defaults"] = t.DescribeRoutes(gen)
	low := gen[0].Metric
	var tiedLinks []int
	for _, r := range gen {
		if r.Metric != low {
			break
		}
		for _, h := range r.Hops {
			if !slices.Contains(tiedLinks, h.LinkIndex) {
				tiedLinks = append(tiedLinks, h.LinkIndex)
			}
		}
	}
	winIdx := tiedLinks[0]
	if exp.Link != nil && slices.Contains(tiedLinks, exp.Link.Index) {
		winIdx = exp.Link.Index
	}
	win, _ := t.Link(winIdx)
	if len(tiedLinks) > 1 {
		names := make([]string, len(tiedLinks))
		for i, x := range tiedLinks {
			names[i] = t.Name(x)
		}
		return []runner.Finding{codeRoutesDefaultTie.New(runner.Fail,
			fmt.Sprintf("%s default routes share the lowest metric %d on %s: which one wins is arbitrary", f, low, strings.Join(names, " and ")), d,
			codeRoutesDefaultTie.Fixf("interfaces", strings.Join(names, " and ")))}, &win
	}
	if exp.Link != nil && winIdx != exp.Link.Index {
		d["winner"] = t.DescribeRoute(gen[0])
		return []runner.Finding{codeRoutesDefaultTakeover.New(runner.Fail,
			fmt.Sprintf("%s default route leaves through %s (metric %d), not the expected %s", f, win.Name, low, exp.Link.Name), d,
			codeRoutesDefaultTakeover.Fixf("family", f.String(), "expected", exp.Link.Name, "winner", win.Name))}, &win
	}
	if len(gen) > 1 {
		return []runner.Finding{codeRoutesDefaultMultiple.New(runner.Warn,
			fmt.Sprintf("%d %s default routes with different metrics; %s wins", len(gen), f, win.Name), d,
			codeRoutesDefaultMultiple.Fixf("family", f.String(), "winner", win.Name))}, &win
	}
	return []runner.Finding{runner.Passf(codeRoutesDefaultOK.ID,
		fmt.Sprintf("%s default route leaves through %s", f, win.Name)+viaGateway(gen[0]), d)}, &win
}

func viaGateway(r netstate.Route) string {
	if len(r.Hops) > 0 && r.Hops[0].Gateway.IsValid() {
		return " via " + r.Hops[0].Gateway.String()
	}
	return ""
}

func uniqueTables(rs []netstate.Route) []int {
	var out []int
	for _, r := range rs {
		if !slices.Contains(out, r.Table) {
			out = append(out, r.Table)
		}
	}
	return out
}

func tableList(rs []netstate.Route) string {
	var s []string
	for _, tb := range uniqueTables(rs) {
		s = append(s, netstate.TableName(tb))
	}
	return strings.Join(s, ", ")
}

// JudgeGateways checks every default route's gateway: it must be on-link
// for its interface, and its neighbour entry must not be FAILED.
func JudgeGateways(t *netstate.Topology) []runner.Finding {
	var fs []runner.Finding
	type key struct {
		link int
		gw   netip.Addr
	}
	seen := map[key]bool{}
	for _, f := range []netstate.Family{netstate.IPv4, netstate.IPv6} {
		for _, r := range t.Defaults(f) {
			for _, h := range r.Hops {
				k := key{h.LinkIndex, h.Gateway}
				if !h.Gateway.IsValid() || seen[k] {
					continue
				}
				seen[k] = true
				dev := t.Name(h.LinkIndex)
				d := map[string]string{"gateway": h.Gateway.String(), "interface": dev, "route": t.DescribeRoute(r)}
				if !h.OnLink && !h.Gateway.IsLinkLocalUnicast() && !t.OnLink(h.LinkIndex, h.Gateway) {
					od := maps.Clone(d)
					od["interface_addresses"] = netstate.AddrList(t.AddrsOn(h.LinkIndex))
					fs = append(fs, codeRoutesGatewayOffLink.New(runner.Warn,
						fmt.Sprintf("%s gateway %s is not on-link for %s", f, h.Gateway, dev), od,
						codeRoutesGatewayOffLink.Fixf("interface", dev, "gateway", h.Gateway.String())))
				}
				for _, n := range t.Snap.Neighs {
					if n.LinkIndex == h.LinkIndex && n.IP.WithZone("") == h.Gateway.WithZone("") && n.Failed() {
						proto := "ARP"
						if f == netstate.IPv6 {
							proto = "neighbour discovery"
						}
						nd := maps.Clone(d)
						nd["neighbour_state"] = "FAILED"
						fs = append(fs, codeRoutesGatewayNeighFail.New(runner.Warn,
							fmt.Sprintf("%s gateway %s on %s does not answer %s (neighbour entry FAILED)", f, h.Gateway, dev, proto), nd,
							codeRoutesGatewayNeighFail.Fixf("gateway", h.Gateway.String(), "interface", dev, "protocol", proto)))
					}
				}
			}
		}
	}
	return fs
}

// JudgeAsymmetric flags two or more NICs with addresses in one subnet and
// no source-based rules for them (the EC2Rescue asymmetricroute test):
// replies then leave through whichever NIC the main table prefers, and
// reverse-path filters drop them.
func JudgeAsymmetric(t *netstate.Topology) []runner.Finding {
	holders := t.HolderSet()
	groups := map[netip.Prefix][]netstate.Addr{}
	var order []netip.Prefix
	for _, a := range t.Snap.Addrs {
		if !holders[a.LinkIndex] || !a.Global() || a.Secondary || a.Prefix.IsSingleIP() {
			continue
		}
		p := a.Prefix.Masked()
		if _, ok := groups[p]; !ok {
			order = append(order, p)
		}
		groups[p] = append(groups[p], a)
	}
	var fs []runner.Finding
	for _, p := range order {
		as := groups[p]
		var unmatched []int
		var desc []string
		for _, a := range as {
			desc = append(desc, a.Prefix.Addr().String()+" on "+t.Name(a.LinkIndex))
			if !t.HasSourceRule(a.Prefix.Addr()) && !slices.Contains(unmatched, a.LinkIndex) {
				unmatched = append(unmatched, a.LinkIndex)
			}
		}
		if len(unmatched) < 2 {
			continue
		}
		names := make([]string, len(unmatched))
		for i, x := range unmatched {
			names[i] = t.Name(x)
		}
		fs = append(fs, codeRoutesAsymmetric.New(runner.Warn,
			fmt.Sprintf("%s are all in %s without source-based routing rules", strings.Join(names, ", "), p),
			map[string]string{"subnet": p.String(), "addresses": strings.Join(desc, ", ")},
			codeRoutesAsymmetric.Fixf("subnet", p.String())))
	}
	return fs
}

// PathProbe is the kernel's answer to "how would you reach Dst".
type PathProbe struct {
	Dst    netip.Addr
	What   string // "nameserver" or "target"
	Source string // where Dst came from
	Result netstate.PathResult
	Err    error
}

// pathProbes asks the kernel for the route to every nameserver and every
// configured target. Targets that are not IP addresses become findings.
func pathProbes(ctx context.Context, k netstate.Kernel, rs netstate.ResolverStack, targets []string) ([]PathProbe, []runner.Finding) {
	var probes []PathProbe
	var bad []runner.Finding
	for _, s := range rs.Servers() {
		probes = append(probes, PathProbe{Dst: s.Addr, What: "nameserver", Source: s.Source})
	}
	for _, tg := range targets {
		// The loader's rule: a loaded file never gets here with a bad one.
		a, err := target(tg)
		if err != nil {
			bad = append(bad, codeRoutesTargetInvalid.New(runner.Error,
				fmt.Sprintf("routes.targets entry %q is not an IP address", tg), nil,
				codeRoutesTargetInvalid.Fixf("target", tg)))
			continue
		}
		probes = append(probes, PathProbe{Dst: a, What: "target", Source: "config routes.targets"})
	}
	for i := range probes {
		if ctx.Err() != nil {
			return probes[:i], bad
		}
		probes[i].Result, probes[i].Err = k.RouteGet(probes[i].Dst)
	}
	return probes, bad
}

// JudgePaths reports the kernel's route to each probed destination and
// flags nameservers reached through an interface other than primary, the
// interface that should carry the default route of their family.
func JudgePaths(t *netstate.Topology, probes []PathProbe, primary map[netstate.Family]*netstate.Link) []runner.Finding {
	var fs []runner.Finding
	for _, p := range probes {
		d := map[string]string{"destination": p.Dst.String(), "from": p.Source}
		label := p.What + " " + p.Dst.String()
		if p.Err != nil {
			d["error"] = p.Err.Error()
			fs = append(fs, codeRoutesPathUnreachable.New(runner.Warn,
				fmt.Sprintf("the kernel has no route to %s", label), d,
				codeRoutesPathUnreachable.Fixf("destination", p.Dst.String())))
			continue
		}
		r := p.Result
		dev := t.Name(r.LinkIndex)
		d["interface"] = dev
		d["table"] = netstate.TableName(r.Table)
		path := "dev " + dev
		if r.Gateway.IsValid() {
			d["gateway"] = r.Gateway.String()
			path = "via " + r.Gateway.String() + " " + path
		}
		if r.Src.IsValid() {
			d["source"] = r.Src.String()
			path += " src " + r.Src.String()
		}
		if p.Dst.IsLoopback() {
			fs = append(fs, runner.Passf(codeRoutesPath.ID, label+" is a local resolver (loopback)", d))
			continue
		}
		if w := primary[netstate.FamilyOf(p.Dst)]; p.What == "nameserver" && w != nil && r.LinkIndex != w.Index {
			d["default_interface"] = w.Name
			fs = append(fs, codeRoutesNameserverOffPath.New(runner.Warn,
				fmt.Sprintf("%s is reached through %s, not through the default-route interface %s", label, dev, w.Name), d,
				codeRoutesNameserverOffPath.Fixf("default_interface", w.Name, "interface", dev)))
			continue
		}
		fs = append(fs, runner.Passf(codeRoutesPath.ID, label+": "+path, d))
	}
	return fs
}

// snake turns an interface name into a detail-key fragment: lower-case
// letters and digits, other runs of characters as one underscore.
func snake(s string) string {
	var b strings.Builder
	under := false
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(c)
			under = false
			continue
		}
		under = true
	}
	if b.Len() == 0 {
		return "x"
	}
	return b.String()
}
