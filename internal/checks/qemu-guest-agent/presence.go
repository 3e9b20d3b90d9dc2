package guestagent

import (
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Presence is what decides whether a qemu-ga can serve the host at all:
// the installed binary, the running agents, the guest-agent virtio port
// and the platform. The qemu-guest-agent and fs-freeze checks both judge
// it, so it is probed once per run (Probe) and never modified afterwards.
// Ports and processes exist only on the running system: under --root they
// stay empty.
type Presence struct {
	// Live is true when the port, processes and platform were looked at.
	Live bool
	// Binary is the first qemu-ga found in the usual places, "" when none.
	Binary string
	// Port is the sysfs name of the org.qemu.guest_agent.0 port
	// ("vport2p1"), "" when the VM has no guest-agent channel.
	Port string
	// Link is the target of DefaultVirtioPath, "" when it is missing.
	Link string
	// Ports lists every virtio port as dev=name, the evidence when the
	// guest-agent one is missing.
	Ports []string
	// QEMU is true on a QEMU/KVM guest, where a channel can exist; VM is
	// true on any virtual machine. Platform says how that was decided.
	// They are judged only when the port is missing.
	QEMU, VM bool
	Platform string
	// VirtioConsole is false when the virtio_console module is not loaded.
	VirtioConsole bool

	procs []proc
}

// Installed reports whether an agent is installed or running.
func (p *Presence) Installed() bool { return p.Binary != "" || len(p.procs) > 0 }

// PIDs returns the running qemu-ga processes.
func (p *Presence) PIDs() []int {
	var out []int
	for _, pr := range p.procs {
		out = append(out, pr.pid)
	}
	return out
}

// port returns the guest-agent port, nil when the VM has none.
func (p *Presence) port() *port {
	if p.Port == "" {
		return nil
	}
	return &port{dev: p.Port, link: p.Link}
}

type presenceKey struct{}

// Probe returns env's Presence, probed once per run.
func Probe(env *runner.Env) *Presence {
	return runner.Shared(env, presenceKey{}, func() *Presence { return probe(env) })
}

func probe(env *runner.Env) *Presence {
	p := &Presence{Live: env.Live}
	for _, b := range binaries {
		if st, err := env.Root.Stat(b); err == nil && st.Mode().IsRegular() {
			p.Binary = b
			break
		}
	}
	if !env.Live {
		return p
	}
	names, _ := env.Root.ReadDirNames("/sys/class/virtio-ports")
	for _, name := range names {
		b, err := env.Root.ReadFile("/sys/class/virtio-ports/" + name + "/name")
		if err != nil {
			continue
		}
		n := strings.TrimSpace(string(b))
		p.Ports = append(p.Ports, name+"="+n)
		if n == PortName && p.Port == "" {
			p.Port = name
		}
	}
	p.VirtioConsole = env.Root.Exists("/sys/module/virtio_console")
	if p.Port != "" {
		p.QEMU, p.VM, p.Platform = true, true, "the guest-agent port exists"
		if t, err := env.Root.Readlink(DefaultVirtioPath); err == nil {
			p.Link = t
		}
	} else {
		p.QEMU, p.VM, p.Platform = platform(env)
	}
	p.procs = findProcs(env)
	return p
}

// platform says whether this is a QEMU/KVM guest (KubeVirt, Harvester,
// OpenStack, libvirt), where the host can give it a guest-agent channel, or
// a virtual machine on another hypervisor (Firecracker, Hyper-V, VMware,
// Xen), or no VM at all, and why.
func platform(env *runner.Env) (qemu, vm bool, why string) {
	for _, p := range []string{"/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name"} {
		b, _ := env.Root.ReadFile(p)
		s := strings.ToLower(strings.TrimSpace(string(b)))
		for _, k := range []string{"qemu", "kvm", "kubevirt", "openstack", "harvester", "red hat", "bochs"} {
			if strings.Contains(s, k) {
				return true, true, p + " is " + strings.TrimSpace(string(b))
			}
		}
	}
	if b, err := env.Root.ReadFile("/proc/cpuinfo"); err == nil && hypervisorRE().Match(b) {
		return false, true, "the CPU has the hypervisor flag, but DMI names no QEMU, KVM, KubeVirt or OpenStack"
	}
	return false, false, "no hypervisor flag and no QEMU/KVM DMI vendor"
}

// findProcs lists qemu-ga processes from /proc (works without systemd).
func findProcs(env *runner.Env) []proc {
	names, err := env.Root.ReadDirNames("/proc")
	if err != nil {
		return nil
	}
	var out []proc
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		base := "/proc/" + name
		comm, err := env.Root.ReadFile(base + "/comm")
		if err != nil || strings.TrimSpace(string(comm)) != "qemu-ga" {
			continue
		}
		p := proc{pid: pid, env: map[string]string{}}
		if b, err := env.Root.ReadFile(base + "/cmdline"); err == nil {
			p.argv = strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		}
		if b, err := env.Root.ReadFile(base + "/environ"); err == nil {
			for _, kv := range strings.Split(string(b), "\x00") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					p.env[k] = v
				}
			}
		}
		fds, _ := env.Root.ReadDirNames(base + "/fd")
		for _, fd := range fds {
			if t, err := env.Root.Readlink(base + "/fd/" + fd); err == nil {
				p.fds = append(p.fds, t)
			}
		}
		out = append(out, p)
	}
	return out
}
