package runner

import (
	"context"
	"net"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/freeze"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/store"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/shared/config"
)

// Env is everything a check may consult, built once in main (tests build
// their own). There are no package-level globals: a check sees the system
// only through Env.
type Env struct {
	// Root is the guest's "/"; every guest file is read through it.
	Root *fs.Root
	// Live is true when Root is the running system, so that /proc, the
	// kernel, netlink and systemd describe the same guest. Checks that need
	// them report skip when it is false.
	Live bool
	// Systemd answers unit-state questions; its errors wrap
	// systemd.ErrNotRunning when there is no systemd to ask.
	Systemd systemd.Manager
	// Resolver looks names up the way a static Go binary does (pure Go,
	// /etc/hosts then DNS; no NSS modules).
	Resolver Resolver
	// Config is the parsed configuration file (defaults when absent).
	Config *config.Config
	// Now is the clock; tests pin it.
	Now func() time.Time
	// IsRoot is true when running with effective UID 0.
	IsRoot bool
	// Netlink is the handle network checks read links, addresses, routes,
	// rules and neighbours through; nil means the current network
	// namespace. Tests pass a handle bound to a namespace they created.
	Netlink *netlink.Handle
	// InterfaceAddrs lists this machine's interface addresses; nil means
	// net.InterfaceAddrs. Tests of live behaviour pass a fake.
	InterfaceAddrs func() ([]net.Addr, error)
	// Statfs is statfs(2) for the disk checks; nil means unix.Statfs.
	// Tests pass a fake: no real filesystem can be made 95% full on demand.
	Statfs func(path string, buf *unix.Statfs_t) error
	// FreezeTest asks the fs-freeze check to also freeze and thaw one
	// filesystem for real (--freeze-test); nil means no active test.
	FreezeTest *FreezeTest
	// Dialer opens connections for probes (DNS); tests redirect it to
	// servers they run on loopback. nil means a plain net.Dialer.
	Dialer Dialer
	// Facts is the run's store of guest facts: checks pass it to the fact
	// packages' accessors (mounts.Table, netstate.Resolver, ...), which
	// read each fact once per run. Run supplies a fresh store when it is
	// nil; a check called directly with none reads afresh.
	Facts *store.Store
}

// FreezeTest is the --freeze-test request: the mount point to freeze and
// thaw once, and the paths whose filesystem must never be frozen. It is
// freeze.Request, declared beside the freeze code; the name stays here
// for the callers that build an Env.
type FreezeTest = freeze.Request

// Dialer is the subset of *net.Dialer that probes use.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Resolver is the subset of *net.Resolver that checks use.
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
}

// NotLiveReason is the skip message for checks that need the running
// system when --root points elsewhere. It does not name the root: the
// report's header does, once.
func (e *Env) NotLiveReason() string {
	return "needs the running system, but --root is an image root"
}
