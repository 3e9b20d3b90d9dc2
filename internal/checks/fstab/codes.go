package fstabcheck

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (

	// The file and its entries
	codeFstabEntryOK = runner.Code{ID: "fstab-entry-ok", Group: "The file and its entries", Status: "pass",
		Meaning: "The entry is fine: persistent name, resolves to one device (detail `device`, `resolved_by`, `fs_uuid`, …), mounted. Under `--root IMAGE` only naming and options were judged."}
	codeFstabAbsent = runner.Code{ID: "fstab-absent", Group: "The file and its entries", Status: "skip",
		Meaning: "No `/etc/fstab`, or one without entries: nothing is mounted from it."}
	codeFstabUnreadable = runner.Code{ID: "fstab-unreadable", Group: "The file and its entries", Status: "error",
		Meaning: "`/etc/fstab` exists but cannot be read.",
		Fix: "Run guestcheck as root, or fix the file's permissions."}
	codeFstabSyntax = runner.Code{ID: "fstab-syntax-error", Group: "The file and its entries", Status: "fail",
		Meaning: "libmount rejects the line, so mount and systemd skip it: fewer than 3 fields, a dump or pass field that is not a number (a `# comment` after the fourth or fifth field is read as one), or a NUL byte in the line; detail `entry` is `FILE:LINE`, `text` the line (a NUL shown as `\\000`), `reason` what is wrong.",
		Fix: "Fix or comment out the line."}
	codeFstabMountPoint = runner.Code{ID: "fstab-mount-point-invalid", Group: "The file and its entries", Status: "fail",
		Meaning: "The mount point of a non-swap entry is relative (or empty): libmount reads the line, but systemd-fstab-generator ignores it (\"is not a valid path, ignoring\"), so nothing is mounted at boot.",
		Fix: "Write the absolute path (the remediation gives the line), or comment the line out."}
	codeFstabIgnoredText = runner.Code{ID: "fstab-ignored-text", Group: "The file and its entries", Status: "warn",
		Meaning: "The line has text after the sixth field (detail `ignored`), or is a last line without a final newline that holds a NUL byte; mount reads past both without a word, so an option written there is not applied.",
		Fix: "Move a comment to its own `#` line and options into the fourth field; the remediation gives the line."}

	// Device names
	codeFstabKernelName = runner.Code{ID: "fstab-kernel-device-name", Group: "Device names", Status: "fail, or warn",
		Meaning: "The entry names a kernel device (`/dev/vdb`). Fail without `nofail`; warn with `nofail`, `noauto` or `x-systemd.automount`. Entries tagged `comment=cloudconfig` say \"written by cloud-init\".",
		Fix: "Replace the line with the one in the remediation, built from the device's probed UUID, e.g. `` `UUID=0a1b… /data ext4 defaults,nofail 0 2` `` (`nofail` added for data disks). When the device is absent or unreadable: run `blkid /dev/vdb` and use its UUID. For cloud-init entries, change the device in the `mounts:`/`swap:` user-data."}
	codeFstabByPath = runner.Code{ID: "fstab-by-path-device-name", Group: "Device names", Status: "warn",
		Meaning: "The entry uses `/dev/disk/by-path/…`, which changes when the disk moves to another PCI slot or SCSI target.",
		Fix: "Use the `UUID=` line in the remediation."}
	codeFstabMissing = runner.Code{ID: "fstab-device-missing", Group: "Device names", Status: "fail, or warn",
		Meaning: "No present block device has the identifier, or the path does not exist / has no medium. Fail unless the entry has `nofail`, `noauto` or `x-systemd.automount`, or is a swap; detail `why` says what the boot does, `case_mismatch` points out an identifier that differs only in case.",
		Fix: "Attach the disk or correct the identifier (`blkid` lists them); or add `nofail,x-systemd.device-timeout=10s`."}
	codeFstabAmbiguous = runner.Code{ID: "fstab-device-ambiguous", Group: "Device names", Status: "fail",
		Meaning: "The identifier matches more than one block device (a cloned or restored disk); detail `devices`.",
		Fix: "Give the copy a new identity (`tune2fs -U random`, `xfs_admin -U generate`, `btrfstune -u`, `fatlabel -i -r`, `swaplabel -U`, `e2label`, `sfdisk --part-uuid`, …; the remediation names the tool and the device that is not mounted) or detach it."}

	// Mount options
	codeFstabNoNofail = runner.Code{ID: "fstab-data-without-nofail", Group: "Mount options", Status: "warn",
		Meaning: "A data filesystem (on another disk than `/`, or outside the OS mount points) has no `nofail`: if its disk is missing, the boot stops in emergency mode. Detail `data_judged_by`.",
		Fix: "Add `nofail` and `x-systemd.device-timeout=10s` (the remediation gives the line)."}
	codeFstabNoNetdev = runner.Code{ID: "fstab-network-without-netdev", Group: "Mount options", Status: "warn",
		Meaning: "A network filesystem without `_netdev` may be mounted before the network is up.",
		Fix: "Add `_netdev`."}

	// The mounted system
	codeFstabNotMounted = runner.Code{ID: "fstab-not-mounted", Group: "The mounted system", Status: "warn",
		Meaning: "A non-`noauto` entry is not mounted (or its swap is not active).",
		Fix: "`mount MOUNTPOINT` (or `swapon`) and read the error, `journalctl -b -u UNIT.mount`."}
	codeFstabOtherDevice = runner.Code{ID: "fstab-mounted-device-differs", Group: "The mounted system", Status: "warn",
		Meaning: "The mount point is mounted from another device than the one the entry names (a disk reorder happened since it was mounted, or someone mounted by hand); detail `mounted_device`, `fstab_device`.",
		Fix: "Find which disk holds the data, then fix the line or remount."}
	codeFstabDuplicate = runner.Code{ID: "fstab-duplicate-id", Group: "The mounted system", Status: "warn",
		Meaning: "A UUID, label or PARTUUID that fstab does not reference is carried by several unrelated devices.",
		Fix: "Give the copy a new identity before anything refers to it."}
	codeFstabLinkMismatch = runner.Code{ID: "fstab-udev-link-mismatch", Group: "The mounted system", Status: "warn",
		Meaning: "A `/dev/disk/by-*` link points at a device whose superblock or partition table says otherwise (stale after a re-format).",
		Fix: "`udevadm trigger --settle`, or reboot."}

	// When an entry cannot be verified
	codeFstabNotLive = runner.Code{ID: "fstab-not-live", Group: "When an entry cannot be verified", Status: "skip",
		Meaning: "`--root` is an image, not the running system: resolution, duplicates and mount state are not checked."}
	codeFstabProbeLimited = runner.Code{ID: "fstab-probe-limited", Group: "When an entry cannot be verified", Status: "skip",
		Meaning: "Some devices could not be opened (not root, or a device cgroup/security policy), or were not reached before the deadline; detail `unreadable_devices`, `errors`, `udev_links`, `notes`.",
		Fix: "Run as root for a complete view."}
	codeFstabUnverifiable = runner.Code{ID: "fstab-device-unverifiable", Group: "When an entry cannot be verified", Status: "skip",
		Meaning: "The entry cannot be resolved here: a `by-id`/`by-path` link without udev, or an identifier found nowhere while some devices could not be read and there are no udev links.",
		Fix: "Run as root on a system with udev."}
	codeFstabStateUnreadable = runner.Code{ID: "fstab-state-unreadable", Group: "When an entry cannot be verified", Status: "error",
		Meaning: "`/proc/self/mountinfo` or `/sys/class/block` cannot be read, or the deadline passed before every entry was judged.",
		Fix: "Check that `/proc` and `/sys` are mounted; raise `checks.fstab.timeout`."}
)
