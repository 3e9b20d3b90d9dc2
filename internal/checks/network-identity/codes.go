package networkidentity

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (

	// The machine-id
	CodeIDMachineIDOK = runner.Code{ID: "identity-machine-id-ok", Group: "The machine-id", Status: "pass",
		Meaning: "`/etc/machine-id` is valid; or, in an image, empty or `uninitialized` (sealed), or missing on a root that is writable at boot, in an image without systemd, or a link to a file under `/run` the image does not hold (the message says which). Detail `mtime`, `mode`, `root`, `link_to` (a symlink's file), `template`."}
	CodeIDMachineIDUnset = runner.Code{ID: "identity-machine-id-unset", Group: "The machine-id", Status: "fail",
		Meaning: "`/etc/machine-id` is missing, empty or `uninitialized` on a booted system.",
		Fix:     "Generate the ID with `systemd-machine-id-setup` (or `dbus-uuidgen --ensure=/etc/machine-id`) and reboot, so that DHCP client IDs, the journal and other per-machine identities are stable."}
	CodeIDMachineIDInvalid = runner.Code{ID: "identity-machine-id-invalid", Group: "The machine-id", Status: "fail, warn in an image",
		Meaning: "`/etc/machine-id` holds something that is not a machine ID (systemd's reader: 32 hex digits and at most one newline), or 32 zeros. In an image, content other than zeros is only a warning: systemd replaces it at first boot. Detail `content`.",
		Fix:     "Replace it: `rm /etc/machine-id && systemd-machine-id-setup`, then reboot.",
		RootFix: "Empty `/etc/machine-id` in the image (truncate it to zero bytes), or re-seal the image with sealprep (its machine-id operation), so that systemd generates a new ID at each clone's first boot."}
	CodeIDMachineIDUnreadable = runner.Code{ID: "identity-machine-id-unreadable", Group: "The machine-id", Status: "error",
		Meaning: "`/etc/machine-id` exists but cannot be read.",
		Fix:     "Run guestcheck as root, or give {path} mode 0444, the mode systemd creates it with.",
		Cases: []runner.Case{
			runner.RootDenied("{path}"),
			{When: "when the file cannot be opened for another reason", Fix: "Repair {path} so that it can be read: on the running system `rm /etc/machine-id && systemd-machine-id-setup`, then reboot; in an image, replace it with an empty file."},
		}}
	CodeIDMachineIDMode = runner.Code{ID: "identity-machine-id-mode", Group: "The machine-id", Status: "warn",
		Meaning: "`/etc/machine-id` is writable by group or others: any local user can change the identity. Never more than a warning, and a sealed empty file of any other mode is fine. Detail `mode`.",
		Fix:     "Run `chmod 0444 /etc/machine-id`: systemd creates it with that mode, so that only root can change the identity.",
		RootFix: "Give `/etc/machine-id` in the image mode 0444, the mode systemd creates it with, so that only root can change the identity."}
	CodeIDMachineIDDBusFallback = runner.Code{ID: "identity-machine-id-dbus-fallback", Group: "The machine-id", Status: "fail",
		Meaning: "In an image, `/etc/machine-id` is empty, `uninitialized` or missing, but `/var/lib/dbus/machine-id` is a regular file with an ID: systemd takes it at first boot, so every VM made from the image gets it. Detail `dbus_machine_id`.",
		Fix:     "Remove `/var/lib/dbus/machine-id` from the image, or make it a symlink to `/etc/machine-id`, as sealprep's and virt-sysprep's machine-id operations do when sealing."}
	CodeIDMachineIDMissingRO = runner.Code{ID: "identity-machine-id-missing-read-only", Group: "The machine-id", Status: "fail",
		Meaning: "In an image with systemd, `/etc/machine-id` is missing and the root is read-only when systemd starts (detail `root` names the fstab entry or kernel command line that says so, or says the image holds none: the kernel then mounts the root read-only): systemd cannot create the file and the VM boots without a machine ID.",
		Fix:     "Put an empty `/etc/machine-id` in the image (re-seal it with sealprep, whose machine-id operation writes one): on a read-only root, systemd mounts a generated ID over an empty file (machine-id(5))."}
	CodeIDMachineIDFromFirmware = runner.Code{ID: "identity-machine-id-from-firmware", Group: "The machine-id", Status: "warn",
		Meaning: "On the running system, `/etc/machine-id` equals the SMBIOS product UUID (`/sys/class/dmi/id/product_uuid`, as written or with its first three fields byte-swapped; readable by root only, so this is judged only as root). KubeVirt derives that UUID from the VM's name, so a clone or restore that keeps the name or UUID (Harvester's Clone and Restore New), or a template booted with `systemd.machine_id=firmware`, shares the identity of every VM with that UUID. Detail `machine_id_hash` (hashed as the report's `machine_id_hash`; neither the ID nor the UUID it equals is reported), `product_uuid_file`, `byte_order`.",
		Fix:     "Give every VM its own firmware UUID (KubeVirt `spec.template.spec.domain.firmware.uuid`, or distinct VM names; Proxmox `qm set VMID --smbios1 uuid=NEW-UUID`), drop `systemd.machine_id=firmware` from the kernel command line, and seal the template with an empty `/etc/machine-id` (`sealprep apply`)."}

	// Clones and templates
	CodeIDInstanceOK = runner.Code{ID: "identity-instance-ok", Group: "Clones and templates", Status: "pass",
		Meaning: "No rule shows the machine-id predates the cloud-init instance; the message says whether it was written during the instance's first boot. Detail `instance_id`, `previous_instance_id`, `other_instances`, `instance_first_semaphore`, `boot_time`, `machine_id_written`, `journal_files`, `journal_skipped`. An instance-id that is a UUID may be the machine-id itself (KubeVirt makes the firmware UUID the NoCloud instance-id, from which systemd on KVM makes the machine-id), so it is given as `instance_id_hash` (`previous_instance_id_hash`), hashed as the report's `machine_id_hash`, and messages show `hash` and its first 8 digits."}
	CodeIDCloneKeptMachineID = runner.Code{ID: "identity-clone-kept-machine-id", Group: "Clones and templates", Status: "fail",
		Meaning: "`/etc/machine-id` predates the cloud-init instance: a clone or restore that kept the original's identity (same DHCP client ID, same journal ID, same D-Bus machine ID), or an image with a machine-id written into it. Detail `evidence` names the signs that were seen (`machine_id_before_first_boot`, `journal_before_first_boot`, `other_instance_after_machine_id`, `journal_ended_before_instance` or `machine_id_older_than_instance`; the reference page explains each), and for each sign a detail of its name after `why_`, such as `why_journal_before_first_boot`, says what was seen.",
		Fix:     "Give the VM its own identity: `rm /etc/machine-id && systemd-machine-id-setup`, then reboot; seal templates (sealprep, or `cloud-init clean --machine-id`) before cloning them, and give images an empty `/etc/machine-id`.",
		RootFix: "Re-seal the image with sealprep (its machine-id operation empties `/etc/machine-id`), so that each clone generates its own ID at first boot."}
	CodeIDCopyKeptInstance = runner.Code{ID: "identity-copy-kept-instance", Group: "Clones and templates", Status: "fail",
		Meaning: "On the running system, cloud-init's current instance was set up for MAC addresses none of which this VM has (named by its `network-config.json` in `/var/lib/cloud/instance` or `/run/cloud-init`, or by the files it rendered: `/etc/netplan/50-cloud-init.yaml`, `10-cloud-init-*.network`, `cloud-init-*.nmconnection`, ifupdown's `50-cloud-init`, ifcfg files with its banner, and `70-persistent-net.rules` next to those), and no new instance began (`previous-instance-id` equals `instance-id`): a copy of another VM that kept its source's instance, as Harvester's Clone and Restore New and a KubeVirt or Proxmox restore as a new VM make them (new MAC, same firmware UUID, instance-id and seed). It carries the source's machine-id (and the DHCP identity derived from it) and SSH host keys; the message names what it shares. An in-place restore keeps its MACs and is not flagged; a VM whose own MAC changed (a platform that gives a new MAC at each start, as KubeVirt does for an interface without `macAddress`) looks the same from inside. Live only: under `--root` there are no NICs to compare. Detail `instance_id` (`instance_id_hash` when it is a UUID), `instance_macs` (each MAC and where it is named), `nics`, `shares`, `host_keys` (the keys written before this boot).",
		Fix:     "Give this VM its own firmware UUID (KubeVirt and Harvester: remove `spec.template.spec.domain.firmware.uuid` from the stopped VM and KubeVirt generates one, which also becomes its NoCloud instance-id; Proxmox: `qm set VMID --smbios1 uuid=NEW-UUID`) or its own instance-id in its NoCloud meta-data, then run `cloud-init clean --machine-id --reboot` in it: cloud-init sets it up as a new instance for its own MAC (network config, SSH host keys) and systemd makes a new machine-id, from which the DHCP identity derives. Change the UUID first: on KVM, systemd may make the machine-id from it again. If this VM is no copy and only its MAC changed, pin the MAC in its definition (KubeVirt `macAddress:`) and re-render its network configuration (`cloud-init clean --configs network`, then reboot)."}
	CodeIDMachineIDTemplate = runner.Code{ID: "identity-machine-id-template", Group: "Clones and templates", Status: "fail",
		Meaning: "`/etc/machine-id` is the ID sealprep's template record holds (by hash): every clone of the image shares it. The message names the seal and how the ID survived it: `sealed at TIME by sealprep VERSION without its machine-id operation` (the template was sealed without clearing its machine ID), or `..., whose machine-id operation cleared it; it was put back since` (the ID was restored after the seal). Detail `record`, `sealed_at`, `sealprep_version`, `machine_id_hash` (hashed as the report's `machine_id_hash`).",
		Fix:     "Give this machine its own ID: `rm /etc/machine-id && systemd-machine-id-setup`, then reboot; seal the template with sealprep's machine-id operation, so that later clones get their own.",
		RootFix: "Re-seal the image with sealprep (its machine-id operation), so that each clone generates its own ID at first boot."}
	CodeIDTemplateRecordBad = runner.Code{ID: "identity-template-record-invalid", Group: "Clones and templates", Status: "warn",
		Meaning: "`/var/lib/sealprep/template.json` exists but is not a record this build reads (the message says why, with the line for JSON errors), so clones that kept the template's identity are not named from it.",
		Fix:     "Re-seal the template with a current sealprep, which rewrites {record}, or remove {record}."}
	CodeIDMachineIDLeak = runner.Code{ID: "identity-machine-id-leak", Group: "Clones and templates", Status: "fail",
		Meaning: "A sealed template hands systemd a machine ID at boot: `systemd.machine_id=` (or a `system.machine_id` credential set) on a kernel command line the image boots with or one it is generated from (every file of the catalogue's `machine-id-cmdline` item, the files sealprep's `machine-id-cmdline` operation edits: `/etc/kernel/cmdline`, grub.cfg, `/etc/default/grub` and `grub.d/*.cfg`, grubenv's `kernelopts=`, BLS entries in `/boot/loader/entries`, `/efi/loader/entries` and `/boot/efi/loader/entries`), or a `system.machine_id` credential in `/etc/credstore*`, `/usr/local/lib/credstore*` or `/usr/lib/credstore*`: the emptied `/etc/machine-id` is rewritten with that ID on every clone. Detail `leaks`, `template`.",
		Fix:     "Remove `systemd.machine_id=` from the image's kernel command lines and the `system.machine_id` credential from its credential stores ({leaks}), or re-seal the image with sealprep (its machine-id-cmdline and machine-id-credential operations, which also edit the GRUB defaults the command lines are generated from)."}
	CodeIDTemplateNoInstance = runner.Code{ID: "identity-template-no-instance", Group: "Clones and templates", Status: "pass",
		Meaning: "A sealed template holds no cloud-init instance: each clone is a new instance at first boot. Detail `template`."}
	CodeIDTemplateInstance = runner.Code{ID: "identity-template-instance", Group: "Clones and templates", Status: "fail",
		Meaning: "A sealed template holds cloud-init instance state: every clone starts with its user-data, semaphores and rendered network config. Detail `left` (what is there), `template`. When sealprep's template record says `--ops` dropped `cloud-init`, a warning in the record's words.",
		Fix:     "Re-seal the image with sealprep (its cloud-init operation), or remove everything under `/var/lib/cloud` except `seed/` in the image."}
	CodeIDTemplateLeftover = runner.Code{ID: "identity-template-leftover", Group: "Clones and templates", Status: "fail",
		Meaning: "A sealed template holds an identity item of the catalogue that no other finding judges: a saved random seed (`random-seed`), systemd's `credential.secret`, NetworkManager's `secret_key` or connection history, LVM's `system.devices`, or per-host enrolment (Kerberos keytab, IPA, RHSM, SUSEConnect). One finding per item; the message says what clones would share. Detail `item`, `left`, `source` (where the entry comes from), `template`. When sealprep's template record says `--ops` dropped the item's operation, a warning in the record's words, as `sealprep verify` warns.",
		Fix:     "Re-seal the image with sealprep (its {op} operation), or remove {files} in the image."}

	// The DHCP client identifier
	CodeIDDHCPOK = runner.Code{ID: "identity-dhcp-ok", Group: "The DHCP client identifier", Status: "pass",
		Meaning: "Every DHCP configuration identifies the client by MAC, or there is none; or, in a sealed template with the machine ID unset (no D-Bus copy, no NetworkManager `secret_key`), the client identifiers derive from the machine ID each clone generates (detail `derived`, `template`)."}
	CodeIDDHCPClientID = runner.Code{ID: "identity-dhcp-client-id", Group: "The DHCP client identifier", Status: "warn; fail in a sealed template for a pinned DUID",
		Meaning: "A DHCP client identifies itself with an ID derived from `/etc/machine-id`, or with the DUID a `DUIDRawData=` in `networkd.conf` (or a drop-in) pins for every machine; the message names the file and line. In a sealed template the derived IDs pass (each clone derives its own), a pinned DUID fails. Detail `device`, `dhcp_at`, `dhcp_identifier`, `client_identifier`, `duid_type_v4`, `duid_type_v6`, `networkd_conf`, `duid_raw_data_at`.",
		Fix:     "Add `dhcp-identifier: mac` to {device} ({at}) in the cloud-init network-config or netplan file, so that a restored or cloned VM does not get the original's DHCP lease.",
		Cases: []runner.Case{
			{When: "for DHCPv6 of netplan", Fix: "Set `DUIDType=link-layer` under `[DHCPv6]` in `/etc/systemd/networkd.conf`, or make sure every clone gets a new machine-id, so that a restored or cloned VM does not present the original's DUID."},
			{When: "for DHCPv4 of systemd-networkd", Fix: "Set `ClientIdentifier=mac` under `[DHCPv4]` in {file} (or `DUIDType=link-layer` in `networkd.conf`), so that a restored or cloned VM does not get the original's DHCP lease."},
			{When: "for DHCPv6 of systemd-networkd", Fix: "Set `DUIDType=link-layer` under `[DHCPv6]` in {file} or in `networkd.conf`, so that a restored or cloned VM does not present the original's DUID."},
			{When: "for a pinned DUID", Fix: "Remove `DUIDRawData=` from {file} (sealprep's machine-id operation does, when sealing), so that each clone's DUID derives from its own machine-id, or from its MAC with `DUIDType=link-layer`."},
			{When: "for a NetworkManager profile", Fix: "Use the MAC address instead: `nmcli connection modify {profile} ipv4.dhcp-client-id mac`."},
			{When: "for a NetworkManager profile in an image", Fix: "Use the MAC address instead: set `dhcp-client-id=mac` under [ipv4] in {file} in the image."},
		}}
	CodeIDTemplateDHCPState = runner.Code{ID: "identity-template-dhcp-state", Group: "The DHCP client identifier", Status: "fail",
		Meaning: "A sealed template holds DHCP client state that identifies the machine: dhcpcd's DUID (`/etc/dhcpcd.duid` up to dhcpcd 6, `duid` in its DBDIR `/var/lib/dhcpcd` or `/var/db/dhcpcd` since 7), its secret (`/etc/dhcpcd.secret`, DBDIR `secret`: it seeds the stable private IPv6 addresses) or its leases (DBDIR `*.lease`, `*.lease6`, `/var/db/dhcpcd-*.lease`), dhclient's leases (`/var/lib/dhcp`, `/var/lib/dhclient`) or NetworkManager's (`/var/lib/NetworkManager/*.lease`): every clone would present the template's DHCP identity. Detail `left`, `template`. When sealprep's template record says `--ops` dropped `dhcp-leases`, the finding is a warning in the record's own words, the line `sealprep verify` warns with.",
		Fix:     "Re-seal the image with sealprep (its dhcp-leases operation), or remove {files} in the image."}

	// Configuration bound to MAC addresses
	CodeIDMACBindingsOK = runner.Code{ID: "identity-mac-bindings-ok", Group: "Configuration bound to MAC addresses", Status: "pass",
		Meaning: "Every MAC-bound configuration matches an interface, or none is bound."}
	CodeIDMACBindingStale = runner.Code{ID: "identity-mac-binding-stale", Group: "Configuration bound to MAC addresses", Status: "warn",
		Meaning: "A configuration is bound to a MAC no interface has, but every NIC is configured anyway: a leftover that can grab the wrong NIC later. Detail `mac`, `binding`, `at`, `interface`, `nics`.",
		Fix:     "Remove the binding to {mac} at {at}, or re-render the network configuration for this VM's MACs (`cloud-init clean --configs network`, then reboot), so that it cannot grab the wrong NIC later."}
	CodeIDMACBindingOrphaned = runner.Code{ID: "identity-mac-binding-orphaned", Group: "Configuration bound to MAC addresses", Status: "fail",
		Meaning: "A configuration is bound to a MAC no interface has, and a NIC is left without an address. Detail adds `nics_without_address`.",
		Fix:     "Re-render the network configuration for this VM's MACs: remove the binding to {mac} at {at} (a `match: macaddress`, `HWADDR=` or `mac-address=`), or run `cloud-init clean --configs network` and reboot; and pin MAC addresses in the VM spec, so that a restore keeps them."}
	CodeIDMACBindingSkipped = runner.Code{ID: "identity-mac-binding-skipped", Group: "Configuration bound to MAC addresses", Status: "skip",
		Meaning: "Under `--root IMAGE` of a guest (not a sealed template) the bindings (listed in detail `binding_N`) cannot be compared with NICs."}
	CodeIDTemplateMACBinding = runner.Code{ID: "identity-template-mac-binding", Group: "Configuration bound to MAC addresses", Status: "fail",
		Meaning: "Under `--root IMAGE` of a sealed template, a configuration is bound to a MAC address (one finding per binding): it is the template's NIC, and a clone has another MAC and comes up without the configuration. Detail `mac`, `binding`, `at`, `interface`, `template`. When the template record says `--ops` dropped `net-mac-pins`, or `--force` passed its refusal for that file, the finding is a warning in the record's own words, the line `sealprep verify` warns with.",
		Fix:     "Re-seal the image with sealprep (its net-mac-pins operation), or match the interface by name instead of MAC address at {at} in the image."}

	// When the state cannot be read
	CodeIDConfigInvalid = runner.Code{ID: "identity-config-invalid", Group: "When the state cannot be read", Status: "warn",
		Meaning: "A network configuration file cannot be parsed; one finding per file, the message names the first problem as `FILE:LINE: reason`, detail `problems` lists all. netplan refuses to apply any of its files when one is invalid.",
		Fix:     "Fix the lines of {file} that the detail named `problems` lists: the network service may reject the whole file, and netplan refuses to apply any of its files while one is invalid."}
	CodeIDConfigUnreadable = runner.Code{ID: "identity-config-unreadable", Group: "When the state cannot be read", Status: "error",
		Meaning: "Network configuration files exist but cannot be read (NetworkManager keyfiles are root-only). Detail `files`.",
		Fix:     "Run guestcheck as root: NetworkManager keyfiles are readable by root only.",
		Cases: []runner.Case{
			runner.RootDenied("{files}"),
		}}
	CodeIDKernelError = runner.Code{ID: "identity-kernel-error", Group: "When the state cannot be read", Status: "error",
		Meaning: "The interfaces could not be read to compare MAC bindings.",
		Fix:     "Run guestcheck on the guest itself, in its own network namespace and where netlink sockets are allowed (not in a container or sandbox that denies them)."}
)

// Codes lists every code the network-identity check emits, in the order
// of its reference page.
var Codes = []runner.Code{
	CodeIDMachineIDOK, CodeIDMachineIDUnset, CodeIDMachineIDInvalid, CodeIDMachineIDUnreadable, CodeIDMachineIDMode, CodeIDMachineIDDBusFallback, CodeIDMachineIDMissingRO, CodeIDMachineIDFromFirmware,
	CodeIDInstanceOK, CodeIDCloneKeptMachineID, CodeIDCopyKeptInstance, CodeIDMachineIDTemplate, CodeIDTemplateRecordBad, CodeIDMachineIDLeak, CodeIDTemplateNoInstance, CodeIDTemplateInstance, CodeIDTemplateLeftover,
	CodeIDDHCPOK, CodeIDDHCPClientID, CodeIDTemplateDHCPState,
	CodeIDMACBindingsOK, CodeIDMACBindingStale, CodeIDMACBindingOrphaned, CodeIDMACBindingSkipped, CodeIDTemplateMACBinding,
	CodeIDConfigInvalid, CodeIDConfigUnreadable, CodeIDKernelError,
}
