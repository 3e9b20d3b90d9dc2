// Package checks is guestcheck's registry: the ordered list All that the
// CLI runs and --list shows. Each check describes itself (runner.Check,
// with its runner.Code descriptions) in its own package; a new check is
// its package and its line here, and everything a user reads about it is
// generated from that description.
package checks

import (
	"github.com/guestcheck/guestcheck/internal/checks/cloud-config"
	"github.com/guestcheck/guestcheck/internal/checks/cloud-init"
	"github.com/guestcheck/guestcheck/internal/checks/disk-size"
	"github.com/guestcheck/guestcheck/internal/checks/dns"
	"github.com/guestcheck/guestcheck/internal/checks/fs-freeze"
	"github.com/guestcheck/guestcheck/internal/checks/fstab"
	"github.com/guestcheck/guestcheck/internal/checks/hostname"
	"github.com/guestcheck/guestcheck/internal/checks/hotplug"
	"github.com/guestcheck/guestcheck/internal/checks/network-config"
	"github.com/guestcheck/guestcheck/internal/checks/network-identity"
	"github.com/guestcheck/guestcheck/internal/checks/qemu-guest-agent"
	"github.com/guestcheck/guestcheck/internal/checks/routes"
	"github.com/guestcheck/guestcheck/internal/checks/ssh"
	"github.com/guestcheck/guestcheck/internal/checks/systemd"
	"github.com/guestcheck/guestcheck/internal/checks/time-sync"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// All lists every check in display order.
var All = []runner.Check{
	cloudinit.Check,
	cloudconfig.Check,
	hostname.Check,
	routes.Check,
	dns.Check,
	networkidentity.Check,
	networkconfig.Check,
	qemuguestagent.Check,
	fsfreeze.Check,
	fstab.Check,
	disksize.Check,
	hotplug.Check,
	ssh.Check,
	systemd.Check,
	timesync.Check,
}

// ByID returns the check with the given ID.
func ByID(id string) (runner.Check, bool) {
	for _, c := range All {
		if c.ID == id {
			return c, true
		}
	}
	return runner.Check{}, false
}
