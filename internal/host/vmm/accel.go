package vmm

import (
	"bytes"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// KVM ioctls (linux/kvm.h).
const (
	kvmGetAPIVersion = 0xAE00
	kvmCreateVM      = 0xAE01
	kvmAPIVersion    = 12
)

// Accelerator choices (prove's and the appliance's --accel, and their
// reports).
const (
	AccelAuto = "auto"
	AccelKVM  = "kvm"
	AccelTCG  = "tcg"
)

// AccelChoice is the accelerator and why.
type AccelChoice struct {
	Accel  string
	Reason string
}

// ChooseAccel decides between KVM and TCG. auto takes KVM only when
// /dev/kvm opens read-write, speaks API version 12, creates a VM and the
// CPU advertises hardware virtualization (vmx or svm in cpuinfo): some
// hosts (nested or paravirtual KVM) pass the first three and still never
// run a guest kernel, and a boot that never prints costs the whole
// deadline. kvm skips the CPU flag test, for hosts that hide it.
func ChooseAccel(want, kvmDev, cpuinfo string) (AccelChoice, error) {
	if want == AccelTCG {
		return AccelChoice{AccelTCG, "--accel tcg"}, nil
	}
	why := probeKVM(kvmDev)
	if want == AccelKVM {
		if why != "" {
			return AccelChoice{}, fmt.Errorf("--accel kvm: %s", why)
		}
		return AccelChoice{AccelKVM, "--accel kvm"}, nil
	}
	if why == "" {
		why = probeHWVirt(cpuinfo)
	}
	if why != "" {
		return AccelChoice{AccelTCG, "KVM not usable (" + why + "): TCG, about 10 times slower"}, nil
	}
	return AccelChoice{AccelKVM, kvmDev + " creates VMs and the CPU has hardware virtualization"}, nil
}

// probeKVM is why kvmDev cannot run VMs, "" when it can create one.
func probeKVM(kvmDev string) string {
	fd, err := unix.Open(kvmDev, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Sprintf("%s: %v", kvmDev, err)
	}
	defer unix.Close(fd)
	v, err := unix.IoctlRetInt(fd, kvmGetAPIVersion)
	if err != nil || v != kvmAPIVersion {
		return fmt.Sprintf("%s: API version %d, %v", kvmDev, v, err)
	}
	vm, err := unix.IoctlRetInt(fd, kvmCreateVM)
	if err != nil {
		return fmt.Sprintf("%s: cannot create a VM: %v", kvmDev, err)
	}
	unix.Close(vm)
	return ""
}

// probeHWVirt is why the CPU has no hardware virtualization, "" when
// cpuinfo shows vmx or svm.
func probeHWVirt(cpuinfo string) string {
	b, err := os.ReadFile(cpuinfo)
	if err != nil {
		return fmt.Sprintf("%s: %v", cpuinfo, err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok || string(bytes.TrimSpace(k)) != "flags" {
			continue
		}
		for _, f := range bytes.Fields(v) {
			if string(f) == "vmx" || string(f) == "svm" {
				return ""
			}
		}
	}
	return "the CPU has no hardware virtualization (no vmx or svm flag in " + cpuinfo + ")"
}
