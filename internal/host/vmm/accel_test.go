package vmm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestChooseAccel(t *testing.T) {
	dir := t.TempDir()
	noKVM := filepath.Join(dir, "kvm")
	cpu := filepath.Join(dir, "cpuinfo")
	os.WriteFile(cpu, []byte("processor\t: 0\nflags\t\t: fpu vme sse2 hypervisor\n"), 0o644)
	if a, err := ChooseAccel(AccelAuto, noKVM, cpu); err != nil || a.Accel != AccelTCG || !strings.Contains(a.Reason, noKVM) {
		t.Errorf("auto without /dev/kvm: %+v %v", a, err)
	}
	if _, err := ChooseAccel(AccelKVM, noKVM, cpu); err == nil {
		t.Error("--accel kvm without /dev/kvm was accepted")
	}
	if a, _ := ChooseAccel(AccelTCG, "/dev/kvm", cpu); a.Accel != AccelTCG {
		t.Errorf("--accel tcg: %+v", a)
	}
	// /dev/null opens but is no KVM.
	if a, _ := ChooseAccel(AccelAuto, "/dev/null", cpu); a.Accel != AccelTCG || !strings.Contains(a.Reason, "API version") {
		t.Errorf("auto on a device that is not KVM: %+v", a)
	}
	if why := probeHWVirt(cpu); !strings.Contains(why, "no vmx or svm") {
		t.Errorf("cpuinfo without vmx: %q", why)
	}
	os.WriteFile(cpu, []byte("flags\t\t: fpu vmx sse2\n"), 0o644)
	if why := probeHWVirt(cpu); why != "" {
		t.Errorf("cpuinfo with vmx: %q", why)
	}
}
