package qemuguestagent

import (
	"bytes"
	"context"
	"regexp"
	"sync"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Check is what a quiesced KubeVirt, Harvester or OpenStack snapshot
// needs from qemu-guest-agent; docs/checks/qemu-guest-agent.md explains
// each code.
var Check = runner.Check{
	ID:    "qemu-guest-agent",
	Title: "qemu-guest-agent snapshot readiness",
	Description: "the virtio channel, the agent's unit and process, its RPC filter, no leftover frozen marker, " +
		"working freeze hooks and SELinux let the agent quiesce snapshots",
	AlsoReads: []string{"probe"},
	Codes:     Codes,
	Run:       Run,
}

// UnitName is the systemd unit every distribution ships.
const UnitName = "qemu-guest-agent.service"

// FrozenGrace is how long a frozen marker may exist before it is judged
// left over rather than a snapshot in progress (KubeVirt's unfreeze
// timeout is 5 minutes).
const FrozenGrace = 10 * time.Minute

var (
	unitDirs      = []string{"/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"}
	versionRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`QEMU Guest Agent ([0-9]+\.[0-9]+(?:\.[0-9]+)?)`) })
	confdirRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(/[A-Za-z0-9_./-]+)/qemu-ga\.conf\x00`) })
	filterVars    = []string{"BLACKLIST_RPC", "BLOCK_RPCS", "FILTER_RPC_ARGS", "FSFREEZE_HOOK_PATHNAME", "DAEMON_ARGS"}
	hookIgnoreExt = []string{"~", ".bak", ".orig", ".rpmnew", ".rpmorig", ".rpmsave", ".sample", ".dpkg-old", ".dpkg-new",
		".dpkg-tmp", ".dpkg-dist", ".dpkg-bak", ".dpkg-backup", ".dpkg-remove"}
)

// port is the guest-agent virtio port as sysfs describes it.
type port struct {
	dev  string // "vport2p1"
	link string // target of /dev/virtio-ports/org.qemu.guest_agent.0, "" when missing
}

// Run is the qemu-guest-agent check: it gathers the Facts, then judges
// them.
func Run(ctx context.Context, env *runner.Env) []runner.Finding {
	return Judge(Gather(ctx, env))
}

// confLit ends every confdirRE match; the class before it excludes NUL.
const confLit = "/qemu-ga.conf\x00"

// findConfdir is confdirRE's first submatch in a binary. The regexp has
// no literal prefix, so on a whole binary (a megabyte) it costs a scan
// by the regexp engine; here it runs only on the run of path bytes that
// ends at each "/qemu-ga.conf\0", in order. That gives the same leftmost
// match: a match contains its literal, the bytes before it up to its
// start are all in the class, and the class has no NUL, so no match
// reaches back past the previous literal.
func findConfdir(data []byte) (string, bool) {
	off := 0
	for {
		i := bytes.Index(data[off:], []byte(confLit))
		if i < 0 {
			return "", false
		}
		i += off
		start := i
		for start > off && confdirByte(data[start-1]) {
			start--
		}
		if m := confdirRE().FindSubmatch(data[start : i+len(confLit)]); m != nil {
			return string(m[1]), true
		}
		off = i + len(confLit)
	}
}

// confdirByte is confdirRE's class [A-Za-z0-9_./-].
func confdirByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '/' || c == '-'
}
