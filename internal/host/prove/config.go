package prove

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/vmm"
)

// Firmware choices (Config.Firmware and Report.Firmware).
const (
	FirmwareAuto   = "auto"
	FirmwareBIOS   = "bios"
	FirmwareUEFI   = "uefi"
	FirmwareKernel = "kernel" // direct kernel boot: --kernel, --initrd, --append
)

// Accelerator choices (Config.Accel and Report.Accel): vmm's, which
// the appliance shares.
const (
	AccelAuto = vmm.AccelAuto
	AccelKVM  = vmm.AccelKVM
	AccelTCG  = vmm.AccelTCG
)

// Jail is who every QEMU of a run runs as (vmm's, shared with the
// appliance).
type Jail = vmm.Jail

// NewJail is vmm.NewJail.
var NewJail = vmm.NewJail

// ChooseAccel is vmm.ChooseAccel.
var ChooseAccel = vmm.ChooseAccel

// Firmware UUID choices (Config.FirmwareUUID and Report.FirmwareUUID).
const (
	// UUIDPerClone gives every clone its own random firmware UUID, as a
	// platform gives each new VM one.
	UUIDPerClone = "per-clone"
	// UUIDShared gives every clone one firmware UUID, as Harvester's Clone
	// and Restore New and KubeVirt's restore copy the source's.
	UUIDShared = "shared"
)

// DefaultTimeout is the whole run's deadline unless --timeout says.
const DefaultTimeout = 15 * time.Minute

// MaxClones bounds --clones: each clone gets its own /28 of 192.0.2.0/24.
const MaxClones = 16

// Config is one prove run.
type Config struct {
	// Image is the template: a raw or qcow2 file, never written.
	Image string
	// Clones is how many clones boot (2 by default).
	Clones int
	// MemoryMiB and CPUs size each clone.
	MemoryMiB, CPUs int
	// Firmware is auto, bios, uefi; kernel boot is chosen by Kernel.
	Firmware string
	// Kernel, Initrd and Append boot a bare filesystem image directly.
	Kernel, Initrd, Append string
	// Accel is auto, kvm or tcg.
	Accel string
	// FirmwareUUID is per-clone (the default) or shared.
	FirmwareUUID string
	// Reboot reboots each clone after its first verdict and takes a
	// second one: identity must not change across the reboot.
	Reboot bool
	// Copies are --copy's platforms: clone-1 powers off after its
	// verdict, and a copy of its disk boots per platform, kept and
	// renewed as that platform does it (Platforms).
	Copies []string
	// BootBudget, when set, fails a boot that takes longer from QEMU's
	// start (or the reboot) to guestcheck's verdict.
	BootBudget time.Duration
	// Timeout bounds the whole run, boots and collection together.
	Timeout time.Duration
	// UserData and NetworkConfig go into every clone's seed as given.
	UserData, NetworkConfig []byte
	// AllowBacking are --allow-backing's exact paths: backing files the
	// template may have outside its own directory.
	AllowBacking []string
	// Keep, when set, is a directory that keeps the overlays, consoles
	// and reports; otherwise everything is removed.
	Keep string
	// QEMU, QEMUImg and OVMFDir are the tools' paths ("" for the
	// defaults); tests point them at fakes.
	QEMU, QEMUImg, OVMFDir string
	// KVMDevice is /dev/kvm unless a test says otherwise; CPUInfo is
	// /proc/cpuinfo.
	KVMDevice, CPUInfo string
	// Progress receives one line per clone phase; nil is quiet.
	Progress Progress
	// Version is the prove tool's version for the report.
	Version string
}

// Progress is told what each clone is doing.
type Progress interface {
	Phase(clone, phase string)
	Done()
}

// NopProgress reports nothing.
type NopProgress struct{}

// Phase does nothing.
func (NopProgress) Phase(string, string) {}

// Done does nothing.
func (NopProgress) Done() {}

// LineProgress writes one line per phase: for logs and pipes.
type LineProgress struct{ W io.Writer }

// Phase writes "prove: clone-1: phase".
func (p LineProgress) Phase(clone, phase string) { fmt.Fprintf(p.W, "prove: %s: %s\n", clone, phase) }

// Done does nothing: every line is already out.
func (LineProgress) Done() {}

// withDefaults fills the zero values.
func (c Config) withDefaults() Config {
	if c.Clones == 0 {
		c.Clones = 2
		if len(c.Copies) > 0 {
			c.Clones = 1
		}
	}
	if c.MemoryMiB == 0 {
		c.MemoryMiB = 1024
	}
	if c.CPUs == 0 {
		c.CPUs = 2
	}
	if c.Firmware == "" {
		c.Firmware = FirmwareAuto
	}
	if c.Accel == "" {
		c.Accel = AccelAuto
	}
	if c.FirmwareUUID == "" {
		c.FirmwareUUID = UUIDPerClone
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.QEMU == "" {
		c.QEMU = "qemu-system-x86_64"
	}
	if c.QEMUImg == "" {
		c.QEMUImg = "qemu-img"
	}
	if c.OVMFDir == "" {
		c.OVMFDir = "/usr/share/OVMF"
	}
	if c.KVMDevice == "" {
		c.KVMDevice = "/dev/kvm"
	}
	if c.CPUInfo == "" {
		c.CPUInfo = "/proc/cpuinfo"
	}
	if c.Progress == nil {
		c.Progress = NopProgress{}
	}
	return c
}

// Validate says what is wrong with the options, in flag names.
func (c Config) Validate() error {
	switch {
	case c.Image == "":
		return errors.New("--image is needed: the template to prove")
	case c.Clones < 1 || c.Clones > MaxClones:
		return fmt.Errorf("--clones %d: between 1 and %d", c.Clones, MaxClones)
	case c.MemoryMiB < 128 || c.MemoryMiB > 65536:
		return fmt.Errorf("--memory %d: between 128 and 65536 MiB", c.MemoryMiB)
	case c.CPUs < 1 || c.CPUs > 64:
		return fmt.Errorf("--cpus %d: between 1 and 64", c.CPUs)
	case c.Timeout < time.Minute:
		return fmt.Errorf("--timeout %s: at least 1m (a TCG boot takes minutes)", c.Timeout)
	case c.BootBudget < 0:
		return fmt.Errorf("--boot-budget %s: a duration above zero, such as 3m", c.BootBudget)
	case c.BootBudget > 0 && c.BootBudget > c.Timeout:
		return fmt.Errorf("--boot-budget %s: longer than --timeout %s, so it could never fail a boot", c.BootBudget, c.Timeout)
	case c.Kernel == "" && (c.Initrd != "" || c.Append != ""):
		return errors.New("--initrd and --append need --kernel")
	case c.Kernel != "" && c.Firmware != FirmwareAuto:
		return errors.New("--kernel boots the kernel directly: leave --firmware out")
	}
	if len(c.Copies) > MaxClones-1 {
		return fmt.Errorf("--copy: at most %d copies", MaxClones-1)
	}
	for i, p := range c.Copies {
		if err := oneOf("--copy", p, PlatformNames()...); err != nil {
			return err
		}
		if slices.Contains(c.Copies[:i], p) {
			return fmt.Errorf("--copy %s: given twice; each platform's copy boots once", p)
		}
	}
	if err := oneOf("--firmware", c.Firmware, FirmwareAuto, FirmwareBIOS, FirmwareUEFI); err != nil {
		return err
	}
	if c.FirmwareUUID != "" {
		if err := oneOf("--firmware-uuid", c.FirmwareUUID, UUIDPerClone, UUIDShared); err != nil {
			return err
		}
	}
	return oneOf("--accel", c.Accel, AccelAuto, AccelKVM, AccelTCG)
}

func oneOf(flag, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("%s %q: one of %s", flag, v, strings.Join(allowed, ", "))
}
