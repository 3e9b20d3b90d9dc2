package guestagent

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/systemd"
)

// Finding codes of the qemu-guest-agent check; docs/checks/qemu-guest-agent.md
// explains each.
const (
	CodeNotLive           = "qga-not-live"
	CodeNotVM             = "qga-not-a-vm"
	CodeChannelOK         = "qga-channel-ok"
	CodeChannelMissing    = "qga-channel-missing"
	CodeChannelLink       = "qga-channel-link-missing"
	CodeInstalled         = "qga-installed"
	CodeNotInstalled      = "qga-not-installed"
	CodeNoSystemd         = "qga-no-systemd"
	CodeUnitActive        = "qga-unit-active"
	CodeUnitInactive      = "qga-unit-inactive"
	CodeUnitMasked        = "qga-unit-masked"
	CodeUnitDisabled      = "qga-unit-disabled"
	CodeRestartLoop       = "qga-restart-loop"
	CodeProcessOK         = "qga-process-holds-port"
	CodeProcessMissing    = "qga-process-missing"
	CodeProcessNotOnPort  = "qga-process-not-on-port"
	CodeConfigInvalid     = "qga-config-invalid"
	CodeConfigIgnored     = "qga-config-ignored"
	CodeFilterOK          = "qga-rpc-filter-ok"
	CodeFreezeBlocked     = "qga-freeze-rpc-blocked"
	CodeKubeVirtBlocked   = "qga-kubevirt-rpc-blocked"
	CodeExecBlocked       = "qga-exec-blocked"
	CodeFilterUnknown     = "qga-filter-unknown-rpc"
	CodeNotFrozen         = "qga-not-frozen"
	CodeFrozenMarker      = "qga-frozen-marker"
	CodeFrozenRecent      = "qga-frozen-marker-recent"
	CodeHookOK            = "qga-hook-ok"
	CodeHookMissing       = "qga-hook-missing"
	CodeHookScriptIgnored = "qga-hook-script-ignored"
	CodeHookDisabled      = "qga-hook-disabled-scripts"
	CodeSELinuxOK         = "qga-selinux-ok"
	CodeSELinuxDenied     = "qga-selinux-denied"
	CodeSELinuxConfined   = "qga-selinux-hooks-confined"
	CodeUnreadable        = "qga-state-unreadable"
)

// Codes lists every code Run can emit.
var Codes = []string{CodeNotLive, CodeNotVM, CodeChannelOK, CodeChannelMissing, CodeChannelLink, CodeInstalled,
	CodeNotInstalled, CodeNoSystemd, CodeUnitActive, CodeUnitInactive, CodeUnitMasked, CodeUnitDisabled,
	CodeRestartLoop, CodeProcessOK, CodeProcessMissing, CodeProcessNotOnPort, CodeConfigInvalid, CodeConfigIgnored,
	CodeFilterOK, CodeFreezeBlocked, CodeKubeVirtBlocked, CodeExecBlocked, CodeFilterUnknown, CodeNotFrozen,
	CodeFrozenMarker, CodeFrozenRecent, CodeHookOK, CodeHookMissing, CodeHookScriptIgnored, CodeHookDisabled,
	CodeSELinuxOK, CodeSELinuxDenied, CodeSELinuxConfined, CodeUnreadable}

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
	versionRE     = regexp.MustCompile(`QEMU Guest Agent ([0-9]+\.[0-9]+(?:\.[0-9]+)?)`)
	confdirRE     = regexp.MustCompile(`(/[A-Za-z0-9_./-]+)/qemu-ga\.conf\x00`)
	hypervisorRE  = regexp.MustCompile(`(?m)^flags\s*:.*\bhypervisor\b`)
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
	r := &run{ctx: ctx, env: env}
	r.findBinary()
	if env.Live {
		if !r.channel() {
			return r.out // not a QEMU/KVM guest: nothing else applies
		}
		r.findProcs()
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

// findBinary locates qemu-ga and reads its version and compiled-in
// configuration directory from the binary's own strings, which works on
// image roots and needs no subprocess; dpkg's status file is the fallback.
func (r *run) findBinary() {
	for _, b := range binaries {
		if st, err := r.env.Root.Stat(b); err == nil && st.Mode().IsRegular() {
			r.binary = b
			break
		}
	}
	if r.binary != "" {
		if data, err := r.env.Root.ReadFile(r.binary); err == nil {
			if m := versionRE.FindSubmatch(data); m != nil {
				r.version, _ = ParseVersion(string(m[1]))
				r.verFrom = r.env.Root.Display(r.binary)
			}
			if m := confdirRE.FindSubmatch(data); m != nil {
				r.confdir = string(m[1])
			}
		}
	}
	if !r.version.Known {
		if b, err := r.env.Root.ReadFile("/var/lib/dpkg/status"); err == nil {
			if v, ok := DpkgVersion(b, "qemu-guest-agent"); ok {
				r.version, _ = ParseVersion(v)
				r.verFrom = "/var/lib/dpkg/status"
			}
		}
	}
	if !r.version.Known {
		r.verFrom = "unknown: the newest agent behaviour is assumed"
	}
	if r.confdir == "" {
		r.confdir = "/etc/qemu"
		if b, err := r.env.Root.ReadFile("/etc/os-release"); err == nil {
			s := strings.ToLower(string(b))
			if strings.Contains(s, "rhel") || strings.Contains(s, "fedora") || strings.Contains(s, "centos") {
				r.confdir = "/etc/qemu-kvm"
			}
		}
	}
}

// DpkgVersion returns the upstream part of an installed package's version
// in a dpkg status file ("1:7.2+dfsg-7" gives "7.2").
func DpkgVersion(status []byte, pkg string) (string, bool) {
	for _, para := range strings.Split(string(status), "\n\n") {
		var name, ver, st string
		for _, l := range strings.Split(para, "\n") {
			k, v, ok := strings.Cut(l, ": ")
			if !ok {
				continue
			}
			switch k {
			case "Package":
				name = v
			case "Version":
				ver = v
			case "Status":
				st = v
			}
		}
		if name != pkg || !strings.HasSuffix(st, " installed") {
			continue
		}
		if _, after, ok := strings.Cut(ver, ":"); ok {
			ver = after
		}
		return ver, ver != ""
	}
	return "", false
}

// platform says whether this is a QEMU/KVM guest (KubeVirt, Harvester,
// OpenStack, libvirt), where the host can give it a guest-agent channel, or
// a virtual machine on another hypervisor (Firecracker, Hyper-V, VMware,
// Xen), or no VM at all, and why.
func (r *run) platform() (qemu, vm bool, why string) {
	for _, p := range []string{"/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name"} {
		b, _ := r.env.Root.ReadFile(p)
		s := strings.ToLower(strings.TrimSpace(string(b)))
		for _, k := range []string{"qemu", "kvm", "kubevirt", "openstack", "harvester", "red hat", "bochs"} {
			if strings.Contains(s, k) {
				return true, true, p + " is " + strings.TrimSpace(string(b))
			}
		}
	}
	if b, err := r.env.Root.ReadFile("/proc/cpuinfo"); err == nil && hypervisorRE.Match(b) {
		return false, true, "the CPU has the hypervisor flag, but DMI names no QEMU, KVM, KubeVirt or OpenStack"
	}
	return false, false, "no hypervisor flag and no QEMU/KVM DMI vendor"
}

// channel finds the org.qemu.guest_agent.0 virtio port and its /dev link.
// It returns false when the check does not apply: no port, and not a
// QEMU/KVM guest.
func (r *run) channel() bool {
	ents, _ := r.env.Root.ReadDir("/sys/class/virtio-ports")
	var names []string
	for _, e := range ents {
		b, err := r.env.Root.ReadFile("/sys/class/virtio-ports/" + e.Name() + "/name")
		if err != nil {
			continue
		}
		n := strings.TrimSpace(string(b))
		names = append(names, e.Name()+"="+n)
		if n == PortName && r.port == nil {
			r.port = &port{dev: e.Name()}
		}
	}
	d := map[string]string{"ports": list(names)}
	if r.port == nil {
		qemu, vm, why := r.platform()
		d["platform"] = why
		if !qemu {
			msg := "no virtio guest-agent channel, and this does not look like a virtual machine"
			if vm {
				msg = "no virtio guest-agent channel, and this VM does not run on QEMU/KVM, so none is expected"
			}
			r.add(check.Skipf(CodeNotVM, msg, d))
			return false
		}
		if !r.env.Root.Exists("/sys/module/virtio_console") {
			d["virtio_console"] = "module not loaded"
		}
		r.add(check.New(check.Fail, CodeChannelMissing, "the VM has no org.qemu.guest_agent.0 virtio-serial channel", d,
			crash+"add the channel on the hypervisor: KubeVirt/Harvester add it automatically (restart the VM after an upgrade), OpenStack needs the image property hw_qemu_guest_agent=yes, libvirt needs a <channel type='unix'> with target name org.qemu.guest_agent.0, and the guest needs the virtio_console module"))
		return true
	}
	d["port"] = r.port.dev
	if t, err := r.env.Root.Readlink(DefaultVirtioPath); err == nil {
		r.port.link = t
		d["link"] = DefaultVirtioPath + " -> " + t
		r.add(check.Passf(CodeChannelOK, "the guest-agent virtio channel is present as "+DefaultVirtioPath, d))
		return true
	}
	r.add(check.New(check.Warn, CodeChannelLink, "the guest-agent port "+r.port.dev+" exists but "+DefaultVirtioPath+" is missing", d,
		"the agent opens "+DefaultVirtioPath+" by default and its unit is bound to that device: make sure udev runs with its 50-udev-default.rules (run `udevadm trigger --subsystem-match=virtio-ports`), otherwise snapshots will be crash-consistent"))
	return true
}

// findProcs lists qemu-ga processes from /proc (works without systemd).
func (r *run) findProcs() {
	ents, err := r.env.Root.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		base := "/proc/" + e.Name()
		comm, err := r.env.Root.ReadFile(base + "/comm")
		if err != nil || strings.TrimSpace(string(comm)) != "qemu-ga" {
			continue
		}
		p := proc{pid: pid, env: map[string]string{}}
		if b, err := r.env.Root.ReadFile(base + "/cmdline"); err == nil {
			p.argv = strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		}
		if b, err := r.env.Root.ReadFile(base + "/environ"); err == nil {
			for _, kv := range strings.Split(string(b), "\x00") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					p.env[k] = v
				}
			}
		}
		fds, _ := r.env.Root.ReadDir(base + "/fd")
		for _, fd := range fds {
			if t, err := r.env.Root.Readlink(base + "/fd/" + fd.Name()); err == nil {
				p.fds = append(p.fds, t)
			}
		}
		r.procs = append(r.procs, p)
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
	switch {
	case !u.Found():
		r.add(check.New(check.Fail, CodeUnitInactive, UnitName+" is not installed", d,
			crash+"install the distribution's qemu-guest-agent package, which ships the unit"))
		return
	case u.LoadState == "masked" || u.UnitFileState == "masked":
		r.add(check.New(check.Fail, CodeUnitMasked, UnitName+" is masked", d,
			crash+"run `systemctl unmask "+UnitName+" && systemctl start "+UnitName+"`"))
		return
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
func (r *run) udevStarts() bool {
	for _, d := range []string{"/etc/udev/rules.d", "/usr/lib/udev/rules.d", "/lib/udev/rules.d"} {
		ents, _ := r.env.Root.ReadDir(d)
		for _, e := range ents {
			b, err := r.env.Root.ReadFile(d + "/" + e.Name())
			if err == nil && strings.Contains(string(b), "SYSTEMD_WANTS") && strings.Contains(string(b), UnitName) {
				return true
			}
		}
	}
	return false
}

func (r *run) processFindings() {
	if len(r.procs) == 0 {
		r.add(check.New(check.Fail, CodeProcessMissing, "no qemu-ga process is running", nil,
			crash+"start the agent (`systemctl start "+UnitName+"`); KubeVirt's AgentConnected condition and every quiesced snapshot need it holding the virtio port"))
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
