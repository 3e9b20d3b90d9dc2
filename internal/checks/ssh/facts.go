// Package ssh is the ssh check: sshd installed, enabled, active and
// listening where its configuration says (sockets read from sock_diag or
// /proc/net/tcp* and attributed to their process through /proc/PID/fd),
// host keys that exist, parse, match their public halves, have modes sshd
// accepts and were generated for this instance, and the effective authentication settings
// judged against a baseline that cloud-init's ssh_pwauth can override.
// Gather reads the facts through runner.Env; every Judge function is pure.
package ssh

import (
	"context"
	"errors"
	iofs "io/fs"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/cloudcfg"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/fact/passwords"
	"github.com/guestcheck/guestcheck/internal/fact/procs"
	"github.com/guestcheck/guestcheck/internal/fact/store"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
	"github.com/guestcheck/guestcheck/internal/parse/osrelease"
	"github.com/guestcheck/guestcheck/internal/parse/passwd"
	"github.com/guestcheck/guestcheck/internal/parse/procnet"
	"github.com/guestcheck/guestcheck/internal/parse/sshdconfig"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Guest paths the check reads.
const (
	CloudConfigPath = "/var/lib/cloud/instance/cloud-config.txt"
	groupPath       = "/etc/group"
)

var (
	binaries = []string{"/usr/sbin/sshd", "/usr/bin/sshd", "/usr/local/sbin/sshd"}
	// units are the names distributions give sshd: ssh on Debian and
	// Ubuntu, sshd on RHEL, SUSE and Arch; the sockets are Ubuntu's
	// socket activation (22.10 and later).
	serviceUnits = []string{"ssh.service", "sshd.service"}
	socketUnits  = []string{"ssh.socket", "sshd.socket"}
)

// Facts is everything the ssh check judges.
type Facts struct {
	Live          bool
	NotLiveReason string
	IsRoot        bool
	Display       func(string) string

	// Binary is the sshd found, "" when none.
	Binary string

	// Units holds ssh/sshd .service and .socket states (live only).
	Units    []systemd.UnitState
	UnitsErr error
	// Enablement and EnabledUnit are read from /etc/systemd/system under
	// --root (systemd.Enablement); RootDir is that root on the host, as
	// the fixes name it (systemctl --root=DIR).
	Enablement, EnabledUnit string
	RootDir                 string

	Config sshdconfig.Config

	// Listeners are the listening TCP sockets with their owners (live only).
	Listeners   []Listener
	ListenErr   error
	OwnersKnown bool // every process's fds could be read

	HostKeys        []HostKey
	DefaultHostKeys bool // no HostKey configured: sshd's three defaults

	// RedHat is true on RHEL and its relatives, whose sshd accepts host
	// keys of mode 0640 with group ssh_keys.
	RedHat bool
	OSID   string

	// Instance dates the keys: when this cloud-init instance began.
	Instance identity.CloneEvidence

	PwAuth   PwAuth
	Baseline Accepted
	// Logins are the accounts /etc/shadow opens to a password login: what
	// PasswordAuthentication yes is judged by under the default baseline.
	Logins passwords.Logins

	// Template is sealprep's record of the template's host keys (nil when
	// the image has none, or it does not parse: network-identity reports
	// that).
	Template *sealrecord.Record

	// State is whether the root is a sealed template (decided once, by
	// identity, read with the instance); then KeyFiles (every
	// /etc/ssh/ssh_host_* file) and Regenerator (what generates keys at
	// first boot, "" when nothing does) are what is judged.
	State       identity.TemplateState
	KeyFiles    []string
	Regenerator string
}

// Listener is one listening TCP socket.
type Listener struct {
	Addr  netip.AddrPort
	Inode uint64
	PID   int    // 0 when the owner is unknown
	Comm  string // /proc/PID/comm
	Exe   string // /proc/PID/exe target
}

// Owner names the owning process for messages.
func (l Listener) Owner() string {
	if l.PID == 0 {
		return "unknown"
	}
	return l.Comm + "[" + strconv.Itoa(l.PID) + "]"
}

// HostKey is one configured host key and what was found on disk.
type HostKey struct {
	Path string
	At   string // the HostKey directive, or "default"
	// Err is set when the private key cannot be stat'ed or read; NotExist
	// when it is missing.
	Err      error
	Mode     iofs.FileMode
	UID, GID uint32
	Group    string // name of GID from /etc/group
	ModTime  time.Time

	Type        string // ssh-ed25519, ...
	Fingerprint string // SHA256:..., of the public key derived from the private one
	ParseErr    error

	PubErr         error
	PubFingerprint string
	PubMode        iofs.FileMode
	PubUID         uint32
}

// PwAuth is cloud-init's ssh_pwauth as the instance's cloud-config set it.
type PwAuth struct {
	// Value is nil when ssh_pwauth is absent or "unchanged".
	Value  *bool
	Raw    string
	Source string
	// Err is set when the cloud-config exists but could not be read or
	// parsed; Denied when reading it needs root.
	Err    error
	Denied bool
}

// Gather reads the facts. Live-only facts are left empty under --root.
func Gather(ctx context.Context, env *runner.Env) Facts {
	r := env.Root
	f := Facts{Live: env.Live, IsRoot: env.IsRoot, Display: r.Display}
	if !env.Live {
		f.NotLiveReason = env.NotLiveReason()
	}
	f.Baseline = settings.Of(env.Config).Baseline
	for _, b := range binaries {
		if st, err := r.Stat(b); err == nil && st.Mode().IsRegular() {
			f.Binary = b
			break
		}
	}
	f.Config = sshdconfig.Load(sshdconfig.DefaultPath, identity.SSHDSource(r))
	f.OSID, f.RedHat = osFamily(r)
	f.HostKeys, f.DefaultHostKeys = readHostKeys(r, f.Config)
	f.Instance = identity.ReadCloneEvidence(r, env.Live)
	f.PwAuth = readPwAuth(r)
	f.Logins = passwords.Read(r)
	f.Template = f.Instance.Template
	f.State = f.Instance.State
	if f.State.Is {
		f.KeyFiles = hostKeyFiles(r)
		f.Regenerator = identity.SSHRegenerator(r, cloudGeneratesKeys(r))
	}
	if !env.Live {
		f.RootDir = r.Dir()
		f.Enablement, f.EnabledUnit = systemd.Enablement(r, append(append([]string(nil), serviceUnits...), socketUnits...)...)
		return f
	}
	if env.Systemd != nil {
		f.Units, f.UnitsErr = env.Systemd.Units(ctx, append(append([]string(nil), serviceUnits...), socketUnits...)...)
	} else {
		f.UnitsErr = systemd.ErrNotRunning
	}
	// Only the sockets on sshd's configured endpoints are judged by owner.
	judged := map[netip.AddrPort]bool{}
	for _, e := range Endpoints(f.Config) {
		judged[e.Addr] = true
	}
	f.Listeners, f.OwnersKnown, f.ListenErr = ReadListeners(ctx, env.Facts, r, func(a netip.AddrPort) bool { return judged[a] })
	return f
}

// hostKeyFiles lists every /etc/ssh/ssh_host_* entry: what a template
// must not keep, whatever sshd_config names.
func hostKeyFiles(r *fs.Root) []string {
	var out []string
	ents, _ := r.ReadDir("/etc/ssh")
	for _, e := range ents {
		if strings.HasPrefix(e.Name, "ssh_host_") {
			out = append(out, "/etc/ssh/"+e.Name)
		}
	}
	return out
}

// osFamily returns os-release's ID and whether the release is Red Hat's
// family (ID or ID_LIKE rhel, fedora or centos), from the first
// os-release(5) path that exists.
func osFamily(r *fs.Root) (string, bool) {
	for _, p := range osrelease.Paths {
		b, err := r.ReadFile(p)
		if err != nil {
			continue
		}
		// A bad line does not hide the assignments that parsed.
		rel, _ := osrelease.Parse(b)
		return rel.ID(), rel.Like("rhel") || rel.Like("fedora") || rel.Like("centos")
	}
	return "", false
}

func readHostKeys(r *fs.Root, c sshdconfig.Config) ([]HostKey, bool) {
	var keys []HostKey
	groups := readGroups(r)
	places, def := identity.SSHDHostKeyPlaces(c)
	for _, p := range places {
		keys = append(keys, readHostKey(r, p.Path, p.At, groups))
	}
	return keys, def
}

// readGroups maps GIDs to group names; the first entry for a GID wins, as
// getgrgid(3) returns it.
func readGroups(r *fs.Root) map[uint32]string {
	m := map[uint32]string{}
	b, err := r.ReadFile(groupPath)
	if err != nil {
		return m
	}
	gs, _ := passwd.ParseGroup(groupPath, b)
	for _, g := range gs {
		if _, ok := m[uint32(g.GID)]; !ok {
			m[uint32(g.GID)] = g.Name
		}
	}
	return m
}

// readHostKey describes the host key at p through identity.ReadHostKey,
// the reader sealprep's template record uses too.
func readHostKey(r *fs.Root, p, at string, groups map[uint32]string) HostKey {
	id := identity.ReadHostKey(r, p)
	k := HostKey{Path: p, At: at, Err: id.Err}
	if !id.Described {
		return k
	}
	k.Mode, k.ModTime = id.Entry.Mode(), id.Entry.Mtime
	k.UID, k.GID = id.Entry.UID, id.Entry.GID
	k.Group = groups[k.GID]
	if id.Err != nil {
		return k
	}
	k.Type, k.Fingerprint, k.ParseErr = id.Type, id.Fingerprint, id.ParseErr
	k.PubErr, k.PubFingerprint = id.PubErr, id.PubFingerprint
	if id.PubDescribed {
		k.PubMode, k.PubUID = id.PubEntry.Mode(), id.PubEntry.UID
	}
	return k
}

func readPwAuth(r *fs.Root) PwAuth {
	pa := PwAuth{Source: CloudConfigPath}
	b, err := r.ReadFile(CloudConfigPath)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return pa
	case errors.Is(err, iofs.ErrPermission):
		pa.Denied = true
		return pa
	case err != nil:
		pa.Err = err
		return pa
	}
	pa.Value, pa.Raw, pa.Err = cloudconfig.SSHPwAuth(b)
	return pa
}

// ReadListeners returns the listening TCP sockets (from sock_diag, or
// /proc/net/tcp and tcp6 when that fails) and the process holding each
// socket whose address owned accepts (every socket when owned is nil),
// found among the run's processes (procs.List on facts) by their descriptors
// (procs.SocketOwners), which stops once those owners are found, so
// sockets no verdict looks at cost nothing. ownersKnown is false when some
// process's descriptors could not be read (not root): an unattributed
// socket may then belong to any process.
func ReadListeners(ctx context.Context, facts *store.Store, r *fs.Root, owned func(netip.AddrPort) bool) (ls []Listener, ownersKnown bool, err error) {
	byInode := map[uint64]int{}
	for _, t := range []struct {
		file   string
		family uint8
		v6     bool
	}{{"/proc/net/tcp", unix.AF_INET, false}, {"/proc/net/tcp6", unix.AF_INET6, true}} {
		socks, err := diagListening(ctx, t.family)
		if err != nil {
			b, err := r.ReadFile(t.file)
			if errors.Is(err, iofs.ErrNotExist) && t.v6 {
				continue // IPv6 disabled
			}
			if err != nil {
				return nil, false, err
			}
			if socks, err = procnet.Parse(b, t.v6); err != nil {
				return nil, false, errors.New(t.file + ": " + err.Error())
			}
		}
		for _, s := range socks {
			if !s.Listening() {
				continue
			}
			if owned == nil || owned(s.Local) {
				byInode[s.Inode] = len(ls)
			}
			ls = append(ls, Listener{Addr: s.Local, Inode: s.Inode})
		}
	}
	t := procs.List(ctx, facts, r)
	want := make(map[uint64]bool, len(byInode))
	for ino := range byInode {
		want[ino] = true
	}
	owners, ownersKnown, err := procs.SocketOwners(ctx, r, t, want)
	if err != nil {
		return ls, false, err
	}
	for ino, pid := range owners {
		l := &ls[byInode[ino]]
		l.PID = pid
		if p, ok := t.Find(pid); ok {
			l.Comm, l.Exe = p.Comm, p.Exe
		}
	}
	return ls, ownersKnown, nil
}

// cloudGeneratesKeys reports whether cloud-init is enabled and its ssh
// module generates host keys, from its system configuration as sealprep
// reads it (cloudcfg, then identity.CloudSSH).
func cloudGeneratesKeys(r *fs.Root) bool {
	if !identity.CloudInitEnabled(r) {
		return false
	}
	module, keyTypes := identity.CloudSSH(cloudcfg.Read(r).Merged)
	return module && keyTypes
}
