package runner

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/hostnamefile"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// Host identifies the machine and boot a run describes, as the report's
// header names them.
type Host = reportv1.Host

// ReadHost names the machine behind root: the kernel's view (hostname and
// boot ID) on the running system, the first name in /etc/hostname under an
// image root, which has no boot. What cannot be read stays empty: the
// header is a label, and the hostname check judges the name.
func ReadHost(root *fs.Root) Host {
	read := func(p string) string {
		b, err := root.ReadFile(p)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	if root.IsHost() {
		name, _ := hostnamefile.ReadKernel(root)
		return Host{Hostname: name, BootID: read("/proc/sys/kernel/random/boot_id")}
	}
	return Host{Hostname: hostnamefile.ReadStatic(root).First}
}
