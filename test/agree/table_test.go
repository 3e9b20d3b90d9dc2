package agree

import "strings"

// item is one piece of per-instance identity that both binaries judge:
// which of sealprep verify's leftovers are its, and which guestcheck
// finding codes are its. sealed(item) must imply no warning or failure
// among its codes.
type item struct {
	name string
	// ops are the sealprep operations whose leftovers, errors and
	// refusals belong to the item; match, when set, narrows the
	// leftovers to some of an operation's actions.
	ops   []string
	match func(a action) bool
	// check is the guestcheck check that judges the item, codes the
	// findings of it that speak about the item.
	check string
	codes []string
}

const (
	dbusMachineID = "/var/lib/dbus/machine-id"
	etcMachineID  = "/etc/machine-id"
)

// missingMachineID is sealprep's action for an absent /etc/machine-id: the
// file is written because the root is (or may be) read-only at boot.
func missingMachineID(a action) bool {
	return a.Op == "machine-id" && a.Path == etcMachineID && a.Kind == "write-file"
}

// items is the agreement table: sealprep's operations against
// guestcheck's finding codes, one row per identity item.
var items = []item{
	{name: "machine-id", ops: []string{"machine-id", "machine-id-cmdline", "machine-id-credential"},
		match: func(a action) bool { return a.Path != dbusMachineID && !missingMachineID(a) },
		check: "network-identity", codes: []string{
			"identity-machine-id-unset", "identity-machine-id-invalid", "identity-machine-id-unreadable",
			"identity-machine-id-mode", "identity-machine-id-from-firmware", "identity-machine-id-template",
			"identity-clone-kept-machine-id", "identity-machine-id-leak"}},
	{name: "machine-id-dbus", ops: []string{"machine-id"},
		match: func(a action) bool { return a.Path == dbusMachineID },
		check: "network-identity", codes: []string{"identity-machine-id-dbus-fallback"}},
	{name: "machine-id-boot-root", ops: []string{"machine-id"}, match: missingMachineID,
		check: "network-identity", codes: []string{"identity-machine-id-missing-read-only"}},
	{name: "template-record", ops: []string{"template-record"},
		check: "network-identity", codes: []string{"identity-template-record-invalid"}},
	{name: "ssh-host-keys", ops: []string{"ssh-host-keys"},
		check: "ssh", codes: []string{
			"ssh-hostkey-missing", "ssh-hostkey-none", "ssh-hostkey-unreadable", "ssh-hostkey-invalid",
			"ssh-hostkey-mismatch", "ssh-hostkey-permissions", "ssh-hostkey-pub-missing", "ssh-hostkey-kept",
			"ssh-hostkey-template", "ssh-hostkey-in-template"}},
	{name: "hostname", ops: []string{"hostname"},
		check: "hostname", codes: []string{
			"hostname-invalid", "hostname-localhost", "hostname-etc-mismatch", "hostname-etc-missing",
			"hostname-metadata-mismatch", "hostname-expected-mismatch", "hostname-template-named"}},
	{name: "cloud-init-instance", ops: []string{"cloud-init"},
		match: func(a action) bool { return strings.HasPrefix(a.Path, "/var/lib/cloud/") },
		// Off the running system guestcheck judges the instance only in a
		// template (a guest's instance is its own).
		// identity-copy-kept-instance is the running copy's side of the
		// same item (live only: under --root there are no NICs).
		check: "network-identity", codes: []string{"identity-instance-ok", "identity-template-instance", "identity-copy-kept-instance"}},
	// A DHCP client identifier derived from the machine ID (networkd's
	// DUID, NetworkManager's duid and stable) is shared only when the ID,
	// or NetworkManager's secret key, is: the item is sealed when they and
	// the leases are cleared.
	{name: "dhcp-identity", ops: []string{"dhcp-leases", "nm-identity", "machine-id", "machine-id-cmdline", "machine-id-credential"},
		match: func(a action) bool { return !missingMachineID(a) },
		check: "network-identity", codes: []string{"identity-dhcp-client-id"}},
	// dhcpcd's DUID and secret, and the leases of every client, in a
	// template: dhcp-leases removes them.
	{name: "dhcp-client-state", ops: []string{"dhcp-leases"},
		check: "network-identity", codes: []string{"identity-template-dhcp-state"}},
	// The catalogue's items no other finding judges (random seeds,
	// credential.secret, NetworkManager's secret_key and history, LVM's
	// devices file, per-host enrolment): each has its operation.
	{name: "template-leftovers", ops: []string{"random-seed", "systemd-credential-secret", "nm-identity", "lvm-devices-file", "host-credentials"},
		check: "network-identity", codes: []string{"identity-template-leftover"}},
	// A binding is the template's NIC (off the running system, judged in
	// a template only). cloud-init's rendered files are removed by
	// cloud-init as well as by net-mac-pins.
	{name: "mac-bindings", ops: []string{"net-mac-pins", "cloud-init"},
		match: func(a action) bool {
			return a.Op == "net-mac-pins" || strings.HasPrefix(a.Path, "/etc/netplan/") || strings.HasPrefix(a.Path, "/etc/systemd/network/") ||
				strings.HasPrefix(a.Path, "/etc/NetworkManager/system-connections/")
		},
		check: "network-identity", codes: []string{"identity-mac-binding-stale", "identity-mac-binding-orphaned", "identity-template-mac-binding"}},
	// The catalogue items no other finding judges (saved random seeds,
	// credential.secret, NetworkManager's secret_key and history, LVM's
	// devices file, enrolment): one finding per item left.
	{name: "template-leftovers", ops: []string{"random-seed", "systemd-credential-secret", "nm-identity", "lvm-devices-file", "host-credentials"},
		check: "network-identity", codes: []string{"identity-template-leftover"}},
}

// notIdentity are the codes of the identity checks that judge something
// else: a pass of an item, sshd itself, its settings, name resolution,
// unreadable configuration. Listed so that a new code of these checks
// has to be placed in the table or here.
var notIdentity = map[string][]string{
	"network-identity": {"identity-machine-id-ok", "identity-dhcp-ok", "identity-mac-bindings-ok", "identity-template-no-instance",
		"identity-mac-binding-skipped", "identity-config-invalid", "identity-config-unreadable", "identity-kernel-error"},
	"ssh": {"ssh-installed", "ssh-not-installed", "ssh-not-live", "ssh-no-systemd", "ssh-unit-active", "ssh-unit-enabled",
		"ssh-unit-inactive", "ssh-unit-disabled", "ssh-unit-masked", "ssh-listening", "ssh-not-listening",
		"ssh-port-other-process", "ssh-config-invalid", "ssh-config-unreadable", "ssh-hostkey-ok", "ssh-hostkey-fresh",
		"ssh-hostkey-undated", "ssh-hostkey-template-none", "ssh-auth-ok", "ssh-auth-baseline", "ssh-auth-conditional", "ssh-pwauth-unread",
		"ssh-state-unreadable"},
	"hostname": {"hostname-ok", "hostname-preserved", "hostname-no-metadata", "hostname-resolves",
		"hostname-resolves-remote", "hostname-unresolvable", "hostname-nss-only", "hostname-file-unreadable",
		"hostname-config-invalid", "hostname-interrupted", "hostname-template"},
}

// judgedChecks are the guestcheck checks the test runs.
func judgedChecks() []string {
	return []string{"hostname", "network-identity", "ssh"}
}

func (it item) hasOp(op string) bool {
	for _, o := range it.ops {
		if o == op {
			return true
		}
	}
	return false
}

func (it item) hasCode(code string) bool {
	for _, c := range it.codes {
		if c == code {
			return true
		}
	}
	return false
}
