package netcheck

import (
	"net/netip"
	"path"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fs"
	"github.com/guestcheck/guestcheck/internal/guestfile/eni"
	"github.com/guestcheck/guestcheck/internal/guestfile/envfile"
	"github.com/guestcheck/guestcheck/internal/guestfile/netplan"
	"github.com/guestcheck/guestcheck/internal/guestfile/netval"
)

// Where cloud-init leaves the network configuration it applied, newest
// format first.
var cloudInitNetworkJSON = []string{"/var/lib/cloud/instance/network-config.json", "/run/cloud-init/network-config.json"}

// What cloud-init's renderers write, per network stack.
const (
	ciNetplan  = "/etc/netplan/50-cloud-init.yaml"
	ciENI      = "/etc/network/interfaces.d/50-cloud-init"
	ciENIOld   = "/etc/network/interfaces.d/50-cloud-init.cfg"
	eniMain    = "/etc/network/interfaces"
	ciNMPrefix = "cloud-init-"
	ciNDPrefix = "10-cloud-init-"
)

// IntentRead is the declared configuration and how reading it went.
type IntentRead struct {
	Intent     Intent
	Found      bool     // some configuration was found
	Unreadable []string // files that exist but could not be read
	Consulted  []string // where it looked, for a "none found" finding
}

// ReadIntent finds the network configuration this guest was given:
// cloud-init's network-config.json when cloud-init kept it, else what
// cloud-init rendered for the network stack (netplan, ifupdown,
// NetworkManager, systemd-networkd, ifcfg), else an administrator's own
// netplan, NetworkManager, systemd-networkd or ifupdown configuration.
func ReadIntent(root *fs.Root) IntentRead {
	var r IntentRead
	read := func(p string) ([]byte, bool) { return readOptional(root, p, &r.Unreadable) }
	add := func(in Intent, probs []Problem) {
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

	for _, p := range cloudInitNetworkJSON {
		r.Consulted = append(r.Consulted, root.Display(p))
		b, ok := read(p)
		if !ok {
			continue
		}
		in, probs := ParseNetworkYAML(root.Display(p), b)
		if cloudInitDisabled(b) {
			continue // "config: disabled": cloud-init left the network alone
		}
		if in.Source == "netplan" {
			in.Source = "cloud-init network-config v2"
		}
		r.Intent.Source = in.Source
		add(in, probs)
		return r
	}

	netplans := overlay(root, netplanDirs, func(n string) bool { return strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") })
	nms := overlay(root, nmDirs, func(n string) bool {
		return strings.HasSuffix(n, ".nmconnection") && !strings.HasPrefix(n, "netplan-")
	})
	networks := overlay(root, networkdDirs, func(n string) bool {
		return strings.HasSuffix(n, ".network") && !strings.HasPrefix(n, "10-netplan-")
	})
	var ifcfgs []string
	for _, d := range ifcfgDirs {
		ifcfgs = append(ifcfgs, overlay(root, []string{d}, func(n string) bool { return strings.HasPrefix(n, "ifcfg-") && n != "ifcfg-lo" })...)
	}
	r.Consulted = append(r.Consulted, "netplan ("+strings.Join(netplanDirs, ", ")+")",
		"NetworkManager ("+strings.Join(nmDirs, ", ")+")", "systemd-networkd ("+strings.Join(networkdDirs, ", ")+")",
		"ifupdown ("+eniMain+")", "ifcfg ("+strings.Join(ifcfgDirs, ", ")+")")

	readNetplan := func(source string) {
		var files []netplan.File
		var probs []netval.Problem
		in := Intent{}
		for _, p := range netplans {
			if b, ok := read(p); ok {
				f, fprobs := netplan.Parse(root.Display(p), b)
				files, probs = append(files, f), append(probs, fprobs...)
				in.Files = append(in.Files, f.Name)
			}
		}
		r.Intent.Source = source
		if len(files) > 0 {
			in.Ifaces = netplanIntent(netplan.Merge(files).Devices)
			add(in, fromParser(probs))
		}
	}
	readNM := func(source string, keep func(string) bool) {
		var files []INI
		for _, p := range nms {
			if !keep(path.Base(p)) {
				continue
			}
			if b, ok := read(p); ok {
				f, probs := parseKeyfile(root.Display(p), b)
				r.Intent.Problems = append(r.Intent.Problems, probs...)
				r.Intent.Files = append(r.Intent.Files, root.Display(p))
				files = append(files, f)
			}
		}
		if len(files) == 0 {
			return
		}
		r.Intent.Source = source
		ds, probs := NMIntent(files)
		add(Intent{Ifaces: ds}, probs)
	}
	readNetworkd := func(source string, keep func(string) bool) {
		var files, netdevs []INI
		readUnit := func(p string) (INI, bool) {
			b, ok := read(p)
			if !ok {
				return INI{}, false
			}
			f, probs := parseUnit(root.Display(p), b)
			for _, dp := range overlay(root, []string{p + ".d"}, func(n string) bool { return strings.HasSuffix(n, ".conf") }) {
				if db, ok := read(dp); ok {
					di, dprobs := parseUnit(root.Display(dp), db)
					f.Entries = append(f.Entries, di.Entries...)
					probs = append(probs, dprobs...)
				}
			}
			r.Intent.Problems = append(r.Intent.Problems, probs...)
			r.Intent.Files = append(r.Intent.Files, root.Display(p))
			return f, true
		}
		for _, p := range networks {
			if keep(path.Base(p)) {
				if f, ok := readUnit(p); ok {
					files = append(files, f)
				}
			}
		}
		if len(files) == 0 {
			return
		}
		for _, p := range overlay(root, networkdDirs, func(n string) bool { return strings.HasSuffix(n, ".netdev") && !strings.HasPrefix(n, "10-netplan-") }) {
			if f, ok := readUnit(p); ok {
				netdevs = append(netdevs, f)
			}
		}
		r.Intent.Source = source
		ds, probs := NetworkdIntent(files, netdevs)
		add(Intent{Ifaces: ds}, probs)
	}
	readENI := func(source, first string) {
		files := readENIFiles(root, first, read)
		if len(files) == 0 {
			return
		}
		var parsed []eni.File
		for _, f := range files {
			parsed = append(parsed, f.eni)
			r.Intent.Problems = append(r.Intent.Problems, f.probs...)
			r.Intent.Files = append(r.Intent.Files, f.eni.Name)
		}
		ds, probs := ENIIntent(parsed)
		if len(ds) == 0 && len(probs) == 0 {
			return // only loopback: nothing declared
		}
		r.Intent.Source = source
		add(Intent{Ifaces: ds}, probs)
	}
	readIfcfg := func(source string, keep func([]byte) bool) {
		var ds []IntentIface
		masters := map[string]string{}
		for _, p := range ifcfgs {
			b, ok := read(p)
			if !ok || !keep(b) {
				continue
			}
			vars, probs := parseIfcfg(root.Display(p), b)
			r.Intent.Problems = append(r.Intent.Problems, probs...)
			r.Intent.Files = append(r.Intent.Files, root.Display(p))
			i, iprobs, ok := ifcfgOf(root.Display(p), vars)
			r.Intent.Problems = append(r.Intent.Problems, iprobs...)
			if !ok {
				continue
			}
			d := ifcfgIntent(i)
			if i.Master != "" {
				masters[d.ID] = i.Master
			}
			ds = append(ds, d)
		}
		if len(ds) == 0 {
			return
		}
		ifcfgMembers(ds, masters)
		r.Intent.Source = source
		add(Intent{Ifaces: ds}, nil)
	}

	// What cloud-init rendered.
	for _, p := range netplans {
		if p == ciNetplan {
			readNetplan("netplan, rendered by cloud-init")
			return r
		}
	}
	if root.Exists(ciENI) || root.Exists(ciENIOld) {
		readENI("ifupdown, rendered by cloud-init", eniMain)
		if r.Found {
			return r
		}
	}
	readNM("NetworkManager, rendered by cloud-init", func(n string) bool { return strings.HasPrefix(n, ciNMPrefix) })
	if r.Found {
		return r
	}
	readNetworkd("systemd-networkd, rendered by cloud-init", func(n string) bool { return strings.HasPrefix(n, ciNDPrefix) })
	if r.Found {
		return r
	}
	readIfcfg("ifcfg, rendered by cloud-init", func(b []byte) bool { return strings.Contains(string(b), "Created by cloud-init") })
	if r.Found {
		return r
	}

	// The administrator's own configuration.
	if len(netplans) > 0 {
		readNetplan("netplan (administrator)")
		if r.Found && len(r.Intent.Ifaces) > 0 {
			return r
		}
	}
	readNM("NetworkManager (administrator)", func(string) bool { return true })
	if r.Found {
		return r
	}
	readNetworkd("systemd-networkd (administrator)", func(string) bool { return true })
	if r.Found {
		return r
	}
	readENI("ifupdown (administrator)", eniMain)
	if r.Found {
		return r
	}
	readIfcfg("ifcfg (administrator)", func([]byte) bool { return true })
	return r
}

// cloudInitDisabled reports whether a network-config says
// "config: disabled".
func cloudInitDisabled(b []byte) bool {
	s := strings.Join(strings.Fields(string(b)), "")
	return strings.Contains(s, `"config":"disabled"`) || strings.Contains(s, "config:disabled")
}

type eniFile struct {
	eni   eni.File
	probs []Problem
}

// readENIFiles reads an interfaces(5) file and the files its source and
// source-directory lines pull in, each once, with a bound on depth.
func readENIFiles(root *fs.Root, first string, read func(string) ([]byte, bool)) []eniFile {
	var out []eniFile
	seen := map[string]bool{}
	var visit func(p string, depth int)
	visit = func(p string, depth int) {
		if seen[p] || depth > 8 || len(seen) > 256 {
			return
		}
		seen[p] = true
		b, ok := read(p)
		if !ok {
			return
		}
		f, probs := eni.Parse(root.Display(p), b)
		out = append(out, eniFile{eni: f, probs: fromParser(probs)})
		for _, s := range f.Sources {
			visitGlob(root, eni.Include(p, s), func(e fs.Entry) bool { return !e.IsDir() }, func(q string) { visit(q, depth+1) })
		}
		for _, d := range f.SrcDirs {
			visitGlob(root, eni.Include(p, d), fs.Entry.IsDir, func(dir string) {
				es, err := root.ReadDir(dir)
				if err != nil {
					return
				}
				for _, e := range es {
					if !e.IsDir() && eni.SourceDirName(e.Name) {
						visit(path.Join(dir, e.Name), depth+1)
					}
				}
			})
		}
	}
	visit(first, 0)
	return out
}

// visitGlob calls fn on each path matching pattern whose final entry keep
// accepts, in lexical order; only the last component may hold wildcards
// (what ifupdown's includes use in practice).
func visitGlob(root *fs.Root, pattern string, keep func(fs.Entry) bool, fn func(string)) {
	dir, pat := path.Split(pattern)
	if !strings.ContainsAny(pat, "*?[") {
		fn(pattern)
		return
	}
	es, err := root.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range es {
		if ok, _ := path.Match(pat, e.Name); ok && keep(e) {
			fn(path.Join(dir, e.Name))
		}
	}
}

// Lease is what a DHCP client recorded for one interface.
type Lease struct {
	File    string
	Address netip.Addr
	Routers []netip.Addr
	DNS     []netip.Addr
}

// ParseEnvLease parses systemd-networkd's lease file format
// (/run/systemd/netif/leases/<ifindex>), which NetworkManager's internal
// client also writes: networkd writes and reads it with systemd's env-file
// code (guestfile/envfile's Systemd dialect), lists space-separated.
func ParseEnvLease(name string, b []byte) (Lease, []Problem) {
	vars, probs := envfile.Parse(name, b, envfile.Systemd)
	l := Lease{File: name, Routers: addrWords(vars["ROUTER"].Value), DNS: addrWords(vars["DNS"].Value)}
	l.Address, _ = netip.ParseAddr(vars["ADDRESS"].Value)
	return l, fromParser(probs)
}

func addrWords(s string) []netip.Addr {
	var out []netip.Addr
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == ';' }) {
		if a, err := netip.ParseAddr(w); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// ParseDhclientLeases parses ISC dhclient's lease database and returns
// the last lease recorded for iface (the one in force); ok is false
// when the file holds none for it.
func ParseDhclientLeases(name string, b []byte, iface string) (Lease, bool) {
	var cur, last Lease
	in, ifaceOK, found := false, false, false
	for _, line := range lines(b) {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "lease") && strings.HasSuffix(t, "{"):
			cur, in, ifaceOK = Lease{File: name}, true, false
		case t == "}":
			if in && ifaceOK {
				last, found = cur, true
			}
			in = false
		case in:
			t = strings.TrimSuffix(t, ";")
			w := strings.Fields(t)
			switch {
			case len(w) == 2 && w[0] == "interface":
				ifaceOK = strings.Trim(w[1], `"`) == iface
			case len(w) == 2 && w[0] == "fixed-address":
				cur.Address, _ = netip.ParseAddr(w[1])
			case len(w) >= 3 && w[0] == "option" && w[1] == "routers":
				cur.Routers = addrWords(strings.Join(w[2:], " "))
			case len(w) >= 3 && w[0] == "option" && w[1] == "domain-name-servers":
				cur.DNS = addrWords(strings.Join(w[2:], " "))
			}
		}
	}
	return last, found
}

// readLeases finds the DHCP lease of each link: systemd-networkd's,
// NetworkManager's (internal client or dhclient) and ifupdown's dhclient.
func readLeases(root *fs.Root, links []Link) map[string]Lease {
	out := map[string]Lease{}
	nm, _ := root.ReadDir("/var/lib/NetworkManager")
	for _, l := range links {
		if strings.ContainsAny(l.Name, "/\x00") {
			continue
		}
		p := "/run/systemd/netif/leases/" + strconv.Itoa(l.Index)
		if b, err := root.ReadFile(p); err == nil {
			if le, _ := ParseEnvLease(root.Display(p), b); le.Address.IsValid() {
				out[l.Name] = le
				continue
			}
		}
		for _, e := range nm {
			n := e.Name
			switch {
			case strings.HasPrefix(n, "internal-") && strings.HasSuffix(n, "-"+l.Name+".lease"):
				if b, err := root.ReadFile("/var/lib/NetworkManager/" + n); err == nil {
					if le, _ := ParseEnvLease(root.Display("/var/lib/NetworkManager/"+n), b); le.Address.IsValid() {
						out[l.Name] = le
					}
				}
			case strings.HasPrefix(n, "dhclient-") && strings.HasSuffix(n, "-"+l.Name+".lease"):
				if b, err := root.ReadFile("/var/lib/NetworkManager/" + n); err == nil {
					if le, ok := ParseDhclientLeases(root.Display("/var/lib/NetworkManager/"+n), b, l.Name); ok {
						out[l.Name] = le
					}
				}
			}
		}
		if _, ok := out[l.Name]; ok {
			continue
		}
		for _, p := range []string{"/var/lib/dhcp/dhclient." + l.Name + ".leases", "/var/lib/dhcp/dhclient.leases"} {
			if b, err := root.ReadFile(p); err == nil {
				if le, ok := ParseDhclientLeases(root.Display(p), b, l.Name); ok {
					out[l.Name] = le
					break
				}
			}
		}
	}
	return out
}
