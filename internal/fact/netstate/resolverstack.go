package netstate

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"net/netip"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/store"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Paths of the resolver configuration files.
const (
	ResolvConfPath       = "/etc/resolv.conf"
	ResolvedUpstreamPath = "/run/systemd/resolve/resolv.conf"
)

// IsResolvedStub reports whether a is a systemd-resolved stub listener:
// 127.0.0.53 (the stub) or 127.0.0.54 (its proxy-only twin).
func IsResolvedStub(a netip.Addr) bool {
	return a == netip.AddrFrom4([4]byte{127, 0, 0, 53}) || a == netip.AddrFrom4([4]byte{127, 0, 0, 54})
}

// ResolverFile is one resolv.conf-format file as read from the guest.
type ResolverFile struct {
	Path     string // the name shown to the operator
	Link     string // symlink target as stored, "" for a regular file
	Missing  bool   // absent (or a dangling symlink)
	Err      error  // any other read error
	Conf     ResolvConf
	Problems []problem.Problem
}

// ResolverStack is the guest's resolver configuration: /etc/resolv.conf
// and, when that points at the systemd-resolved stub, the upstream
// servers resolved forwards to.
type ResolverStack struct {
	Main     ResolverFile
	Stub     bool          // Main lists a systemd-resolved stub address
	Upstream *ResolverFile // read only when Stub
}

// Server is one nameserver to probe or route to.
type Server struct {
	Addr netip.Addr
	// Source says where it came from ("/etc/resolv.conf:3").
	Source string
	// Upstream is true for a server systemd-resolved forwards to, as
	// opposed to one applications send queries to.
	Upstream bool
}

// resolverKey keeps a run's resolver stack in its store, per reader.
type resolverKey struct{ r fs.Reader }

// Resolver is ReadResolverStack once per run: dns, routes and
// network-config judge the one stack s keeps for root (read afresh when s
// is nil). The stack is shared and must not be modified.
func Resolver(s *store.Store, root fs.Reader) ResolverStack {
	return store.Memo(context.Background(), s, resolverKey{root}, func(context.Context) ResolverStack {
		return ReadResolverStack(root)
	})
}

// ReadResolverStack reads /etc/resolv.conf through root and, when it
// names the systemd-resolved stub, /run/systemd/resolve/resolv.conf.
func ReadResolverStack(root fs.Reader) ResolverStack {
	st := ResolverStack{Main: readResolverFile(root, ResolvConfPath)}
	for _, ns := range st.Main.Conf.Nameservers {
		if IsResolvedStub(ns.Addr) {
			st.Stub = true
		}
	}
	if st.Stub {
		up := readResolverFile(root, ResolvedUpstreamPath)
		st.Upstream = &up
	}
	return st
}

func readResolverFile(root fs.Reader, p string) ResolverFile {
	f := ResolverFile{Path: root.Display(p)}
	if fi, err := root.Lstat(p); err == nil && fi.Mode()&iofs.ModeSymlink != 0 {
		f.Link, _ = root.Readlink(p)
	}
	b, err := root.ReadFile(p)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		f.Missing = true
		return f
	case err != nil:
		f.Err = err
		return f
	}
	f.Conf, f.Problems = ParseResolvConf(f.Path, b)
	return f
}

// Servers lists every nameserver the guest uses, without duplicates:
// those in /etc/resolv.conf first, then systemd-resolved's upstreams.
func (s ResolverStack) Servers() []Server {
	var out []Server
	seen := map[netip.Addr]bool{}
	add := func(f *ResolverFile, upstream bool) {
		for _, ns := range f.Conf.Nameservers {
			if seen[ns.Addr] {
				continue
			}
			seen[ns.Addr] = true
			out = append(out, Server{Addr: ns.Addr, Source: fmt.Sprintf("%s:%d", f.Path, ns.Line), Upstream: upstream})
		}
	}
	add(&s.Main, false)
	if s.Upstream != nil {
		add(s.Upstream, true)
	}
	return out
}

// Describe renders the stack on one line for a finding's detail, e.g.
// "/etc/resolv.conf -> ../run/systemd/resolve/stub-resolv.conf: 127.0.0.53
// (systemd-resolved stub); upstream /run/systemd/resolve/resolv.conf:
// 192.0.2.53".
func (s ResolverStack) Describe() string {
	var b strings.Builder
	b.WriteString(describeFile(s.Main))
	if s.Stub {
		b.WriteString(" (systemd-resolved stub); upstream ")
		b.WriteString(describeFile(*s.Upstream))
	}
	return b.String()
}

func describeFile(f ResolverFile) string {
	name := f.Path
	if f.Link != "" {
		name += " -> " + f.Link
	}
	switch {
	case f.Missing:
		return name + ": missing"
	case f.Err != nil:
		return name + ": unreadable"
	case len(f.Conf.Nameservers) == 0:
		return name + ": no nameserver"
	}
	addrs := make([]string, len(f.Conf.Nameservers))
	for i, ns := range f.Conf.Nameservers {
		addrs[i] = ns.Addr.String()
	}
	return name + ": " + strings.Join(addrs, ", ")
}
