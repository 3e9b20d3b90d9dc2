package guestagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/guestfile/dpkgstatus"
	"github.com/guestcheck/guestcheck/internal/guestfile/osrelease"
	"github.com/guestcheck/guestcheck/internal/systemd"
)

// Finding codes of the qemu-guest-agent check, in groups. Each group is a section
// of the Codes in docs/checks/qemu-guest-agent.md; TestCodeGroupsDocumented in
// internal/checks holds the two in step.

// Finding codes: where the check applies.
const (
	CodeNotLive = "qga-not-live"
	CodeNotVM   = "qga-not-a-vm"
)

// Finding codes: the virtio-serial channel.
const (
	CodeChannelOK      = "qga-channel-ok"
	CodeChannelMissing = "qga-channel-missing"
	CodeChannelLink    = "qga-channel-link-missing"
)

// Finding codes: the package.
const (
	CodeInstalled    = "qga-installed"
	CodeNotInstalled = "qga-not-installed"
)

// Finding codes: the unit.
const (
	CodeNoSystemd    = "qga-no-systemd"
	CodeUnitActive   = "qga-unit-active"
	CodeUnitInactive = "qga-unit-inactive"
	CodeUnitWaits    = "qga-unit-waits-for-channel"
	CodeUnitMasked   = "qga-unit-masked"
	CodeUnitDisabled = "qga-unit-disabled"
	CodeRestartLoop  = "qga-restart-loop"
)

// Finding codes: the agent process.
const (
	CodeProcessOK        = "qga-process-holds-port"
	CodeProcessMissing   = "qga-process-missing"
	CodeProcessNotOnPort = "qga-process-not-on-port"
)

// Finding codes: the configuration and its RPC filter.
const (
	CodeConfigInvalid   = "qga-config-invalid"
	CodeConfigIgnored   = "qga-config-ignored"
	CodeFilterOK        = "qga-rpc-filter-ok"
	CodeFreezeBlocked   = "qga-freeze-rpc-blocked"
	CodeKubeVirtBlocked = "qga-kubevirt-rpc-blocked"
	CodeExecBlocked     = "qga-exec-blocked"
	CodeFilterUnknown   = "qga-filter-unknown-rpc"
)

// Finding codes: A freeze left behind.
const (
	CodeNotFrozen    = "qga-not-frozen"
	CodeFrozenMarker = "qga-frozen-marker"
	CodeFrozenRecent = "qga-frozen-marker-recent"
)

// Finding codes: freeze hooks.
const (
	CodeHookOK            = "qga-hook-ok"
	CodeHookMissing       = "qga-hook-missing"
	CodeHookScriptIgnored = "qga-hook-script-ignored"
	CodeHookDisabled      = "qga-hook-disabled-scripts"
)

// Finding codes: SELinux.
const (
	CodeSELinuxOK       = "qga-selinux-ok"
	CodeSELinuxDenied   = "qga-selinux-denied"
	CodeSELinuxConfined = "qga-selinux-hooks-confined"
)

// Finding codes: when the state cannot be read.
const (
	CodeUnreadable = "qga-state-unreadable"
)

// Codes lists every code Run can emit, a line per group.
var Codes = []string{
	CodeNotLive, CodeNotVM,
	CodeChannelOK, CodeChannelMissing, CodeChannelLink,
	CodeInstalled, CodeNotInstalled,
	CodeNoSystemd, CodeUnitActive, CodeUnitInactive, CodeUnitWaits, CodeUnitMasked, CodeUnitDisabled, CodeRestartLoop,
	CodeProcessOK, CodeProcessMissing, CodeProcessNotOnPort,
	CodeConfigInvalid, CodeConfigIgnored, CodeFilterOK, CodeFreezeBlocked, CodeKubeVirtBlocked, CodeExecBlocked, CodeFilterUnknown,
	CodeNotFrozen, CodeFrozenMarker, CodeFrozenRecent,
	CodeHookOK, CodeHookMissing, CodeHookScriptIgnored, CodeHookDisabled,
	CodeSELinuxOK, CodeSELinuxDenied, CodeSELinuxConfined,
	CodeUnreadable,
}

// UnitName is the systemd unit every distribution ships.
const UnitName = "qemu-guest-agent.service"

// crash is the consequence every snapshot-related remediation starts with.
const crash = "Snapshots and backups of this VM will be crash-consistent (or fail to quiesce): "

// FrozenGrace is how long a frozen marker may exist before it is judged
// left over rather than a snapshot in progress (KubeVirt's unfreeze
// timeout is 5 minutes).
const FrozenGrace = 10 * time.Minute

var (
	binaries      = []string{"/usr/bin/qemu-ga", "/usr/sbin/qemu-ga", "/usr/local/bin/qemu-ga", "/usr/libexec/qemu-ga"}
	unitDirs      = []string{"/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"}
	versionRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`QEMU Guest Agent ([0-9]+\.[0-9]+(?:\.[0-9]+)?)`) })
	confdirRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(/[A-Za-z0-9_./-]+)/qemu-ga\.conf\x00`) })
	hypervisorRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^flags\s*:.*\bhypervisor\b`) })
	filterVars    = []string{"BLACKLIST_RPC", "BLOCK_RPCS", "FILTER_RPC_ARGS", "FSFREEZE_HOOK_PATHNAME", "DAEMON_ARGS"}
	hookIgnoreExt = []string{"~", ".bak", ".orig", ".rpmnew", ".rpmorig", ".rpmsave", ".sample", ".dpkg-old", ".dpkg-new",
		".dpkg-tmp", ".dpkg-dist", ".dpkg-bak", ".dpkg-backup", ".dpkg-remove"}
)

// proc is one running qemu-ga.
type proc struct {
	pid  int
	argv []string
	env  map[string]string
	fds  []string
}

// port is the guest-agent virtio port as sysfs describes it.
type port struct {
	dev  string // "vport2p1"
	link string // target of /dev/virtio-ports/org.qemu.guest_agent.0, "" when missing
}

type run struct {
	ctx      context.Context
	env      *check.Env
	out      []check.Finding
	pres     *Presence
	ui       *unitInfo // nil when no unit file was found
	chanBad  int       // index in out of the channel failure, -1 when the channel is usable
	missing  []string  // device units the unit waits for that do not exist, "name (path)"
	waiting  bool      // the unit is down because it waits for a missing device
	binary   string
	version  Version
	verFrom  string
	confdir  string
	port     *port
	procs    []proc
	settings Settings
	setFrom  string
	hookDir  string
	scripts  []string // runnable hook scripts
}

// Run is the qemu-guest-agent check.
func Run(ctx context.Context, env *check.Env) []check.Finding {
	r := &run{ctx: ctx, env: env, chanBad: -1, pres: Probe(env)}
	r.binary, r.procs = r.pres.Binary, r.pres.procs
	if r.pres.Port != "" {
		r.port = &port{dev: r.pres.Port, link: r.pres.Link}
	}
	r.findVersion()
	r.ui = r.readUnit()
	if env.Live {
		if !r.channel() {
			return r.out // not a QEMU/KVM guest: nothing else applies
		}
	} else {
		r.add(check.Skipf(CodeNotLive, "virtio channel, unit and process not checked: "+env.NotLiveReason(), nil))
	}
	if r.binary == "" && len(r.procs) == 0 {
		if env.Live {
			r.add(check.New(check.Fail, CodeNotInstalled, "qemu-guest-agent is not installed",
				map[string]string{"searched": strings.Join(binaries, ",")},
				crash+"install the qemu-guest-agent package in the image (apt/dnf/zypper install qemu-guest-agent) and enable its service"))
		} else {
			r.add(check.Skipf(CodeNotInstalled, "qemu-guest-agent is not installed", map[string]string{"searched": strings.Join(binaries, ",")}))
		}
		return r.out
	}
	if r.binary != "" {
		r.add(check.Passf(CodeInstalled, fmt.Sprintf("qemu-guest-agent %s is installed", r.version),
			map[string]string{"binary": r.env.Root.Display(r.binary), "version": r.version.String(), "version_source": r.verFrom, "confdir": r.confdir}))
	}
	if env.Live {
		r.missing = r.waitsForMissing()
		r.unitState()
		r.processFindings()
	}
	if ctx.Err() != nil {
		return append(r.out, check.Errorf(CodeUnreadable, "the check's deadline passed", nil, "raise checks.qemu-guest-agent.timeout in the config file"))
	}
	r.resolve()
	r.filter()
	r.marker()
	r.hooks()
	r.selinux()
	return r.out
}

func (r *run) add(f ...check.Finding) { r.out = append(r.out, f...) }

// findVersion reads qemu-ga's version and compiled-in configuration
// directory from the binary's own strings, which works on image roots and
// needs no subprocess; dpkg's status file is the fallback.
func (r *run) findVersion() {
	if r.binary != "" {
		if data, err := r.env.Root.ReadFile(r.binary); err == nil {
			if m := versionRE().FindSubmatch(data); m != nil {
				r.version, _ = ParseVersion(string(m[1]))
				r.verFrom = r.env.Root.Display(r.binary)
			}
			if d, ok := findConfdir(data); ok {
				r.confdir = d
			}
		}
	}
	if !r.version.Known {
		if b, err := r.env.Root.ReadFile(dpkgstatus.Path); err == nil {
			// Problems in other stanzas do not hide this one.
			pkgs, _ := dpkgstatus.Parse(b)
			for _, p := range dpkgstatus.Find(pkgs, "qemu-guest-agent") {
				if p.Installed() {
					r.version, _ = ParseVersion(p.Upstream())
					r.verFrom = dpkgstatus.Path
					break
				}
			}
		}
	}
	if !r.version.Known {
		r.verFrom = "unknown: the newest agent behaviour is assumed"
	}
	if r.confdir == "" {
		r.confdir = "/etc/qemu"
		// RHEL and its rebuilds package the agent as qemu-kvm's and read
		// /etc/qemu-kvm; a release that says it is like one does too.
		if rel := r.osRelease(); rel.Like("rhel") || rel.Like("fedora") || rel.Like("centos") {
			r.confdir = "/etc/qemu-kvm"
		}
	}
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

// osRelease reads os-release(5) from its first path that exists; a
// missing or bad file gives what parsed, which may be nothing.
func (r *run) osRelease() osrelease.Release {
	for _, p := range osrelease.Paths {
		if b, err := r.env.Root.ReadFile(p); err == nil {
			rel, _ := osrelease.Parse(b)
			return rel
		}
	}
	return osrelease.Release{}
}

// channel judges the org.qemu.guest_agent.0 virtio port and its /dev link.
// It returns false when the check does not apply: no port, and not a
// QEMU/KVM guest.
func (r *run) channel() bool {
	p := r.pres
	d := map[string]string{"ports": list(p.Ports)}
	if p.Port == "" {
		d["platform"] = p.Platform
		if !p.QEMU {
			msg := "no virtio guest-agent channel, and this does not look like a virtual machine"
			if p.VM {
				msg = "no virtio guest-agent channel, and this VM does not run on QEMU/KVM, so none is expected"
			}
			r.add(check.Skipf(CodeNotVM, msg, d))
			return false
		}
		if !p.VirtioConsole {
			d["virtio_console"] = "module not loaded"
		}
		r.chanBad = len(r.out)
		r.add(check.New(check.Fail, CodeChannelMissing, "the VM has no org.qemu.guest_agent.0 virtio-serial channel", d,
			crash+ChannelFix))
		return true
	}
	d["port"] = p.Port
	if p.Link != "" {
		d["link"] = DefaultVirtioPath + " -> " + p.Link
		r.add(check.Passf(CodeChannelOK, "the guest-agent virtio channel is present as "+DefaultVirtioPath, d))
		return true
	}
	// Without the link the unit (bound to the link's device) never starts:
	// that is a failure unless some agent runs anyway on the raw port.
	st := check.Warn
	if len(r.procs) == 0 {
		st = check.Fail
	}
	r.chanBad = len(r.out)
	r.add(check.New(st, CodeChannelLink, "the guest-agent port "+p.Port+" exists but "+DefaultVirtioPath+" is missing", d,
		"the agent opens "+DefaultVirtioPath+" by default and its unit waits for that device: make sure udev runs with its 50-udev-default.rules (run `udevadm trigger --subsystem-match=virtio-ports`), otherwise snapshots will be crash-consistent"))
	return true
}

// ChannelFix says how to give a VM its guest-agent channel on each
// platform; the fs-freeze check uses it too.
const ChannelFix = "add the virtio-serial channel org.qemu.guest_agent.0 to the VM definition: KubeVirt and Harvester always add it (restart the VM so virt-launcher regenerates the domain), " +
	"libvirt needs <channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel> under <devices>, " +
	"plain QEMU needs -chardev socket,path=/run/qga.sock,server=on,wait=off,id=qga0 -device virtio-serial -device virtserialport,chardev=qga0,name=org.qemu.guest_agent.0, " +
	"OpenStack the image property hw_qemu_guest_agent=yes, Proxmox `qm set VMID --agent enabled=1`; the guest also needs the virtio_console module. " +
	"The agent's unit starts by itself when the channel appears: `systemctl start` cannot help before"

// waitsForMissing lists the device units qemu-guest-agent.service cannot
// run without (Unit.WaitsFor) whose device node does not exist.
func (r *run) waitsForMissing() []string {
	if r.ui == nil {
		return nil
	}
	var out []string
	for _, n := range r.ui.unit.WaitsFor() {
		p, ok := DevicePath(n)
		if !ok {
			continue
		}
		if _, err := r.env.Root.Lstat(p); errors.Is(err, iofs.ErrNotExist) {
			out = append(out, n+" ("+p+")")
		}
	}
	return out
}

// evidence adds the unit's and the agent's state to the channel failure,
// which is their cause.
func (r *run) evidence(k, v string) {
	if r.chanBad >= 0 {
		r.out[r.chanBad].Detail[k] = v
	}
}

func (r *run) unitState() {
	if r.env.Systemd == nil {
		return
	}
	us, err := r.env.Systemd.Units(r.ctx, UnitName)
	if err != nil || len(us) == 0 {
		msg := "systemd is not available; the agent is judged from /proc only"
		if err != nil && !errors.Is(err, systemd.ErrNotRunning) {
			r.add(check.Errorf(CodeUnreadable, "cannot read the state of "+UnitName, map[string]string{"error": err.Error()},
				"check that the system bus or systemd's private socket is reachable (run as root)"))
			return
		}
		r.add(check.Skipf(CodeNoSystemd, msg, map[string]string{"error": fmt.Sprint(err)}))
		return
	}
	u := us[0]
	d := map[string]string{"unit": UnitName, "load_state": u.LoadState, "active_state": u.ActiveState, "sub_state": u.SubState,
		"unit_file_state": u.UnitFileState, "n_restarts": strconv.Itoa(int(u.NRestarts)), "main_pid": strconv.Itoa(int(u.MainPID))}
	state := fmt.Sprintf("%s (%s)", u.ActiveState, u.SubState)
	r.evidence("unit_state", UnitName+" "+state)
	// Without a usable channel qemu-ga exits at once, so starting the unit
	// by hand cannot help: the channel is the fix.
	noChannel := r.chanBad >= 0
	switch {
	case !u.Found():
		r.add(check.New(check.Fail, CodeUnitInactive, UnitName+" is not installed", d,
			crash+"install the distribution's qemu-guest-agent package, which ships the unit"))
		return
	case u.LoadState == "masked" || u.UnitFileState == "masked":
		fix := "run `systemctl unmask " + UnitName + " && systemctl start " + UnitName + "`"
		if noChannel {
			fix = "run `systemctl unmask " + UnitName + "` and fix the guest-agent channel (see " + r.out[r.chanBad].Code + "); the unit starts with the channel"
		}
		r.add(check.New(check.Fail, CodeUnitMasked, UnitName+" is masked", d, crash+fix))
		return
	case u.ActiveState != "active" && noChannel && len(r.missing) > 0:
		r.waiting = true
		d["waits_for"] = strings.Join(r.missing, ",")
		by, ok := r.startedBy(u)
		d["started_by"] = by
		r.evidence("unit_waits_for", d["waits_for"])
		if ok {
			r.add(check.Skipf(CodeUnitWaits, fmt.Sprintf("%s is %s: it waits for the guest-agent channel %s and starts when the channel appears",
				UnitName, state, firstPath(r.missing)), d))
			break
		}
		dev, _, _ := strings.Cut(r.missing[0], " (")
		r.add(check.New(check.Warn, CodeUnitWaits, fmt.Sprintf("%s is %s: it waits for the guest-agent channel %s, but nothing starts it when the channel appears",
			UnitName, state, firstPath(r.missing)), d,
			"have systemd start the agent with its device: `systemctl add-wants '"+dev+"' "+UnitName+"` (or reinstall the package's udev rule); otherwise the agent stays down after the channel is added"))
	case u.ActiveState != "active" && noChannel:
		r.add(check.New(check.Fail, CodeUnitInactive, fmt.Sprintf("%s is %s (%s)", UnitName, u.ActiveState, u.SubState), d,
			crash+"fix the guest-agent channel first (see "+r.out[r.chanBad].Code+"): qemu-ga exits at once without it; then run `systemctl restart "+UnitName+
				"`, since this unit is not bound to the channel's device (no BindsTo=) and does not wait for it"))
	case u.ActiveState != "active":
		r.add(check.New(check.Fail, CodeUnitInactive, fmt.Sprintf("%s is %s (%s)", UnitName, u.ActiveState, u.SubState), d,
			crash+"start it with `systemctl start "+UnitName+"` and read `journalctl -u "+UnitName+"` for why it stopped"))
	default:
		r.add(check.Passf(CodeUnitActive, UnitName+" is active", d))
	}
	if u.UnitFileState == "disabled" && !r.udevStarts() {
		r.add(check.New(check.Warn, CodeUnitDisabled, UnitName+" is disabled and no udev rule starts it", d,
			"run `systemctl enable "+UnitName+"` so the agent starts at every boot; without it the next boot's snapshots are crash-consistent"))
	}
	if u.NRestarts >= 3 {
		r.add(check.New(check.Warn, CodeRestartLoop, fmt.Sprintf("%s has restarted %d times", UnitName, u.NRestarts), d,
			"read `journalctl -u "+UnitName+"` for why the agent exits: while it restarts, a snapshot's freeze request can fail or hit a stale frozen state"))
	}
}

// udevStarts reports whether a udev rule pulls the unit in when the port
// appears, which is how Debian and Ubuntu start the agent (their unit has
// no [Install] section, so "enabled" means nothing there).
func (r *run) udevStarts() bool { return r.udevRule() != "" }

// udevRule returns the udev rule file that starts the unit, "" when none.
func (r *run) udevRule() string {
	for _, d := range []string{"/etc/udev/rules.d", "/usr/lib/udev/rules.d", "/lib/udev/rules.d"} {
		ents, _ := r.env.Root.ReadDir(d)
		for _, e := range ents {
			b, err := r.env.Root.ReadFile(d + "/" + e.Name)
			if err == nil && strings.Contains(string(b), "SYSTEMD_WANTS") && strings.Contains(string(b), UnitName) {
				return d + "/" + e.Name
			}
		}
	}
	return ""
}

// startedBy says what starts the unit once the channel's device appears:
// a udev rule (Debian, Ubuntu) or an enabled WantedBy= on a .device unit
// (RHEL, SUSE).
func (r *run) startedBy(u systemd.UnitState) (string, bool) {
	var by []string
	if rule := r.udevRule(); rule != "" {
		by = append(by, "udev rule "+rule+" (SYSTEMD_WANTS)")
	}
	if r.ui != nil && u.UnitFileState == "enabled" {
		for _, w := range r.ui.unit.WantedBy {
			if strings.HasSuffix(w, ".device") {
				by = append(by, "WantedBy="+w+" (enabled)")
			}
		}
	}
	if len(by) == 0 {
		return "nothing: no udev rule and no enabled WantedBy= on a device", false
	}
	return strings.Join(by, "; "), true
}

// firstPath returns the path of the first "name (path)" entry.
func firstPath(missing []string) string {
	if len(missing) == 0 {
		return ""
	}
	s := missing[0]
	if i := strings.LastIndex(s, " ("); i >= 0 {
		return strings.TrimSuffix(s[i+2:], ")")
	}
	return s
}

func (r *run) processFindings() {
	if len(r.procs) == 0 {
		r.evidence("agent_processes", "none")
		switch {
		case r.waiting:
			// The unit waits for the channel: qga-unit-waits-for-channel
			// already says why nothing runs, and the channel is the fix.
		case r.chanBad >= 0:
			r.add(check.New(check.Fail, CodeProcessMissing, "no qemu-ga process is running", nil,
				crash+"fix the guest-agent channel first (see "+r.out[r.chanBad].Code+"): qemu-ga exits at once without it; then start the agent"))
		default:
			r.add(check.New(check.Fail, CodeProcessMissing, "no qemu-ga process is running", nil,
				crash+"start the agent (`systemctl start "+UnitName+"`); KubeVirt's AgentConnected condition and every quiesced snapshot need it holding the virtio port"))
		}
		return
	}
	var pids []string
	for _, p := range r.procs {
		pids = append(pids, strconv.Itoa(p.pid))
		if r.port == nil {
			continue
		}
		for _, fd := range p.fds {
			if fd == "/dev/"+r.port.dev || (r.port.link != "" && fd == path.Join("/dev/virtio-ports", r.port.link)) {
				r.add(check.Passf(CodeProcessOK, fmt.Sprintf("qemu-ga (pid %d) holds the guest-agent port open", p.pid),
					map[string]string{"pid": strconv.Itoa(p.pid), "device": fd, "cmdline": strings.Join(p.argv, " ")}))
				return
			}
		}
	}
	d := map[string]string{"pids": strings.Join(pids, ","), "cmdline": strings.Join(r.procs[0].argv, " ")}
	if r.port == nil {
		d["port"] = "absent"
	} else {
		d["port"] = "/dev/" + r.port.dev
	}
	r.add(check.New(check.Fail, CodeProcessNotOnPort, "qemu-ga is running but does not hold the guest-agent virtio port", d,
		crash+"run the agent with its default method (virtio-serial on "+DefaultVirtioPath+"): remove -m/-p overrides from its command line and configuration, and restart it"))
}
