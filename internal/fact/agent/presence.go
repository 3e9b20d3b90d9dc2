package agent

import (
	"context"
	"regexp"
	"strings"
	"sync"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/procs"
	"github.com/guestcheck/guestcheck/internal/fact/store"
)

const (
	// DefaultVirtioPath is where a Linux qemu-ga build opens its channel
	// (qga/main.c).
	DefaultVirtioPath = "/dev/virtio-ports/org.qemu.guest_agent.0"
	// PortName is the virtio-serial port name the hypervisor gives the channel.
	PortName = "org.qemu.guest_agent.0"
)

// Binaries are where qemu-ga is installed, in the order they are searched.
var Binaries = []string{"/usr/bin/qemu-ga", "/usr/sbin/qemu-ga", "/usr/local/bin/qemu-ga", "/usr/libexec/qemu-ga"}

var hypervisorRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^flags\s*:.*\bhypervisor\b`) })

// Proc is one running qemu-ga as /proc shows it.
type Proc struct {
	PID  int
	Argv []string
	Env  map[string]string
	FDs  []string // targets of its open descriptors
}

// Presence is what decides whether a qemu-ga can serve the host at all:
// the installed binary, the running agents, the guest-agent virtio port
// and the platform. The qemu-guest-agent and fs-freeze checks both judge
// it, so it is read once per run (Detect) and never modified afterwards.
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

	// Procs are the running qemu-ga processes.
	Procs []Proc
}

// Installed reports whether an agent is installed or running.
func (p *Presence) Installed() bool { return p.Binary != "" || len(p.Procs) > 0 }

// PIDs returns the running qemu-ga processes.
func (p *Presence) PIDs() []int {
	var out []int
	for _, pr := range p.Procs {
		out = append(out, pr.PID)
	}
	return out
}

// detectKey keeps a run's Presence in its store, per root and mode.
type detectKey struct {
	r    *fs.Root
	live bool
}

// Detect is Read once per run: qemu-guest-agent and fs-freeze judge the
// one Presence s keeps for r (read afresh when s is nil), and its
// processes come from the run's one process table (procs.List).
func Detect(s *store.Store, r *fs.Root, live bool) *Presence {
	return store.Memo(context.Background(), s, detectKey{r, live}, func(ctx context.Context) *Presence {
		return read(r, live, func() *procs.Table { return procs.List(ctx, s, r) })
	})
}

// Read finds the agent through r: the installed binary always; the
// port, processes and platform only when live (r is the running system).
func Read(r *fs.Root, live bool) *Presence {
	return read(r, live, func() *procs.Table { return procs.Read(context.Background(), r) })
}

// read is Read with the process table from table, called only when live.
func read(r *fs.Root, live bool, table func() *procs.Table) *Presence {
	p := &Presence{Live: live}
	for _, b := range Binaries {
		if st, err := r.Stat(b); err == nil && st.Mode().IsRegular() {
			p.Binary = b
			break
		}
	}
	if !live {
		return p
	}
	names, _ := r.ReadDirNames("/sys/class/virtio-ports")
	for _, name := range names {
		b, err := r.ReadFile("/sys/class/virtio-ports/" + name + "/name")
		if err != nil {
			continue
		}
		n := strings.TrimSpace(string(b))
		p.Ports = append(p.Ports, name+"="+n)
		if n == PortName && p.Port == "" {
			p.Port = name
		}
	}
	p.VirtioConsole = r.Exists("/sys/module/virtio_console")
	if p.Port != "" {
		p.QEMU, p.VM, p.Platform = true, true, "the guest-agent port exists"
		if t, err := r.Readlink(DefaultVirtioPath); err == nil {
			p.Link = t
		}
	} else {
		p.QEMU, p.VM, p.Platform = platform(r)
	}
	p.Procs = agentProcs(r, table())
	return p
}

// platform says whether this is a QEMU/KVM guest (KubeVirt, Harvester,
// OpenStack, libvirt), where the host can give it a guest-agent channel, or
// a virtual machine on another hypervisor (Firecracker, Hyper-V, VMware,
// Xen), or no VM at all, and why.
func platform(r *fs.Root) (qemu, vm bool, why string) {
	for _, p := range []string{"/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name"} {
		b, _ := r.ReadFile(p)
		s := strings.ToLower(strings.TrimSpace(string(b)))
		for _, k := range []string{"qemu", "kvm", "kubevirt", "openstack", "harvester", "red hat", "bochs"} {
			if strings.Contains(s, k) {
				return true, true, p + " is " + strings.TrimSpace(string(b))
			}
		}
	}
	if b, err := r.ReadFile("/proc/cpuinfo"); err == nil && hypervisorRE().Match(b) {
		return false, true, "the CPU has the hypervisor flag, but DMI names no QEMU, KVM, KubeVirt or OpenStack"
	}
	return false, false, "no hypervisor flag and no QEMU/KVM DMI vendor"
}

// agentProcs lists the qemu-ga processes of t, with the environment and
// descriptors the qemu-guest-agent check resolves their settings from.
func agentProcs(r *fs.Root, t *procs.Table) []Proc {
	var out []Proc
	for _, pr := range t.Named("qemu-ga") {
		env := procs.Environ(r, pr.PID)
		if env == nil {
			env = map[string]string{}
		}
		out = append(out, Proc{PID: pr.PID, Argv: pr.Argv, Env: env, FDs: procs.FDTargets(r, pr.PID)})
	}
	return out
}

// ChannelFix says how to give a VM its guest-agent channel on each
// platform: the remedy both the qemu-guest-agent and fs-freeze checks
// give for a missing channel, so it is written once and in full
// sentences, each of which a reader can act on alone.
const ChannelFix = "Add the virtio-serial channel org.qemu.guest_agent.0 to the VM definition. " +
	"KubeVirt and Harvester always add it: restart the VM so virt-launcher regenerates the domain. " +
	"With libvirt, add `<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>` under `<devices>`. " +
	"With plain QEMU, add `-chardev socket,path=/run/qga.sock,server=on,wait=off,id=qga0 -device virtio-serial -device virtserialport,chardev=qga0,name=org.qemu.guest_agent.0`. " +
	"On OpenStack, set the image property `hw_qemu_guest_agent=yes`; on Proxmox, run `qm set VMID --agent enabled=1`. " +
	"The guest also needs the virtio_console module. " +
	"The agent's unit starts by itself when the channel appears: `systemctl start` cannot help before."
