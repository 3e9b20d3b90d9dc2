package prove

import (
	"crypto/rand"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/guestcheck/guestcheck/internal/host/vmm"

	"github.com/guestcheck/guestcheck/internal/host/image"
)

// Clone is one throwaway clone: its name, network and files.
type Clone struct {
	Name  string
	Index int
	// MAC is 52:54:00 (QEMU's prefix) and three random bytes.
	MAC string
	// Net is the clone's own /28 of 192.0.2.0/24: QEMU's user network
	// hands out an address from it, so clones get different addresses
	// while a static address baked into the template stays the same.
	Net netip.Prefix
	// Dir holds the overlay, seed, console, sockets and UEFI variables.
	Dir string
	// UUID is the clone's firmware (SMBIOS system) UUID, a random v4:
	// what a platform gives each VM, and what systemd fills an empty
	// machine-id from on QEMU and KVM. "" leaves QEMU's default (all
	// zero), as the VM test harness's own guests have it.
	UUID string
	// Host is the clone's own address in Net, the nth, as its static
	// network-config and QEMU's DHCP hand it out: 8 when zero. A copy
	// (--copy) sits on its source's network with an address of its own,
	// so that only an address baked into its disk or seed repeats.
	Host int
	// Base, when set, is the qcow2 disk of a booted clone (prove's own
	// file) that this clone's overlay sits on: a copy of that clone.
	Base string
}

// Files of a clone's directory.
func (c Clone) Overlay() string { return filepath.Join(c.Dir, "disk.qcow2") }

// Seed is the NoCloud seed's path.
func (c Clone) Seed() string { return filepath.Join(c.Dir, "seed.iso") }

// Console is the serial console's capture.
func (c Clone) Console() string { return filepath.Join(c.Dir, "console.log") }

// QGA is the guest agent's chardev socket.
func (c Clone) QGA() string { return filepath.Join(c.Dir, "qga.sock") }

// QMP is QEMU's monitor socket.
func (c Clone) QMP() string { return filepath.Join(c.Dir, "qmp.sock") }

// Vars is the clone's own copy of the UEFI variable store.
func (c Clone) Vars() string { return filepath.Join(c.Dir, "OVMF_VARS.fd") }

// host returns the nth address of the clone's network.
func (c Clone) host(n int) netip.Addr { return nthHost(c.Net, n) }

// own is the clone's own address (Host).
func (c Clone) own() netip.Addr {
	if c.Host == 0 {
		return c.host(8)
	}
	return c.host(c.Host)
}

// nthHost returns the nth address of an IPv4 network of /24 or smaller.
func nthHost(net netip.Prefix, n int) netip.Addr {
	a := net.Masked().Addr().As4()
	a[3] += byte(n)
	return netip.AddrFrom4(a)
}

// NewClone names clone i (from 0) and gives it a MAC and a network.
func NewClone(i int, dir string) (Clone, error) {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Clone{}, err
	}
	if i < 0 || i >= MaxClones {
		return Clone{}, fmt.Errorf("clone %d: at most %d clones", i+1, MaxClones)
	}
	net := netip.PrefixFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(16 * i)}), 28)
	u, err := NewUUID()
	if err != nil {
		return Clone{}, err
	}
	return Clone{
		Name: fmt.Sprintf("clone-%d", i+1), Index: i,
		MAC: fmt.Sprintf("52:54:00:%02x:%02x:%02x", b[0], b[1], b[2]),
		Net: net, Dir: dir, UUID: u,
	}, nil
}

// NewUUID is a random (version 4, RFC 9562) UUID in lower case, as QEMU's
// -smbios type=1,uuid= takes it.
func NewUUID() (string, error) {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return "", err
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]), nil
}

// Boot is how every clone boots: firmware, accelerator, size and the
// template's layers.
type Boot struct {
	Firmware               string // bios, uefi or kernel
	OVMF                   OVMF   // for uefi
	Kernel, Initrd, Append string // for kernel
	Accel                  string
	MemoryMiB, CPUs        int
	// Chain is the template's vetted backing chain, top first: QEMU gets
	// each layer as an open file descriptor and the disk graph spelled
	// out, so it opens no template path and follows no backing name
	// written in a header. There is no other way to give QEMU the template.
	// A layer's Path is for display and the overlay's header only.
	Chain *image.Chain
}

// firstLayerFD is the descriptor of Chain[0] in QEMU: the files follow
// stdin, stdout and stderr in the order of Boot.files (exec.Cmd's
// ExtraFiles).
const firstLayerFD = 3

// files are the descriptors QEMU inherits, Chain's files in order.
func (b Boot) files() []*os.File {
	var out []*os.File
	for _, l := range b.layers() {
		out = append(out, l.File)
	}
	return out
}

// layers are the chain's layers, none without a chain.
func (b Boot) layers() []image.Layer {
	if b.Chain == nil {
		return nil
	}
	return b.Chain.Layers
}

// NIC is a further NIC: another user network, restrict=on as the
// clone's own, with the gateway at .2, DNS at .3 and DHCP from .8 of Net.
type NIC struct {
	Net netip.Prefix
	MAC string
	// Slot is its PCI slot (the guest names it ens<Slot>); not 3, the
	// clone's own NIC's.
	Slot int
}

// Disk is a further raw disk, after the clone's own and before the seed,
// so that the guest sees it as /dev/vdb, /dev/vdc and on.
type Disk struct {
	Path string
	// Serial is its virtio serial (/dev/disk/by-id/virtio-<Serial>).
	Serial string
}

// Devices are what a guest gets beyond a clone's: prove's clones get
// none; the VM test harness (test/vm) gives second NICs, data and export
// disks, and a guest without the agent's port.
type Devices struct {
	NICs  []NIC
	Disks []Disk
	// NoAgentPort leaves out the org.qemu.guest_agent.0 port (the
	// virtio-serial controller stays): for a test of a guest no agent
	// can answer. prove always gives its clones the port.
	NoAgentPort bool
}

// Args is QEMU's command line for clone c with devices d. The guest gets
// only QEMU's user networks with restrict=on (no way out of the host),
// its overlay, its seed, an agent channel, a serial console into a
// file, QMP and a virtio RNG (entropy for SSH host key generation under
// TCG).
func Args(c Clone, b Boot, d Devices) []string {
	a := append(vmm.BaseArgs(c.Name, b.Accel, b.MemoryMiB, b.CPUs),
		"-serial", "file:"+c.Console(),
		"-qmp", "unix:"+c.QMP()+",server=on,wait=off",
	)
	a = append(a, firmwareArgs(c, b)...)
	if c.UUID != "" {
		a = append(a, "-smbios", "type=1,uuid="+c.UUID)
	}
	// The NIC first, in slot 3 as QEMU's default NIC (the guest names it
	// ens3 before cloud-init renames it), before another device takes it.
	a = append(a,
		"-netdev", netdev("net0", c.Net, c.own()),
		"-device", "virtio-net-pci,netdev=net0,addr=0x3,mac="+c.MAC)
	for i, n := range d.NICs {
		id := fmt.Sprintf("net%d", i+1)
		a = append(a, "-netdev", netdev(id, n.Net, nthHost(n.Net, 8)),
			"-device", fmt.Sprintf("virtio-net-pci,netdev=%s,addr=0x%x,mac=%s", id, n.Slot, n.MAC))
	}
	a = append(a, diskArgs(c, b)...)
	a = append(a, "-device", "virtio-blk-pci,drive=disk0,bootindex=1")
	for i, k := range d.Disks {
		id := fmt.Sprintf("extra%d", i)
		dev := "virtio-blk-pci,drive=" + id
		if k.Serial != "" {
			dev += ",serial=" + k.Serial
		}
		a = append(a, "-drive", "file="+k.Path+",if=none,id="+id+",format=raw", "-device", dev)
	}
	a = append(a,
		"-drive", "file="+c.Seed()+",if=none,id=seed0,format=raw,readonly=on",
		"-device", "virtio-blk-pci,drive=seed0",
		"-device", "virtio-serial-pci",
	)
	if !d.NoAgentPort {
		a = append(a,
			"-chardev", "socket,path="+c.QGA()+",server=on,wait=off,id=qga0",
			"-device", "virtserialport,chardev=qga0,name=org.qemu.guest_agent.0")
	}
	return append(a, "-object", "rng-random,filename=/dev/urandom,id=rng0", "-device", "virtio-rng-pci,rng=rng0")
}

// firmwareArgs boot the kernel given, or UEFI with the clone's own
// variables; BIOS needs none.
func firmwareArgs(c Clone, b Boot) []string {
	var a []string
	switch b.Firmware {
	case FirmwareKernel:
		a = append(a, "-kernel", b.Kernel)
		if b.Initrd != "" {
			a = append(a, "-initrd", b.Initrd)
		}
		if b.Append != "" {
			a = append(a, "-append", b.Append)
		}
	case FirmwareUEFI:
		a = append(a, "-machine", "q35",
			"-drive", "if=pflash,format=raw,unit=0,readonly=on,file="+b.OVMF.Code,
			"-drive", "if=pflash,format=raw,unit=1,file="+c.Vars())
	}
	return a
}

// diskArgs give QEMU the clone's disk, node disk0: the overlay on the
// template, whose layers vmm.ChainArgs passes as descriptors (nodes
// tmpl-0 and on): the overlay's backing is node tmpl-0 whatever its
// header says, so QEMU opens no template path.
func diskArgs(c Clone, b Boot) []string {
	a := vmm.ChainArgs(b.layers(), firstLayerFD, "tmpl", false)
	backing := "tmpl-0"
	if c.Base != "" {
		// A copy: the source clone's disk, read-only, between the
		// template and the copy's own overlay.
		a = append(a, "-blockdev", vmm.JSONArg(map[string]any{"driver": "qcow2", "node-name": "base0", "read-only": true, "backing": "tmpl-0",
			"file": map[string]any{"driver": "file", "filename": c.Base, "read-only": true}}))
		backing = "base0"
	}
	top := map[string]any{"driver": "qcow2", "node-name": "disk0", "discard": "unmap", "backing": backing,
		"file": map[string]any{"driver": "file", "filename": c.Overlay(), "discard": "unmap"}}
	return append(a, "-blockdev", vmm.JSONArg(top))
}

// netdev is user network id on net: restrict=on always, no IPv6, the
// gateway at .2, DNS at .3 and DHCP from dhcp (.8 but for copies).
func netdev(id string, net netip.Prefix, dhcp netip.Addr) string {
	return strings.Join([]string{
		"user", "id=" + id, "restrict=on", "ipv6=off",
		"net=" + net.String(),
		"host=" + nthHost(net, 2).String(),
		"dns=" + nthHost(net, 3).String(),
		"dhcpstart=" + dhcp.String(),
	}, ",")
}
