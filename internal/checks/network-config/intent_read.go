package networkconfig

import (
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/netconf"
	"github.com/guestcheck/guestcheck/internal/parse/eni"
	"github.com/guestcheck/guestcheck/internal/parse/netplan"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// What cloud-init's renderers write, per network stack.
const (
	ciNetplan  = "/etc/netplan/50-cloud-init.yaml"
	ciNMPrefix = "cloud-init-"
	ciNDPrefix = "10-cloud-init-"
)

// IntentRead is the declared configuration and how reading it went.
type IntentRead struct {
	Intent     Intent
	Found      bool     // some configuration was found
	Unreadable []string // files that exist but could not be read
	Consulted  []string // where it looked, for a "none found" finding
	// IsRoot is true when guestcheck runs as root (Env.IsRoot), for the
	// fix of an unreadable file; the caller sets it.
	IsRoot bool
}

// ReadIntent finds the network configuration this guest was given,
// through the one network configuration reader (see IntentOf).
func ReadIntent(root fs.Reader) IntentRead {
	return IntentOf(netconf.ReadFacts(root))
}

// IntentOf takes the configuration this guest was given from its network
// configuration files: cloud-init's network-config.json when cloud-init
// kept it, else what cloud-init rendered for the network stack (netplan,
// ifupdown, NetworkManager, systemd-networkd, ifcfg), else an
// administrator's own netplan, NetworkManager, systemd-networkd or
// ifupdown configuration.
func IntentOf(f netconf.Facts) IntentRead {
	b := &intentBuilder{f: f}
	if b.cloudInitJSON() {
		return b.r
	}
	b.r.Consulted = append(b.r.Consulted, netconf.Places()...)
	if !b.renderedByCloudInit() {
		b.administrators()
	}
	return b.r
}

// intentBuilder gathers an IntentRead from the files, one network stack
// at a time.
type intentBuilder struct {
	f netconf.Facts
	r IntentRead
}

// use notes a file the intent would be read from; false when it could not
// be read.
func (b *intentBuilder) use(r netconf.Read) bool { return r.Use(&b.r.Unreadable) }

// file records a file the intent is read from and its parse problems.
func (b *intentBuilder) file(name string, probs []problem.Problem) {
	b.r.Intent.Problems = append(b.r.Intent.Problems, probs...)
	b.r.Intent.Files = append(b.r.Intent.Files, name)
}

// add folds what one stack declares into the intent: an interface
// declared again (same ID and kind) is merged into the first.
func (b *intentBuilder) add(in Intent, probs []problem.Problem) {
	r := &b.r
	r.Found = true
	r.Intent.Problems = append(r.Intent.Problems, probs...)
	r.Intent.Files = append(r.Intent.Files, in.Files...)
	r.Intent.Nameservers = append(r.Intent.Nameservers, in.Nameservers...)
	r.Intent.Search = append(r.Intent.Search, in.Search...)
	for _, d := range in.Ifaces {
		merged := false
		for i := range r.Intent.Ifaces {
			if r.Intent.Ifaces[i].ID == d.ID && r.Intent.Ifaces[i].Kind == d.Kind {
				mergeIface(&r.Intent.Ifaces[i], d)
				merged = true
			}
		}
		if !merged {
			r.Intent.Ifaces = append(r.Intent.Ifaces, d)
		}
	}
}

// cloudInitJSON takes the network-config cloud-init kept, unless it says
// "config: disabled" (cloud-init left the network alone).
func (b *intentBuilder) cloudInitJSON() bool {
	for _, f := range b.f.CloudInitJSON {
		b.r.Consulted = append(b.r.Consulted, f.Name)
		if !b.use(f.Read) {
			continue
		}
		in, disabled, probs := parseNetworkConfig(f.Name, f.Data)
		if disabled {
			continue
		}
		if in.Source == "netplan" {
			in.Source = "cloud-init network-config v2"
		}
		b.r.Intent.Source = in.Source
		b.add(in, probs)
		return true
	}
	return false
}

// renderedByCloudInit takes what cloud-init rendered for the first
// network stack it rendered for.
func (b *intentBuilder) renderedByCloudInit() bool {
	for _, n := range b.f.Netplan {
		if n.Path == ciNetplan {
			b.netplan("netplan, rendered by cloud-init")
			return true
		}
	}
	if b.f.ENICloudInit {
		b.eni("ifupdown, rendered by cloud-init")
		if b.r.Found {
			return true
		}
	}
	if b.nm("NetworkManager, rendered by cloud-init", prefix(ciNMPrefix)); b.r.Found {
		return true
	}
	if b.networkd("systemd-networkd, rendered by cloud-init", prefix(ciNDPrefix)); b.r.Found {
		return true
	}
	b.ifcfg("ifcfg, rendered by cloud-init", func(f netconf.IfcfgFile) bool { return f.CloudInit })
	return b.r.Found
}

// administrators takes the administrator's own configuration, netplan
// first.
func (b *intentBuilder) administrators() {
	all := func(string) bool { return true }
	if len(b.f.Netplan) > 0 {
		if b.netplan("netplan (administrator)"); b.r.Found && len(b.r.Intent.Ifaces) > 0 {
			return
		}
	}
	if b.nm("NetworkManager (administrator)", all); b.r.Found {
		return
	}
	if b.networkd("systemd-networkd (administrator)", all); b.r.Found {
		return
	}
	if b.eni("ifupdown (administrator)"); b.r.Found {
		return
	}
	b.ifcfg("ifcfg (administrator)", func(netconf.IfcfgFile) bool { return true })
}

func prefix(p string) func(string) bool {
	return func(n string) bool { return strings.HasPrefix(n, p) }
}

// netplan takes every netplan file, merged as netplan merges them.
func (b *intentBuilder) netplan(source string) {
	var files []netplan.File
	var probs []problem.Problem
	in := Intent{}
	for _, n := range b.f.Netplan {
		if b.use(n.Read) {
			files, probs = append(files, n.File), append(probs, n.Problems...)
			in.Files = append(in.Files, n.File.Name)
		}
	}
	b.r.Intent.Source = source
	if len(files) > 0 {
		in.Ifaces = netplanIntent(netplan.Merge(files).Devices)
		b.add(in, probs)
	}
}

// nm takes the NetworkManager keyfiles keep accepts by name, leaving out
// the ones netplan rendered.
func (b *intentBuilder) nm(source string, keep func(string) bool) {
	var files []netconf.INI
	for _, u := range b.f.NM {
		if n := path.Base(u.Path); strings.HasPrefix(n, "netplan-") || !keep(n) {
			continue
		}
		if b.use(u.Read) {
			b.file(u.Name, u.Problems)
			files = append(files, u.INI)
		}
	}
	if len(files) == 0 {
		return
	}
	b.r.Intent.Source = source
	ds, probs := NMIntent(files)
	b.add(Intent{Ifaces: ds}, probs)
}

// networkd takes the .network units keep accepts by name, and every
// .netdev they may refer to.
func (b *intentBuilder) networkd(source string, keep func(string) bool) {
	units := func(suffix string, keep func(string) bool) []netconf.INI {
		var out []netconf.INI
		for _, u := range b.f.Networkd {
			if strings.HasSuffix(u.Path, suffix) && keep(path.Base(u.Path)) && b.use(u.Read) {
				b.file(u.Name, u.Problems)
				out = append(out, u.INI)
			}
		}
		return out
	}
	files := units(".network", keep)
	if len(files) == 0 {
		return
	}
	netdevs := units(".netdev", func(string) bool { return true })
	b.r.Intent.Source = source
	ds, probs := NetworkdIntent(files, netdevs)
	b.add(Intent{Ifaces: ds}, probs)
}

// eni takes /etc/network/interfaces and the files it includes.
func (b *intentBuilder) eni(source string) {
	var parsed []eni.File
	for _, f := range b.f.ENI {
		if b.use(f.Read) {
			parsed = append(parsed, f.File)
			b.file(f.File.Name, f.Problems)
		}
	}
	if len(parsed) == 0 {
		return
	}
	ds, probs := ENIIntent(parsed)
	if len(ds) == 0 && len(probs) == 0 {
		return // only loopback: nothing declared
	}
	b.r.Intent.Source = source
	b.add(Intent{Ifaces: ds}, probs)
}

// ifcfg takes the ifcfg files keep accepts, tying bonds and bridges to
// their members.
func (b *intentBuilder) ifcfg(source string, keep func(netconf.IfcfgFile) bool) {
	var ds []IntentIface
	masters := map[string]string{}
	for _, f := range b.f.Ifcfg {
		if !b.use(f.Read) || !keep(f) {
			continue
		}
		b.file(f.Name, f.Problems)
		b.r.Intent.Problems = append(b.r.Intent.Problems, f.IfaceProblems...)
		if !f.IfaceOK {
			continue
		}
		d := ifcfgIntent(f.Iface)
		if f.Iface.Master != "" {
			masters[d.ID] = f.Iface.Master
		}
		ds = append(ds, d)
	}
	if len(ds) == 0 {
		return
	}
	ifcfgMembers(ds, masters)
	b.r.Intent.Source = source
	b.add(Intent{Ifaces: ds}, nil)
}
