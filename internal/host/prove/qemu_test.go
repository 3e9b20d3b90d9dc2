package prove

import (
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/host/image"
	"github.com/guestcheck/guestcheck/internal/host/vmm"
)

func argValues(a []string, flag string) []string {
	var out []string
	for i := 0; i+1 < len(a); i++ {
		if a[i] == flag {
			out = append(out, a[i+1])
		}
	}
	return out
}

func TestArgs(t *testing.T) {
	var nets, macs []string
	for i := range MaxClones {
		c, err := NewClone(i, filepath.Join("/tmp/p", "c"))
		if err != nil {
			t.Fatal(err)
		}
		for _, fw := range []string{FirmwareBIOS, FirmwareUEFI, FirmwareKernel} {
			a := Args(c, Boot{Firmware: fw, Accel: AccelTCG, MemoryMiB: 512, CPUs: 1, Kernel: "/k", Initrd: "/i", Append: "root=/dev/vda",
				OVMF: OVMF{Code: "/ovmf/CODE.fd", Vars: "/ovmf/VARS.fd"}, Chain: &image.Chain{Layers: []image.Layer{{Path: "/t/template.qcow2", Format: "qcow2"}}}}, Devices{})
			nd := argValues(a, "-netdev")
			if len(nd) != 1 || !strings.Contains(nd[0], ",restrict=on,") || !strings.HasPrefix(nd[0], "user,") {
				t.Fatalf("%s: -netdev %q: want one user network with restrict=on", fw, nd)
			}
			if fw == FirmwareBIOS {
				nets = append(nets, nd[0])
			}
			joined := strings.Join(a, " ")
			for _, want := range []string{"-no-reboot", "-nodefaults", "name=org.qemu.guest_agent.0", "virtio-rng-pci", "file:" + c.Console(),
				"unix:" + c.QMP() + ",server=on,wait=off", `"driver":"qcow2"`, "/dev/fdset/1", "readonly=on", "mac=" + c.MAC} {
				if !strings.Contains(joined, want) {
					t.Errorf("%s: no %q in %s", fw, want, joined)
				}
			}
			switch fw {
			case FirmwareKernel:
				if argValues(a, "-kernel")[0] != "/k" || argValues(a, "-initrd")[0] != "/i" || argValues(a, "-append")[0] != "root=/dev/vda" {
					t.Errorf("kernel boot: %s", joined)
				}
			case FirmwareUEFI:
				if !strings.Contains(joined, "readonly=on,file=/ovmf/CODE.fd") || !strings.Contains(joined, "file="+c.Vars()) || strings.Contains(joined, "/ovmf/VARS.fd") {
					t.Errorf("uefi: the code read-only and the clone's own variables: %s", joined)
				}
			case FirmwareBIOS:
				if strings.Contains(joined, "pflash") || strings.Contains(joined, "-kernel") {
					t.Errorf("bios: %s", joined)
				}
			}
		}
		macs = append(macs, c.MAC)
		if !strings.HasPrefix(c.MAC, "52:54:00:") {
			t.Errorf("MAC %s", c.MAC)
		}
	}
	for i, m := range macs {
		if slices.Index(macs, m) != i {
			t.Errorf("clone %d has another clone's MAC %s", i+1, m)
		}
	}
	for i, n := range nets {
		if slices.Index(nets, n) != i {
			t.Errorf("clone %d shares its network %s", i+1, n)
		}
		if !strings.Contains(n, "net=192.0.2.") || !strings.Contains(n, "/28") {
			t.Errorf("network %s: want a /28 of 192.0.2.0/24", n)
		}
	}
	c16, _ := NewClone(15, "/x")
	if want := "user,id=net0,restrict=on,ipv6=off,net=192.0.2.240/28,host=192.0.2.242,dns=192.0.2.243,dhcpstart=192.0.2.248"; netdev("net0", c16.Net, c16.own()) != want {
		t.Errorf("clone 16: %s, want %s", netdev("net0", c16.Net, c16.own()), want)
	}
	if _, err := NewClone(MaxClones, "/x"); err == nil {
		t.Error("a 17th clone got a network")
	}
	kvm := strings.Join(Args(c16, Boot{Firmware: FirmwareBIOS, Accel: AccelKVM, MemoryMiB: 1024, CPUs: 2}, Devices{}), " ")
	if !strings.Contains(kvm, "-accel kvm") || !strings.Contains(kvm, "-cpu host") || !strings.Contains(kvm, "-m 1024 -smp 2") {
		t.Errorf("kvm: %s", kvm)
	}
}

// TestArgsChain: a three-layer chain is three fd sets and a -blockdev
// graph declared bottom first: qcow2 layers back onto the next, the
// bottom qcow2 onto nothing (null), a raw layer has no backing key, and
// the overlay's backing is tmpl-0 whatever its header says.
func TestArgsChain(t *testing.T) {
	c, _ := NewClone(0, "/run/p/clone-1")
	b := Boot{Firmware: FirmwareBIOS, Accel: AccelTCG, MemoryMiB: 512, CPUs: 1,
		Chain: &image.Chain{Layers: []image.Layer{{Path: "/t/top.qcow2", Format: "qcow2"}, {Path: "/t/mid.qcow2", Format: "qcow2"}, {Path: "/t/base.qcow2", Format: "qcow2"}}}}
	a := Args(c, b, Devices{})
	if got := argValues(a, "-add-fd"); !slices.Equal(got, []string{"fd=3,set=1,opaque=tmpl-0", "fd=4,set=2,opaque=tmpl-1", "fd=5,set=3,opaque=tmpl-2"}) {
		t.Errorf("-add-fd %q", got)
	}
	want := []string{
		`{"driver":"file","filename":"/dev/fdset/3","node-name":"tmpl-file2","read-only":true}`,
		`{"backing":null,"driver":"qcow2","file":"tmpl-file2","node-name":"tmpl-2","read-only":true}`,
		`{"driver":"file","filename":"/dev/fdset/2","node-name":"tmpl-file1","read-only":true}`,
		`{"backing":"tmpl-2","driver":"qcow2","file":"tmpl-file1","node-name":"tmpl-1","read-only":true}`,
		`{"driver":"file","filename":"/dev/fdset/1","node-name":"tmpl-file0","read-only":true}`,
		`{"backing":"tmpl-1","driver":"qcow2","file":"tmpl-file0","node-name":"tmpl-0","read-only":true}`,
		`{"backing":"tmpl-0","discard":"unmap","driver":"qcow2","file":{"discard":"unmap","driver":"file","filename":"/run/p/clone-1/disk.qcow2"},"node-name":"disk0"}`,
	}
	if got := argValues(a, "-blockdev"); !slices.Equal(got, want) {
		t.Errorf("-blockdev\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if sb := argValues(a, "-sandbox"); len(sb) != 1 || sb[0] != vmm.Sandbox {
		t.Errorf("-sandbox %q", sb)
	}
	if strings.Contains(strings.Join(a, " "), "/t/") {
		t.Errorf("a layer's path in the arguments: %q", a)
	}
	b.Chain = &image.Chain{Layers: []image.Layer{{Path: "/t/t.img", Format: "raw"}}}
	if got := argValues(Args(c, b, Devices{}), "-blockdev")[1]; got != `{"driver":"raw","file":"tmpl-file0","node-name":"tmpl-0","read-only":true}` {
		t.Errorf("a raw layer: %s", got)
	}
}

// TestArgsDevices: the VM test harness's further NICs are restricted
// user networks too, further disks come after the clone's own and before
// the seed (so /dev/vdb is the first), and a guest without the agent's
// port keeps the virtio-serial controller.
func TestArgsDevices(t *testing.T) {
	c := Clone{Name: "g", MAC: "52:54:00:00:02:03", Net: netip.MustParsePrefix("192.0.2.0/24"), Dir: "/d"}
	b := Boot{Firmware: FirmwareKernel, Accel: AccelTCG, MemoryMiB: 1024, CPUs: 2, Kernel: "/k",
		Chain: &image.Chain{Layers: []image.Layer{{Path: "/t/root.img", Format: "raw"}}}}
	d := Devices{NICs: []NIC{{Net: netip.MustParsePrefix("198.51.100.0/24"), MAC: "52:54:00:00:02:04", Slot: 4}},
		Disks: []Disk{{Path: "/d/data.img"}, {Path: "/d/export.img", Serial: "gcexport"}}, NoAgentPort: true}
	a := Args(c, b, d)
	nd := argValues(a, "-netdev")
	want := []string{
		"user,id=net0,restrict=on,ipv6=off,net=192.0.2.0/24,host=192.0.2.2,dns=192.0.2.3,dhcpstart=192.0.2.8",
		"user,id=net1,restrict=on,ipv6=off,net=198.51.100.0/24,host=198.51.100.2,dns=198.51.100.3,dhcpstart=198.51.100.8",
	}
	if strings.Join(nd, " ") != strings.Join(want, " ") {
		t.Errorf("-netdev %q, want %q", nd, want)
	}
	var blk []string
	for _, v := range argValues(a, "-device") {
		if strings.HasPrefix(v, "virtio-blk-pci,") {
			blk = append(blk, v)
		}
	}
	if want := []string{"virtio-blk-pci,drive=disk0,bootindex=1", "virtio-blk-pci,drive=extra0",
		"virtio-blk-pci,drive=extra1,serial=gcexport", "virtio-blk-pci,drive=seed0"}; strings.Join(blk, " ") != strings.Join(want, " ") {
		t.Errorf("disks %q, want %q", blk, want)
	}
	j := strings.Join(a, " ")
	if strings.Contains(j, "guest_agent") || !strings.Contains(j, "virtio-serial-pci") {
		t.Errorf("NoAgentPort: want the controller and no agent port: %s", j)
	}
	if !strings.Contains(j, "virtio-net-pci,netdev=net1,addr=0x4,mac=52:54:00:00:02:04") {
		t.Errorf("no second NIC in slot 4: %s", j)
	}
}
