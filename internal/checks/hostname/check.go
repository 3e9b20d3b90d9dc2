package hostname

import (
	"context"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/hostnamefile"
	"github.com/guestcheck/guestcheck/internal/fact/instancedata"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Guest paths the check reads.
const (
	pathKernelHostname  = hostnamefile.KernelPath
	pathEtcHosts        = "/etc/hosts"
	pathNsswitch        = "/etc/nsswitch.conf"
	pathNsswitchVendor  = "/usr/etc/nsswitch.conf" // openSUSE keeps the default here
	pathSetHostname     = "/var/lib/cloud/data/set-hostname"
	pathInstanceData    = instancedata.Path
	pathRunCloudCfg     = "/run/cloud-init/cloud.cfg"
	pathVendorConfig    = "/var/lib/cloud/instance/vendor-cloud-config.txt"
	pathVendor2Config   = "/var/lib/cloud/instance/vendor2-cloud-config.txt"
	pathUserCloudConfig = "/var/lib/cloud/instance/cloud-config.txt"
)

// hostnameDNSTimeout bounds the DNS lookup inside the check's own deadline:
// a hostname that takes longer than this to resolve already stalls sudo.
const hostnameDNSTimeout = 2 * time.Second

// Run judges the VM's name: valid, not a placeholder, persisted in
// /etc/hostname, equal to what cloud-init was asked to set (or to
// hostname.expected), and resolvable to a local address. Interface
// addresses come from env.InterfaceAddrs, and only on the live system.
func Run(ctx context.Context, env *runner.Env) []runner.Finding {
	return Judge(Gather(ctx, env))
}

// Check verifies the VM's name: valid, not a placeholder, persisted in
// /etc/hostname, equal to what cloud-init was asked to set (or to
// hostname.expected), and resolvable to a local address.
// docs/checks/hostname.md explains each code.
var Check = runner.Check{
	ID:    "hostname",
	Title: "Hostname",
	Description: "the kernel hostname is valid, not localhost, persisted in /etc/hostname, " +
		"matches what cloud-init set (or hostname.expected) and resolves to a local address",
	Settings: settings.Section(),
	Codes:    Codes,
	Run:      Run,
}
