package fstab

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The fixes of an entry named by a kernel device name or a by-path link,
// shared by the two codes: the same line replaces either.
const (
	persistentFix     = "Replace line {line} of `/etc/fstab` with `{fstab_line}`."
	persistentRootFix = "Replace line {line} of `/etc/fstab` in the image with `{fstab_line}`, putting in the UUID the image's build gave that filesystem (or `LABEL=` and a label the build sets)."
)

// The cases of persistentFix, by whether the device was probed and
// whether cloud-init wrote the line.
const (
	caseUnprobed      = "when the device could not be probed"
	caseCloud         = "when cloud-init wrote the line"
	caseCloudUnprobed = "when cloud-init wrote the line and the device could not be probed"
	caseCloudImage    = "when cloud-init wrote the line, under `--root`"
)

var persistentCases = []runner.Case{
	{When: caseUnprobed, Fix: "Run `blkid {device}` and replace line {line} of `/etc/fstab` with `{fstab_line}`, putting in the UUID it prints."},
	{When: caseCloud, Fix: "Change the device in the `mounts:` or `swap:` user-data that cloud-init wrote line {line} of `/etc/fstab` from, and replace the line with `{fstab_line}`."},
	{When: caseCloudUnprobed, Fix: "Change the device in the `mounts:` or `swap:` user-data that cloud-init wrote line {line} of `/etc/fstab` from, run `blkid {device}` and replace the line with `{fstab_line}`, putting in the UUID it prints."},
	{When: caseCloudImage, Fix: "Change the device in the `mounts:` or `swap:` user-data that cloud-init wrote line {line} of `/etc/fstab` from, and replace the line in the image with `{fstab_line}`, putting in the UUID the image's build gave that filesystem."},
}

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
		Fix:     "Run guestcheck as root, or make `/etc/fstab` readable by the user that runs it.",
		Cases: []runner.Case{
			runner.RootDenied("`/etc/fstab`"),
			{When: "when the read fails otherwise", Fix: "Repair or restore `/etc/fstab` ({error}), then run guestcheck again."},
		}}
	codeFstabSyntax = runner.Code{ID: "fstab-syntax-error", Group: "The file and its entries", Status: "fail",
		Meaning: "libmount rejects the line, so mount and systemd skip it: fewer than 3 fields, a dump or pass field that is not a number (a `# comment` after the fourth or fifth field is read as one), or a NUL byte in the line; detail `entry` is `FILE:LINE`, `text` the line (a NUL shown as `\\000`), `reason` what is wrong.",
		Fix:     "Correct line {line} of `/etc/fstab` ({reason}) or comment it out with `#`: mount and systemd-fstab-generator skip it, so what it should mount is not mounted."}
	codeFstabMountPoint = runner.Code{ID: "fstab-mount-point-invalid", Group: "The file and its entries", Status: "fail",
		Meaning: "The mount point of a non-swap entry is relative (or empty): libmount reads the line, but systemd-fstab-generator ignores it (\"is not a valid path, ignoring\"), so nothing is mounted at boot.",
		Fix:     "Write the mount point of line {line} of `/etc/fstab` as an absolute path (`{fstab_line}`), or comment the line out.",
		Cases: []runner.Case{
			{When: "when the mount point is empty", Fix: "Give line {line} of `/etc/fstab` an absolute mount point, or comment the line out."},
		}}
	codeFstabIgnoredText = runner.Code{ID: "fstab-ignored-text", Group: "The file and its entries", Status: "warn",
		Meaning: "The line has text after the sixth field (detail `ignored`), or is a last line without a final newline that holds a NUL byte; mount reads past both without a word, so an option written there is not applied.",
		Fix:     "Move a comment after the sixth field of line {line} of `/etc/fstab` to its own line starting with `#`, and options into the fourth field: `{fstab_line}`.",
		Cases: []runner.Case{
			{When: "when the line holds a NUL byte", Fix: "Rewrite line {line} of `/etc/fstab` without the NUL byte and end the file with a newline: `{fstab_line}`."},
		}}

	// Device names
	codeFstabKernelName = runner.Code{ID: "fstab-kernel-device-name", Group: "Device names", Status: "fail, or warn",
		Meaning: "The entry names a kernel device (`/dev/vdb`). Fail without `nofail`; warn with `nofail`, `noauto` or `x-systemd.automount`. Entries tagged `comment=cloudconfig` say \"written by cloud-init\".",
		Fix:     persistentFix, RootFix: persistentRootFix, Cases: persistentCases}
	codeFstabByPath = runner.Code{ID: "fstab-by-path-device-name", Group: "Device names", Status: "warn",
		Meaning: "The entry uses `/dev/disk/by-path/…`, which changes when the disk moves to another PCI slot or SCSI target.",
		Fix:     persistentFix, RootFix: persistentRootFix, Cases: persistentCases}
	codeFstabMissing = runner.Code{ID: "fstab-device-missing", Group: "Device names", Status: "fail, or warn",
		Meaning: "No present block device has the identifier, or the path does not exist / has no medium. Fail unless the entry has `nofail`, `noauto` or `x-systemd.automount`, or is a swap; detail `why` says what the boot does, `case_mismatch` points out an identifier that differs only in case.",
		Fix:     "Attach the disk that carries `{spec}`, or correct the identifier on line {line} of `/etc/fstab` (`blkid` lists the present ones), or add `nofail,x-systemd.device-timeout=10s` so that the boot continues without it: `{fstab_line}`.",
		Cases: []runner.Case{
			{When: "when the entry has `nofail`, `noauto` or `x-systemd.automount`", Fix: "Attach the disk that carries `{spec}`, or correct the identifier on line {line} of `/etc/fstab` (`blkid` lists the present ones)."},
		}}
	codeFstabMalformedID = runner.Code{ID: "fstab-id-malformed", Group: "Device names", Status: "fail, or warn",
		Meaning: "A `UUID=` or `PARTUUID=` value (or a `/dev/disk/by-uuid/`, `by-partuuid/` link) is no identifier any device carries: not hexadecimal digits in dash-separated groups, or too few or too many of them (detail `reason`). Judged without the running system too, under `--root IMAGE`. Fail unless the entry has `nofail`, `noauto` or `x-systemd.automount`, or is a swap.",
		Fix:     "Replace `{spec}` on line {line} of `/etc/fstab` with `{kind}=` and the value `blkid -s {kind} -o value DEVICE` prints for the filesystem it means, or comment the line out.",
		RootFix: "Replace `{spec}` on line {line} of `/etc/fstab` in the image with `{kind}=` and the value the image's build gave the filesystem it means, or comment the line out."}
	codeFstabAmbiguous = runner.Code{ID: "fstab-device-ambiguous", Group: "Device names", Status: "fail",
		Meaning: "The identifier matches more than one block device (a cloned or restored disk); detail `devices`.",
		Fix:     "Give the copy a new identity ({command}) or detach it, so that `{spec}` names one device."}

	// Mount options
	codeFstabNoNofail = runner.Code{ID: "fstab-data-without-nofail", Group: "Mount options", Status: "warn",
		Meaning: "A data filesystem (on another disk than `/`, or outside the OS mount points) has no `nofail`: if its disk is missing, the boot stops in emergency mode. Detail `data_judged_by`.",
		Fix:     "Add `nofail` (and `x-systemd.device-timeout=10s`, which bounds the wait for a hot-plugged disk) to line {line} of `/etc/fstab`: `{fstab_line}`."}
	codeFstabNoNetdev = runner.Code{ID: "fstab-network-without-netdev", Group: "Mount options", Status: "warn",
		Meaning: "A network filesystem without `_netdev` may be mounted before the network is up.",
		Fix:     "Add `_netdev` to the options of line {line} of `/etc/fstab`: `{fstab_line}`."}

	// The mounted system
	codeFstabNotMounted = runner.Code{ID: "fstab-not-mounted", Group: "The mounted system", Status: "warn",
		Meaning: "A non-`noauto` entry is not mounted (or its swap is not active).",
		Fix:     "Run `mount {mount_point}` and read its error, or `journalctl -b -u {unit}` for why the boot did not mount it.",
		Cases: []runner.Case{
			{When: "when the entry is a swap area", Fix: "Run `swapon {spec}` and read its error."},
		}}
	codeFstabOtherDevice = runner.Code{ID: "fstab-mounted-device-differs", Group: "The mounted system", Status: "warn",
		Meaning: "The mount point is mounted from another device than the one the entry names (a disk reorder happened since it was mounted, or someone mounted by hand); detail `mounted_device`, `fstab_device`.",
		Fix:     "Find out which disk holds the data {mount_point} needs, then fix line {line} of `/etc/fstab` or remount it (`umount {mount_point} && mount {mount_point}`)."}
	codeFstabDuplicate = runner.Code{ID: "fstab-duplicate-id", Group: "The mounted system", Status: "warn",
		Meaning: "A UUID, label or PARTUUID that fstab does not reference is carried by several unrelated devices.",
		Fix:     "Give the copy a new identity ({command}) before anything refers to `{id}`."}
	codeFstabLinkMismatch = runner.Code{ID: "fstab-udev-link-mismatch", Group: "The mounted system", Status: "warn",
		Meaning: "A `/dev/disk/by-*` link points at a device whose superblock or partition table says otherwise (stale after a re-format).",
		Fix:     "Run `udevadm trigger --settle` (or reboot) so that udev re-reads the device and rewrites its `/dev/disk` links."}

	// When an entry cannot be verified
	codeFstabNotLive = runner.Code{ID: "fstab-not-live", Group: "When an entry cannot be verified", Status: "skip",
		Meaning: "`--root` is an image, not the running system: resolution, duplicates and mount state are not checked."}
	codeFstabProbeLimited = runner.Code{ID: "fstab-probe-limited", Group: "When an entry cannot be verified", Status: "skip",
		Meaning: "Some devices could not be opened (not root, or a device cgroup/security policy), or were not reached before the deadline; detail `unreadable_devices`, `errors`, `udev_links`, `notes`.",
		Fix:     "Run guestcheck as root so that it can open {devices}.",
		Cases: []runner.Case{
			{When: "when root is denied", Fix: "Find what denies root access to {devices} (a device cgroup, or an SELinux or AppArmor denial in the audit log) and allow guestcheck to read them."},
			{When: "when the probe was cut short", Fix: "Raise `checks.fstab.timeout` in the configuration file if the deadline cut the probe short, else look for I/O errors on the devices in the kernel log (`dmesg`)."},
		}}
	codeFstabUnverifiable = runner.Code{ID: "fstab-device-unverifiable", Group: "When an entry cannot be verified", Status: "skip",
		Meaning: "The entry cannot be resolved here: a `by-id`/`by-path` link without udev, or an identifier found nowhere while some devices could not be read and there are no udev links.",
		Fix:     "Run guestcheck on a system where udev is running (`systemctl status systemd-udevd`), so that `{spec}` can be followed through `/dev/disk`.",
		Cases: []runner.Case{
			{When: "when some devices could not be read", Fix: "Let guestcheck read {devices} (run it as root, or lift the device cgroup or security policy that denies it) so that it can look for `{spec}` there."},
		}}
	codeFstabStateUnreadable = runner.Code{ID: "fstab-state-unreadable", Group: "When an entry cannot be verified", Status: "error",
		Meaning: "`/proc/self/mountinfo` or `/sys/class/block` cannot be read, or the deadline passed before every entry was judged.",
		Fix:     "Make sure `/proc` is mounted (`findmnt /proc`) and readable by the user that runs guestcheck, then run it again.",
		Cases: []runner.Case{
			{When: "when the block devices cannot be listed", Fix: "Make sure `/sys` is mounted (`findmnt /sys`) and readable by the user that runs guestcheck, then run it again."},
			{When: "when the deadline passed", Fix: "Raise `checks.fstab.timeout` in the configuration file, and look for what slows the check down: a device that does not answer, or a hung mount."},
		}}
)

// Codes lists every finding code the check reports, in the order of its
// reference page.
var Codes = []runner.Code{
	codeFstabEntryOK, codeFstabAbsent, codeFstabUnreadable, codeFstabSyntax, codeFstabMountPoint, codeFstabIgnoredText,
	codeFstabKernelName, codeFstabByPath, codeFstabMalformedID, codeFstabMissing, codeFstabAmbiguous,
	codeFstabNoNofail, codeFstabNoNetdev,
	codeFstabNotMounted, codeFstabOtherDevice, codeFstabDuplicate, codeFstabLinkMismatch,
	codeFstabNotLive, codeFstabProbeLimited, codeFstabUnverifiable, codeFstabStateUnreadable,
}
