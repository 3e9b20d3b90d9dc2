package cloudinit

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/instancedata"
	"github.com/guestcheck/guestcheck/internal/parse/procfs"
)

// BootStatusCode is cloud-init's boot_status_code: whether and why
// cloud-init is enabled on this boot. The strings are cloud-init's own
// (23.4+ wording; 22.4 said "...-kernel-cmdline").
type BootStatusCode string

// The boot status codes, as cloud-init names them.
const (
	DisabledByGenerator     BootStatusCode = "disabled-by-generator"
	DisabledByKernelCmdline BootStatusCode = "disabled-by-kernel-command-line"
	DisabledByMarkerFile    BootStatusCode = "disabled-by-marker-file"
	DisabledByEnvironment   BootStatusCode = "disabled-by-environment-variable"
	EnabledByGenerator      BootStatusCode = "enabled-by-generator"
	EnabledByKernelCmdline  BootStatusCode = "enabled-by-kernel-command-line"
	EnabledBySysvinit       BootStatusCode = "enabled-by-sysvinit"
	BootStatusUnknown       BootStatusCode = "unknown"
)

// Disabled reports whether the code means cloud-init will not run.
func (c BootStatusCode) Disabled() bool {
	switch c {
	case DisabledByGenerator, DisabledByKernelCmdline, DisabledByMarkerFile, DisabledByEnvironment:
		return true
	}
	return false
}

// Paths guestcheck reads; they are cloud-init's defaults.
const (
	DisabledMarkerPath    = "/etc/cloud/cloud-init.disabled"
	GeneratorDisabledPath = "/run/cloud-init/disabled"
	GeneratorEnabledPath  = "/run/cloud-init/enabled"
	StatusPath            = "/run/cloud-init/status.json"
	ResultPath            = "/run/cloud-init/result.json"
	InstanceDataPath      = instancedata.Path
	BootFinishedPath      = "/var/lib/cloud/instance/boot-finished"
	// DataResultPath is the persistent copy that /run/cloud-init/result.json
	// links to; it survives reboots, so it can be a leftover.
	DataResultPath = "/var/lib/cloud/data/result.json"
)

// BootInputs are the facts cloud-init's get_bootstatus consults.
type BootInputs struct {
	// Sysvinit is true when the system is known not to run systemd
	// (/run/systemd/system is not a directory on a live system).
	Sysvinit bool
	// Cmdline is the kernel command line ("" when unknown).
	Cmdline string
	// MarkerFile: /etc/cloud/cloud-init.disabled exists.
	MarkerFile bool
	// Environment: PID 1's KERNEL_CMDLINE contains cloud-init=disabled.
	Environment bool
	// GeneratorDisabled, GeneratorEnabled: /run/cloud-init/disabled and
	// /run/cloud-init/enabled exist (written by cloud-init-generator).
	GeneratorDisabled, GeneratorEnabled bool
}

// BootStatus is a boot status code and cloud-init's sentence for it.
type BootStatus struct {
	Code   BootStatusCode
	Reason string
}

// DetectBootStatus decides the boot status code in cloud-init's order
// (cmd/status.py get_bootstatus): an explicit cloud-init=enabled on the
// kernel command line beats the marker file, which beats
// cloud-init=disabled, which beats the generator's verdict.
func DetectBootStatus(in BootInputs) BootStatus {
	words := strings.Fields(in.Cmdline)
	has := func(w string) bool {
		for _, x := range words {
			if x == w {
				return true
			}
		}
		return false
	}
	switch {
	case in.Sysvinit:
		return BootStatus{EnabledBySysvinit, "Cloud-init enabled on sysvinit"}
	case has("cloud-init=enabled"):
		return BootStatus{EnabledByKernelCmdline, "Cloud-init enabled by kernel command line cloud-init=enabled"}
	case in.MarkerFile:
		return BootStatus{DisabledByMarkerFile, "Cloud-init disabled by " + DisabledMarkerPath}
	case has("cloud-init=disabled"):
		return BootStatus{DisabledByKernelCmdline, "Cloud-init disabled by kernel parameter cloud-init=disabled"}
	case in.Environment:
		return BootStatus{DisabledByEnvironment, "Cloud-init disabled by environment variable KERNEL_CMDLINE=cloud-init=disabled"}
	case in.GeneratorDisabled:
		return BootStatus{DisabledByGenerator, "Cloud-init disabled by cloud-init-generator"}
	case in.GeneratorEnabled:
		return BootStatus{EnabledByGenerator, "Cloud-init enabled by systemd cloud-init-generator"}
	}
	return BootStatus{BootStatusUnknown, "Systemd generator may not have run yet."}
}

// environDisablesCloudInit reports whether a NUL-separated environment
// block (/proc/1/environ) sets KERNEL_CMDLINE containing
// cloud-init=disabled; containers pass the switch this way.
func environDisablesCloudInit(b []byte) bool {
	for _, kv := range procfs.ParseCmdline(b) {
		if v, ok := strings.CutPrefix(kv, "KERNEL_CMDLINE="); ok && strings.Contains(v, "cloud-init=disabled") {
			return true
		}
	}
	return false
}
