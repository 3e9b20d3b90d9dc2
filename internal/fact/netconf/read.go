package netconf

import (
	"errors"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
	iofs "io/fs"
	"path"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/eni"
	"github.com/guestcheck/guestcheck/internal/parse/ifcfg"
	"github.com/guestcheck/guestcheck/internal/parse/netplan"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/parse/udevrules"
)

// Directories read, in increasing priority: a file in a later directory
// replaces one with the same name in an earlier one. networkd units
// shipped under /usr/lib are left out: they are distribution defaults for
// containers and examples, not this VM's configuration.
var (
	macPins      = catalogue.Lookup(catalogue.MACPins)
	netplanDirs  = macPins.DirPaths(catalogue.StackNetplan)
	networkdDirs = macPins.DirPaths(catalogue.StackNetworkd)
	nmDirs       = macPins.DirPaths(catalogue.StackNM)
	ifcfgDirs    = macPins.DirPaths(catalogue.StackIfcfg)

	// Where cloud-init leaves the network configuration it applied,
	// newest format first.
	cloudInitNetworkJSON = []string{"/var/lib/cloud/instance/network-config.json", "/run/cloud-init/network-config.json"}

	networkdDUID      = catalogue.Lookup(catalogue.NetworkdDUID)
	networkdConfFiles = networkdDUID.FilePaths(catalogue.StackNetworkd)
	networkdConfDDirs = networkdDUID.DirPaths(catalogue.StackNetworkd)

	// ENIMain is ifupdown's interfaces(5) file, where its includes start.
	ENIMain = macPins.FilePaths(catalogue.StackENI)[0]
	// PersistentNetRules is udev's MAC-to-name rules file of old releases.
	PersistentNetRules = catalogue.Lookup(catalogue.UdevPersistentNet).Files()[0]
)

// Single files.
const (
	ciENI    = "/etc/network/interfaces.d/50-cloud-init"
	ciENIOld = "/etc/network/interfaces.d/50-cloud-init.cfg"
	// netplanOutput starts the names of the networkd units netplan
	// renders: they are judged through the netplan files.
	netplanOutput = "10-netplan-"
)

// Places names where ReadFacts looks for each network stack's files, for
// a finding that found none.
func Places() []string {
	return []string{"netplan (" + strings.Join(netplanDirs, ", ") + ")",
		"NetworkManager (" + strings.Join(nmDirs, ", ") + ")", "systemd-networkd (" + strings.Join(networkdDirs, ", ") + ")",
		"ifupdown (" + ENIMain + ")", "ifcfg (" + strings.Join(ifcfgDirs, ", ") + ")"}
}

// Facts is every network configuration file of a guest, read once and
// parsed by the format parsers under internal/parse. network-config
// and network-identity each take what they judge from it, in their own
// order of precedence; a file's Read says whether it could be read, so
// that each reports only the unreadable files it would have used.
type Facts struct {
	CloudInitJSON []Raw         // cloud-init's network-config.json, newest first
	Netplan       []NetplanFile // in netplan's merge order
	NetworkdConf  []Unit        // networkd.conf, then its drop-ins
	// Networkd are the .network, .link and .netdev units (drop-ins
	// appended), by name; netplan's own output is left out.
	Networkd []Unit
	// NetplanRendered says /run/systemd/network holds netplan's output.
	NetplanRendered bool
	NM              []Unit // NetworkManager keyfiles, netplan's included
	Ifcfg           []IfcfgFile
	// ENICloudInit says cloud-init rendered an ifupdown configuration.
	ENICloudInit  bool
	ENI           []ENIFile // ENIMain and what it includes, in reading order
	PersistentNet UdevFile
}

// Read is how reading one file (and its drop-ins) went.
type Read struct {
	Path string // the guest path
	Name string // the name shown to the operator (fs.Reader.Display)
	OK   bool   // the file was read
	// Unreadable holds "name: cause" for the file or drop-ins that exist
	// but could not be read.
	Unreadable []string
}

// Use adds the file's unreadable parts to unreadable and reports whether
// the file was read: what a judge calls for each file it takes.
func (r Read) Use(unreadable *[]string) bool {
	*unreadable = append(*unreadable, r.Unreadable...)
	return r.OK
}

// Raw is a file kept as bytes, for a parser that its reader chooses.
type Raw struct {
	Read
	Data []byte
}

// NetplanFile is one netplan YAML file.
type NetplanFile struct {
	Read
	File     netplan.File
	Problems []problem.Problem
}

// Unit is one file in INI form: a systemd-networkd unit with its drop-ins
// appended, networkd.conf or a NetworkManager keyfile.
type Unit struct {
	Read
	INI      INI
	Problems []problem.Problem
}

// IfcfgFile is one ifcfg file: its variables and the interface they
// declare.
type IfcfgFile struct {
	Read
	// CloudInit says the file carries cloud-init's "Created by
	// cloud-init" banner.
	CloudInit bool
	Vars      map[string]IfcfgVar
	Problems  []problem.Problem // of the variables
	// Iface is what the variables declare; IfaceOK is false for files
	// that declare none (loopback, aliases).
	Iface         ifcfg.Iface
	IfaceProblems []problem.Problem
	IfaceOK       bool
}

// ENIFile is one interfaces(5) file.
type ENIFile struct {
	Read
	File     eni.File
	Problems []problem.Problem
}

// UdevFile is the persistent-net rules file.
type UdevFile struct {
	Read
	Rules    []udevrules.Rule
	Problems []problem.Problem
}

// ReadFacts reads every network configuration file below root.
func ReadFacts(root fs.Reader) Facts {
	rd := reader{root}
	var f Facts
	for _, p := range cloudInitNetworkJSON {
		r, b := rd.read(p)
		f.CloudInitJSON = append(f.CloudInitJSON, Raw{Read: r, Data: b})
	}
	for _, p := range rd.overlay(netplanDirs, yamlName) {
		f.Netplan = append(f.Netplan, rd.netplan(p))
	}
	// The highest-priority networkd.conf replaces the others, as systemd
	// reads it; the drop-ins then apply in name order.
	var confDirs []string
	for _, p := range networkdConfFiles {
		confDirs = append(confDirs, path.Dir(p))
	}
	conf := rd.overlay(confDirs, func(n string) bool { return n == "networkd.conf" })
	for _, p := range append(conf, rd.overlay(networkdConfDDirs, confName)...) {
		f.NetworkdConf = append(f.NetworkdConf, rd.unit(p, ParseUnit, false))
	}
	for _, p := range rd.overlay(networkdDirs, networkdName) {
		if strings.HasPrefix(path.Base(p), netplanOutput) {
			f.NetplanRendered = f.NetplanRendered || !strings.HasSuffix(p, ".netdev")
			continue
		}
		f.Networkd = append(f.Networkd, rd.unit(p, ParseUnit, true))
	}
	for _, p := range rd.overlay(nmDirs, func(n string) bool { return strings.HasSuffix(n, ".nmconnection") }) {
		f.NM = append(f.NM, rd.unit(p, ParseKeyfile, false))
	}
	for _, d := range ifcfgDirs {
		for _, p := range rd.overlay([]string{d}, func(n string) bool { return strings.HasPrefix(n, "ifcfg-") && n != "ifcfg-lo" }) {
			f.Ifcfg = append(f.Ifcfg, rd.ifcfg(p))
		}
	}
	f.ENICloudInit = rd.exists(ciENI) || rd.exists(ciENIOld)
	f.ENI = rd.eniFiles(ENIMain)
	f.PersistentNet = rd.udev(PersistentNetRules)
	return f
}

func yamlName(n string) bool { return strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") }
func confName(n string) bool { return strings.HasSuffix(n, ".conf") }
func networkdName(n string) bool {
	return strings.HasSuffix(n, ".network") || strings.HasSuffix(n, ".link") || strings.HasSuffix(n, ".netdev")
}

// reader reads the files of one root.
type reader struct{ root fs.Reader }

// read reads p; a missing file is not there, any other error is recorded
// in the Read (shown to the operator) and the file counts as not there.
func (rd reader) read(p string) (Read, []byte) {
	r := Read{Path: p, Name: rd.root.Display(p)}
	b, err := rd.root.ReadFile(p)
	switch {
	case err == nil:
		r.OK = true
	case !errors.Is(err, iofs.ErrNotExist):
		r.Unreadable = []string{r.Name + ": " + errText(err)}
	}
	return r, b
}

// exists reports whether p exists (following symlinks); errors other than
// "not found" count as existing, as fs.Root.Exists has it.
func (rd reader) exists(p string) bool {
	_, err := rd.root.Stat(p)
	return err == nil || !errors.Is(err, iofs.ErrNotExist)
}

func (rd reader) netplan(p string) NetplanFile {
	r, b := rd.read(p)
	f := NetplanFile{Read: r}
	if r.OK {
		file, probs := netplan.Parse(r.Name, b)
		f.File, f.Problems = file, FromParser(probs)
	}
	return f
}

// unit reads an INI-form file with parse; with dropins, the .conf files
// of its ".d" directory are appended to it, as systemd does.
func (rd reader) unit(p string, parse func(string, []byte) (INI, []problem.Problem), dropins bool) Unit {
	r, b := rd.read(p)
	u := Unit{Read: r}
	if !r.OK {
		return u
	}
	u.INI, u.Problems = parse(r.Name, b)
	if !dropins {
		return u
	}
	for _, dp := range rd.overlay([]string{p + ".d"}, confName) {
		dr, db := rd.read(dp)
		u.Unreadable = append(u.Unreadable, dr.Unreadable...)
		if dr.OK {
			di, dprobs := parse(dr.Name, db)
			u.INI.Entries = append(u.INI.Entries, di.Entries...)
			u.Problems = append(u.Problems, dprobs...)
		}
	}
	return u
}

func (rd reader) ifcfg(p string) IfcfgFile {
	r, b := rd.read(p)
	f := IfcfgFile{Read: r}
	if r.OK {
		f.CloudInit = strings.Contains(string(b), "Created by cloud-init")
		f.Vars, f.Problems = ParseIfcfg(r.Name, b)
		f.Iface, f.IfaceProblems, f.IfaceOK = IfcfgOf(r.Name, f.Vars)
	}
	return f
}

func (rd reader) udev(p string) UdevFile {
	r, b := rd.read(p)
	f := UdevFile{Read: r}
	if r.OK {
		rules, probs := udevrules.Parse(r.Name, b)
		f.Rules, f.Problems = rules, FromParser(probs)
	}
	return f
}

// eniFiles reads an interfaces(5) file and the files its source and
// source-directory lines pull in, each once, with a bound on depth.
func (rd reader) eniFiles(first string) []ENIFile {
	var out []ENIFile
	seen := map[string]bool{}
	var visit func(p string, depth int)
	visit = func(p string, depth int) {
		if seen[p] || depth > 8 || len(seen) > 256 {
			return
		}
		seen[p] = true
		r, b := rd.read(p)
		out = append(out, ENIFile{Read: r})
		if !r.OK {
			return
		}
		f, probs := eni.Parse(r.Name, b)
		out[len(out)-1].File, out[len(out)-1].Problems = f, FromParser(probs)
		for _, s := range f.Sources {
			rd.visitGlob(eni.Include(p, s), func(e fs.Entry) bool { return !e.IsDir() }, func(q string) { visit(q, depth+1) })
		}
		for _, d := range f.SrcDirs {
			rd.visitGlob(eni.Include(p, d), fs.Entry.IsDir, func(dir string) {
				es, err := rd.root.ReadDir(dir)
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
func (rd reader) visitGlob(pattern string, keep func(fs.Entry) bool, fn func(string)) {
	dir, pat := path.Split(pattern)
	if !strings.ContainsAny(pat, "*?[") {
		fn(pattern)
		return
	}
	es, err := rd.root.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range es {
		if ok, _ := path.Match(pat, e.Name); ok && keep(e) {
			fn(path.Join(dir, e.Name))
		}
	}
}

// overlay lists the regular files accepted by keep in dirs, where a file
// in a later directory replaces the same name in an earlier one, sorted by
// base name (the order netplan and systemd apply them in).
func (rd reader) overlay(dirs []string, keep func(string) bool) []string {
	byName := map[string]string{}
	for _, d := range dirs {
		es, err := rd.root.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range es {
			if keep(e.Name) && !e.IsDir() {
				byName[e.Name] = path.Join(d, e.Name)
			}
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = byName[n]
	}
	return out
}

// errText keeps the cause of a file error without repeating the path.
func errText(err error) string {
	var pe *iofs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
