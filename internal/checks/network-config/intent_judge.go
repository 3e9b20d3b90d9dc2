package networkconfig

import (
	"context"
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/netconf"
	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/fact/store"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Check is the network-config check: the network configuration the VM
// was given (cloud-init's network-config, or what it or an administrator
// rendered for netplan, NetworkManager, systemd-networkd, ifupdown or
// ifcfg) against what the interfaces, routes and resolver actually have.
var Check = runner.Check{
	ID:    "network-config",
	Title: "Declared network configuration",
	Description: "every interface the network config declares exists (by name or match), is up and has its " +
		"addresses, lease, default gateway, nameservers, MTU, VLAN ID and members",
	Codes: Codes,
	Run:   RunNetworkConfig,
}

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
func GatherIntentFacts(k netstate.Kernel, s *store.Store, root *fs.Root) (*IntentFacts, error) {
	snap, err := netstate.TakeSnapshot(k)
	if err != nil {
		return nil, err
	}
	netstate.MarkDevices(root, snap.Links)
	f := &IntentFacts{Topo: netstate.NewTopology(snap), Drivers: map[string]string{}, Resolver: netstate.Resolver(s, root)}
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
func RunNetworkConfig(ctx context.Context, env *runner.Env) []runner.Finding {
	r := ReadIntent(env.Root)
	r.IsRoot = env.IsRoot
	fs := JudgeIntentFiles(r)
	if !r.Found {
		return fs
	}
	cons := JudgeIntentConsistency(r.Intent, nil)
	fs = append(fs, cons...)
	if !env.Live {
		if len(cons) == 0 {
			fs = append(fs, runner.Passf(CodeNCConsistent.ID, fmt.Sprintf("%d declared interface(s) from %s: no duplicate address, gateway or match",
				len(r.Intent.Ifaces), r.Intent.Source), intentDetail(r.Intent)))
		}
		return append(fs, runner.Skipf(CodeNCLiveSkipped.ID, "declared configuration not compared with the interfaces: "+env.NotLiveReason(), intentDetail(r.Intent)))
	}
	if ctx.Err() != nil {
		return fs
	}
	k, done, err := netstate.OpenKernel(env.Netlink)
	if err != nil {
		return append(fs, ncKernelError(err))
	}
	defer done()
	return append(fs[:len(fs)-len(cons)], CompareIntent(r, k, env.Facts, env.Root)...)
}

// CompareIntent judges a declared configuration on the running system
// read through k (and root for /sys, resolver and lease files): its
// consistency against the live links, then every declared interface.
// The resolver files are read once per run of s.
func CompareIntent(r IntentRead, k netstate.Kernel, s *store.Store, root *fs.Root) []runner.Finding {
	facts, err := GatherIntentFacts(k, s, root)
	if err != nil {
		return []runner.Finding{ncKernelError(err)}
	}
	// Consistency again, now that the interfaces are known: two
	// declarations may match one NIC by different means.
	fs := JudgeIntentConsistency(r.Intent, facts)
	return append(fs, JudgeIntent(r.Intent, facts)...)
}

func ncKernelError(err error) runner.Finding {
	return CodeNCKernelError.New(runner.Error, "cannot read the network interfaces to compare with the declared configuration",
		map[string]string{"error": err.Error()}, CodeNCKernelError.Fixf())
}

func intentDetail(in Intent) map[string]string {
	d := map[string]string{"source": in.Source, "files": strings.Join(in.Files, "\n")}
	return d
}

// unreadableFix is the fix for network configuration files that could
// not be read: root-only files ask for root only when guestcheck is not
// root already.
func unreadableFix(isRoot bool, files []string) string {
	if isRoot {
		return CodeNCUnreadable.CaseFix(runner.WhenRootDenied, "files", strings.Join(files, ", "))
	}
	return CodeNCUnreadable.Fixf()
}

// JudgeIntentFiles reports a missing configuration, unreadable files and
// parse problems (one finding per file).
func JudgeIntentFiles(r IntentRead) []runner.Finding {
	var fs []runner.Finding
	if len(r.Unreadable) > 0 {
		fs = append(fs, CodeNCUnreadable.New(runner.Error, fmt.Sprintf("cannot read %d network configuration file(s)", len(r.Unreadable)),
			map[string]string{"files": strings.Join(r.Unreadable, "\n")},
			unreadableFix(r.IsRoot, r.Unreadable)))
	}
	if !r.Found {
		if len(r.Unreadable) > 0 {
			return fs
		}
		return append(fs, runner.Skipf(CodeNCNone.ID, "no declared network configuration found (cloud-init, netplan, NetworkManager, systemd-networkd, ifupdown or ifcfg)",
			map[string]string{"consulted": strings.Join(r.Consulted, "\n")}))
	}
	groups, summary := netconf.ProblemsByFile(r.Intent.Problems)
	for i, ps := range groups {
		f, msg := ps[0].File, summary[i]
		fs = append(fs, CodeNCInvalid.New(runner.Warn, msg,
			map[string]string{"file": f, "problems": problem.Join(ps), "source": r.Intent.Source},
			CodeNCInvalid.Fixf("file", f)))
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
func JudgeIntent(in Intent, f *IntentFacts) []runner.Finding {
	var fs []runner.Finding
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
func judgeResolver(in Intent, f *IntentFacts) []runner.Finding {
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
	var fs []runner.Finding
	var missing, missingAddrs []string
	seen := map[netip.Addr]bool{}
	for _, a := range ns {
		if seen[a.Addr] {
			continue
		}
		seen[a.Addr] = true
		if !slices.ContainsFunc(servers, func(s netstate.Server) bool { return s.Addr.WithZone("") == a.Addr.WithZone("") }) {
			missing = append(missing, a.Addr.String()+" ("+a.At+")")
			missingAddrs = append(missingAddrs, a.Addr.String())
		}
	}
	if len(missing) > 0 {
		fix := CodeNCNameserverMissing.Fixf("servers", strings.Join(missingAddrs, ", "))
		if f.Resolver.Stub {
			fix = CodeNCNameserverMissing.CaseFix("behind systemd-resolved", "servers", strings.Join(missingAddrs, ", "))
		}
		fs = append(fs, CodeNCNameserverMissing.New(runner.Fail,
			fmt.Sprintf("declared nameserver %s is not used by the resolver (%s)", strings.Join(missing, ", "), f.Resolver.Describe()), d, fix))
	}
	var smissing, domains []string
	sseen := map[string]bool{}
	for _, s := range search {
		v := strings.TrimSuffix(strings.ToLower(s.Value), ".")
		if sseen[v] {
			continue
		}
		sseen[v] = true
		if !slices.ContainsFunc(usedSearch, func(u string) bool { return strings.TrimSuffix(strings.ToLower(u), ".") == v }) {
			smissing = append(smissing, s.Value+" ("+s.At+")")
			domains = append(domains, s.Value)
		}
	}
	if len(smissing) > 0 {
		fs = append(fs, CodeNCSearchMissing.New(runner.Warn,
			fmt.Sprintf("declared search domain %s is not in the resolver's search list", strings.Join(smissing, ", ")), d,
			CodeNCSearchMissing.Fixf("domains", strings.Join(domains, ", "))))
	}
	if len(fs) == 0 {
		fs = append(fs, runner.Passf(CodeNCNameserversOK.ID, fmt.Sprintf("the resolver uses the %d declared nameserver(s) and %d search domain(s)", len(seen), len(sseen)), d))
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
