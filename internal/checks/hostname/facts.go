package hostname

import (
	"context"
	"net"
	"net/netip"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/cloudcfg"
	"github.com/guestcheck/guestcheck/internal/fact/hostnamefile"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/instancedata"
	"github.com/guestcheck/guestcheck/internal/parse/hosts"
	"github.com/guestcheck/guestcheck/internal/parse/nsswitch"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Facts is everything the hostname check judges. Gather reads it once;
// Judge decides from it alone, so the rules are tested on Facts values.
type Facts struct {
	// Live: the root is the running system; NotLive says why not.
	Live    bool
	NotLive string
	// IsRoot: running as UID 0, so cloud-init's root-only files are read.
	IsRoot bool
	// Expected is hostname.expected from the configuration, trimmed.
	Expected string
	// Show names a guest path for the operator; nil shows it as it is.
	Show func(string) string

	// KernelName is the kernel hostname, read on the live system only;
	// KernelErr says why it was not (iofs.ErrNotExist included).
	KernelName string
	KernelErr  error
	// Static is /etc/hostname (or its fallback, where it is missing).
	Static hostnamefile.Static
	// Fallbacks are the other static hostname files that are files of
	// their own (SUSE's /etc/HOSTNAME): a template holds no name there
	// either.
	Fallbacks []hostnamefile.Static

	// SetHostname is what cc_set_hostname last applied.
	SetHostname Input[SetHostname]
	// Instance is the instance data (meta-data's local-hostname).
	Instance Input[*instancedata.Data]
	// System is cloud.cfg with its drop-ins; Layers are the cloud-config
	// sources cloud-init puts over it, lowest first: layerPaths.
	System cloudcfg.System
	Layers []cloudcfg.File

	// Resolution is what resolving the judged name found.
	Resolution Resolution

	// Template is whether the root is a sealed template (decided once,
	// by identity, for every identity check): then no static hostname is
	// the expected state, and the name is not judged or resolved.
	Template identity.TemplateState
}

// Input is one file's parsed value, or why there is none: ReadErr when
// the file could not be read (iofs.ErrNotExist when it is absent),
// ParseErr when its content is not usable.
type Input[T any] struct {
	Value             T
	ReadErr, ParseErr error
}

// layerPaths are the cloud-config layers over the system configuration,
// lowest precedence first. All but the first are written 0600 by
// cloud-init (rootOnly).
var layerPaths = []string{pathRunCloudCfg, pathVendorConfig, pathVendor2Config, pathUserCloudConfig}

// Resolution is what resolving the judged name found, in the order a
// static binary can look: /etc/hosts, then DNS, then what nsswitch.conf
// says glibc programs would do instead.
type Resolution struct {
	// Name is the name looked up; "" when the judged name is not usable
	// and nothing was looked up.
	Name string
	// Hosts is /etc/hosts; its ParseErr is the *hosts.Error of the lines
	// resolvers skip, and Value still holds the good lines.
	Hosts Input[[]hosts.Entry]
	DNS   DNS
	// Local is this machine's interface addresses, listed on the live
	// system once the name resolved.
	Local LocalAddrs
	// NSS is read when neither /etc/hosts nor DNS has the name.
	NSS NSS
}

// DNS is the one lookup through env.Resolver, made when /etc/hosts does
// not have the name.
type DNS struct {
	// Skipped says why DNS was not asked, when it was not.
	Skipped string
	Asked   bool
	Got     []string
	Err     error
	// Interrupted is the context's error when the check's deadline ran out
	// before or during the lookup.
	Interrupted error
}

// LocalAddrs is the machine's interface addresses.
type LocalAddrs struct {
	Listed bool
	Addrs  []net.Addr
	Err    error
}

// NSS is the hosts line of nsswitch.conf and the NSS module in it that
// synthesises the local name.
type NSS struct {
	// Path is the nsswitch.conf read (or that failed to read); ReadErr
	// is why it could not be read, when it exists.
	Path    string
	ReadErr error
	// Sources is the hosts line; Found whether there is one.
	Sources []string
	Found   bool
	// Problems are the file's lines glibc reads otherwise than written
	// (internal/parse/nsswitch), shown when the hosts line is judged.
	Problems []problem.Problem
	// Module is the first of myhostname and resolve in Sources, Lib its
	// installed library as shown ("" when there is none).
	Module, Lib string
}

// Gather reads the facts the check judges. It never fails: what cannot
// be read is recorded for Judge to report. Name resolution runs only for
// a usable name, and DNS only when /etc/hosts does not answer.
func Gather(ctx context.Context, env *runner.Env) Facts {
	f := Facts{Live: env.Live, IsRoot: env.IsRoot, Show: env.Root.Display}
	if !env.Live {
		f.NotLive = env.NotLiveReason()
	}
	f.Expected = ExpectedName(env.Config)
	if env.Live {
		f.KernelName, f.KernelErr = hostnamefile.ReadKernel(env.Root)
	}
	f.Static = hostnamefile.ReadStatic(env.Root)
	f.Fallbacks = hostnamefile.ReadFallbacks(env.Root)

	if b, err := env.Root.ReadFile(pathSetHostname); err != nil {
		f.SetHostname.ReadErr = err
	} else {
		f.SetHostname.Value, f.SetHostname.ParseErr = ParseSetHostname(b)
	}
	f.Instance.Value, f.Instance.ReadErr, f.Instance.ParseErr = instancedata.Read(env.Root)
	f.System = cloudcfg.Read(env.Root)
	for _, p := range layerPaths {
		f.Layers = append(f.Layers, cloudcfg.ReadFile(env.Root, p))
	}

	f.Template = identity.ReadTemplateState(env.Root, env.Live)
	if name := subjectOf(f); usable(name) && !f.Template.Is {
		f.Resolution = gatherResolution(ctx, env, f.NotLive, name)
	}
	return f
}

// subjectOf is the name the check judges: the kernel hostname on the live
// system, else the one in /etc/hostname; "" when neither was read.
func subjectOf(f Facts) string {
	if f.Live && f.KernelErr == nil {
		return f.KernelName
	}
	return f.Static.Name
}

// usable reports whether name can be judged further (resolved): set, not
// a placeholder and valid.
func usable(name string) bool {
	return name != "" && name != "(none)" && !IsLocalhost(name) && validName(name) == nil
}

// gatherResolution resolves name as a static binary can, stopping at the
// first source that answers.
func gatherResolution(ctx context.Context, env *runner.Env, notLive, name string) Resolution {
	r := Resolution{Name: name}
	if b, err := env.Root.ReadFile(pathEtcHosts); err != nil {
		r.Hosts.ReadErr = err
	} else {
		r.Hosts.Value, r.Hosts.ParseErr = hosts.Parse(b)
		if len(hosts.Lookup(r.Hosts.Value, name)) > 0 {
			r.Local = listLocal(env)
			return r
		}
	}
	switch {
	case !env.Live:
		r.DNS.Skipped = "DNS not consulted: " + notLive
	case env.Resolver == nil:
		r.DNS.Skipped = "DNS not consulted: no resolver"
	default:
		if err := ctx.Err(); err != nil {
			r.DNS.Interrupted = err
			return r
		}
		r.DNS.Asked = true
		dctx, cancel := context.WithTimeout(ctx, hostnameDNSTimeout)
		r.DNS.Got, r.DNS.Err = env.Resolver.LookupHost(dctx, name)
		cancel()
		if addrs, _ := dnsAddrs(r.DNS); len(addrs) > 0 {
			r.Local = listLocal(env)
			return r
		}
		if err := ctx.Err(); err != nil {
			r.DNS.Interrupted = err
			return r
		}
	}
	r.NSS = gatherNSS(env)
	return r
}

// dnsAddrs parses a successful lookup's answers; bad are those that are
// not addresses.
func dnsAddrs(d DNS) (addrs []netip.Addr, bad []string) {
	if d.Err != nil {
		return nil, nil
	}
	for _, s := range d.Got {
		if a, err := netip.ParseAddr(s); err == nil {
			addrs = append(addrs, a)
		} else {
			bad = append(bad, s)
		}
	}
	return addrs, bad
}

// listLocal lists the interface addresses on the live system.
func listLocal(env *runner.Env) LocalAddrs {
	if !env.Live {
		return LocalAddrs{}
	}
	list := env.InterfaceAddrs
	if list == nil {
		list = net.InterfaceAddrs
	}
	as, err := list()
	return LocalAddrs{Listed: true, Addrs: as, Err: err}
}

// gatherNSS reads the hosts line of nsswitch.conf (the vendor default
// when /etc has none) and looks for the library of the first module that
// synthesises the local name.
func gatherNSS(env *runner.Env) NSS {
	n := NSS{Path: pathNsswitch}
	b, err := env.Root.ReadFile(pathNsswitch)
	if isNotExist(err) {
		n.Path = pathNsswitchVendor
		b, err = env.Root.ReadFile(pathNsswitchVendor)
	}
	if err != nil {
		if !isNotExist(err) {
			n.ReadErr = err
		}
		return n
	}
	entries, problems := nsswitch.Parse(b)
	n.Sources, n.Found = nsswitch.Lookup(entries, "hosts")
	for _, p := range problems {
		n.Problems = append(n.Problems, p.In(env.Root.Display(n.Path)))
	}
	for _, s := range n.Sources {
		if s == "myhostname" || s == "resolve" {
			n.Module, n.Lib = s, findNSSLib(env, s)
			break
		}
	}
	return n
}

// findNSSLib looks for libnss_<module>.so.2 where glibc's loader finds it:
// the plain library directories and the multiarch ones (Debian).
func findNSSLib(env *runner.Env, module string) string {
	file := "libnss_" + module + ".so.2"
	dirs := []string{"/lib64", "/usr/lib64", "/lib", "/usr/lib"}
	for _, base := range []string{"/usr/lib", "/lib"} {
		ents, err := env.Root.ReadDir(base)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if strings.Contains(e.Name, "-linux-") {
				dirs = append(dirs, path.Join(base, e.Name))
			}
		}
	}
	for _, d := range dirs {
		p := path.Join(d, file)
		if st, err := env.Root.Stat(p); err == nil && !st.IsDir() {
			return env.Root.Display(p)
		}
	}
	return ""
}
