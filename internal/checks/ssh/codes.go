package ssh

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (

	// The package
	CodeInstalled = runner.Code{ID: "ssh-installed", Group: "The package", Status: "pass",
		Meaning: "sshd's binary exists. Detail `binary`."}
	CodeNotInstalled = runner.Code{ID: "ssh-not-installed", Group: "The package", Status: "fail",
		Meaning: "No sshd: the VM cannot be reached over SSH.",
		Fix:     "Install the OpenSSH server (`apt install openssh-server`, `dnf install openssh-server`), or disable this check with `checks: {ssh: {enabled: false}}` for images reached only through the console.",
		RootFix: "Install the OpenSSH server in the image's build (the openssh-server package), or disable this check with `checks: {ssh: {enabled: false}}` for images reached only through the console."}

	// The unit
	CodeNotLive = runner.Code{ID: "ssh-not-live", Group: "The unit", Status: "skip",
		Meaning: "Under `--root IMAGE` the unit and sockets are not checked."}
	CodeNoSystemd = runner.Code{ID: "ssh-no-systemd", Group: "The unit", Status: "skip",
		Meaning: "systemd is not running, so the unit state is unknown."}
	CodeUnitActive = runner.Code{ID: "ssh-unit-active", Group: "The unit", Status: "pass",
		Meaning: "`ssh.service`/`sshd.service` (or `ssh.socket`) is active. Detail: each unit's state."}
	CodeUnitEnabled = runner.Code{ID: "ssh-unit-enabled", Group: "The unit", Status: "pass",
		Meaning: "Under `--root IMAGE`: the ssh/sshd service or socket is enabled (a link in a `.wants` directory of `/etc/systemd/system`). Detail `unit`."}
	CodeUnitInactive = runner.Code{ID: "ssh-unit-inactive", Group: "The unit", Status: "fail",
		Meaning: "The unit is inactive or failed, or no sshd unit is loaded.",
		Fix:     "Read why with `journalctl -b -u {unit}`, check the configuration with `sshd -t`, then run `systemctl start {unit}`.",
		Cases: []runner.Case{
			{When: "when no sshd unit is loaded",
				Fix: "Install openssh-server, or enable its unit: `systemctl enable --now ssh` (Debian, Ubuntu) or `systemctl enable --now sshd` (RHEL, SUSE)."},
		}}
	CodeUnitDisabled = runner.Code{ID: "ssh-unit-disabled", Group: "The unit", Status: "warn",
		Meaning: "sshd runs now but is not enabled: it will not start at the next boot; under `--root IMAGE`, no sshd unit is enabled in the image (presets applied at first boot are not evaluated).",
		Fix:     "Enable it so that it starts at the next boot: `systemctl enable {unit}`.",
		RootFix: "Enable sshd's unit in the image: `systemctl --root={root} enable ssh` (Debian, Ubuntu) or `systemctl --root={root} enable sshd` (RHEL, SUSE); presets applied at first boot are not evaluated here."}
	CodeUnitMasked = runner.Code{ID: "ssh-unit-masked", Group: "The unit", Status: "fail",
		Meaning: "The unit is masked (on the running system, or by a `/dev/null` link in the image).",
		Fix:     "Unmask and start it: `systemctl unmask {unit} && systemctl enable --now {unit}`.",
		RootFix: "Unmask and enable it in the image: `systemctl --root={root} unmask {unit}`, then `systemctl --root={root} enable {unit}`."}

	// The listening port
	CodeListening = runner.Code{ID: "ssh-listening", Group: "The listening port", Status: "pass",
		Meaning: "Every configured address has a listening socket owned by sshd (or by systemd for socket activation). Detail `listening` (address by process). As non-root the owner may be \"unverified\"."}
	CodeNotListening = runner.Code{ID: "ssh-not-listening", Group: "The listening port", Status: "fail",
		Meaning: "A configured address has no listening socket. Detail `not_listening` with the directive.",
		Fix:     "Look for bind errors in `journalctl -b -u ssh -u sshd`, compare `Port` and `ListenAddress` in sshd's configuration with this VM's addresses (`ip addr`), fix them and restart sshd."}
	CodePortOther = runner.Code{ID: "ssh-port-other-process", Group: "The listening port", Status: "fail",
		Meaning: "The configured address is held by another process. Detail `held_by_other`.",
		Fix:     "Stop the service that holds the port ({held_by}), or move sshd to another `Port`, then restart sshd."}

	// The configuration
	CodeConfigInvalid = runner.Code{ID: "ssh-config-invalid", Group: "The configuration", Status: "fail",
		Meaning: "A line sshd rejects (no argument, invalid quotes, an unsupported value of a judged setting, an unreadable Include): sshd refuses to start or restart. Detail `problems` (`FILE:LINE: reason`).",
		Fix:     "Fix the lines sshd rejects ({problems}) and check with `sshd -t`: sshd refuses to start with them, and a restart or reboot leaves the VM without SSH.",
		RootFix: "Fix the lines sshd rejects ({problems}) in the image: sshd refuses to start with them, and every clone boots without SSH."}
	CodeConfigUnread = runner.Code{ID: "ssh-config-unreadable", Group: "The configuration", Status: "skip/error",
		Meaning: "skip: a configuration file is readable by root only (RHEL ships `sshd_config` 0600), so the addresses, host keys and settings are not judged rather than judged from defaults; error: it cannot be read even as root. Detail `file`, `error`.",
		Fix:     "Check the mode and owner of {file} (`ls -l {file}`), and look for an SELinux or AppArmor denial in the audit log: root itself could not read it.",
		RootFix: "Check the mode and owner of {file} in the image, an SELinux or AppArmor denial (the audit log), or a FUSE or NFS root that squashes root: root itself could not read it.",
		Cases: []runner.Case{
			{When: "when guestcheck is not root",
				Fix: "Run guestcheck as root to have sshd's configuration judged: {file} is readable by root only."},
		}}

	// Host keys
	CodeHostKeyOK = runner.Code{ID: "ssh-hostkey-ok", Group: "Host keys", Status: "pass",
		Meaning: "Host keys exist, parse, match their `.pub` and have accepted modes. Detail `keys` (file, type, SHA256 fingerprint)."}
	CodeHostKeyMissing = runner.Code{ID: "ssh-hostkey-missing", Group: "Host keys", Status: "warn",
		Meaning: "A configured `HostKey` does not exist (missing default keys are not reported: sshd skips them).",
		Fix:     "Generate {path} (`ssh-keygen -A` creates the default types), or remove its HostKey line ({at}).",
		RootFix: "Remove the HostKey line ({at}) in the image, or have a clone generate {path} at first boot (cloud-init's ssh module, sshd-keygen)."}
	CodeHostKeyNone = runner.Code{ID: "ssh-hostkey-none", Group: "Host keys", Status: "fail",
		Meaning: "sshd has no usable host key at all: it exits at start. In a sealed template (detail `template`): no key and nothing generates them at first boot, so clones boot an sshd that cannot start (sealprep's `verify` refuses the same template). Detail `configured`.",
		Fix:     "Generate keys with `ssh-keygen -A` and restart sshd; without a host key sshd exits at start.",
		RootFix: "Have a clone generate its keys at first boot (cloud-init's ssh module, sshd-keygen), or re-seal the image with sealprep, which installs a first-boot generator when nothing else regenerates them; without a host key sshd exits at start.",
		Cases: []runner.Case{
			{When: "in a sealed template",
				Fix: "Install cloud-init's ssh module or sshd-keygen in the image, or re-seal it with sealprep, which installs its own key-generating unit; without a host key sshd exits at start."},
		}}
	CodeHostKeyUnread = runner.Code{ID: "ssh-hostkey-unreadable", Group: "Host keys", Status: "skip/error",
		Meaning: "skip: reading a private key needs root; error: it cannot be read even as root. Detail `path`, `error`.",
		Fix:     "Check {path} with `ls -l {path}` and repair or restore it; if root is denied, look for an SELinux or AppArmor denial in the audit log.",
		RootFix: "Repair or restore {path} in the image.",
		Cases: []runner.Case{
			runner.RootDenied("{path}"),
			{When: "when guestcheck is not root",
				Fix: "Run guestcheck as root to have {path} checked: reading a private key needs root."},
		}}
	CodeHostKeyInvalid = runner.Code{ID: "ssh-hostkey-invalid", Group: "Host keys", Status: "fail",
		Meaning: "A key does not parse as an unencrypted private key: truncated or damaged, passphrase-protected, an OpenSSH-format file with text before its BEGIN line or CRLF line ends (OpenSSH does not load those), or numbers that do not belong together (RSA primes that do not give the modulus, an ECDSA or ed25519 private key that does not give its public key: `ssh-keygen -y` accepts such keys, but sshd cannot sign correctly with them). Detail `error`.",
		Fix:     "Regenerate it: `rm {path} {path}.pub && ssh-keygen -A`, then restart sshd.",
		RootFix: "Remove {path} and {path}.pub from the image (a clone makes its own keys at first boot), or re-seal the image with sealprep (its ssh-host-keys operation)."}
	CodeHostKeyMismatch = runner.Code{ID: "ssh-hostkey-mismatch", Group: "Host keys", Status: "fail",
		Meaning: "The `.pub` file is not the key's public half, or does not parse: clients and cloud-init's published fingerprints disagree with what sshd presents.",
		Fix:     "Recreate it: `ssh-keygen -y -f {path} > {path}.pub`, so that clients and cloud-init's published fingerprints agree with what sshd presents.",
		RootFix: "Remove {path} and {path}.pub from the image (a clone makes its own keys at first boot), or re-seal the image with sealprep (its ssh-host-keys operation)."}
	CodeHostKeyPerms = runner.Code{ID: "ssh-hostkey-permissions", Group: "Host keys", Status: "fail/warn",
		Meaning: "fail: the private key is not owned by root or has group/other bits (0640 with group `ssh_keys` is accepted on RHEL-family systems only); warn: the `.pub` is writable by others or not root's. Detail `mode`, `owner`, `group`.",
		Fix:     "Run `chown root:root {path} && chmod 0600 {path}`: another owner can read or replace the server's identity.",
		RootFix: "Make {path} in the image owned by root with mode 0600: another owner can read or replace the server's identity.",
		Cases: []runner.Case{
			{When: "when only the mode is wrong",
				Fix: "Run `chmod 0600 {path}` and restart sshd: it refuses a host key that others may read."},
			{When: "under an image root, when only the mode is wrong",
				Fix: "Give {path} in the image mode 0600: sshd refuses a host key that others may read."},
			{When: "for the .pub file",
				Fix: "Run `chown root:root {path}.pub && chmod 0644 {path}.pub`."},
			{When: "for the .pub file under an image root",
				Fix: "Make {path}.pub in the image owned by root with mode 0644."},
		}}
	CodeHostKeyNoPub = runner.Code{ID: "ssh-hostkey-pub-missing", Group: "Host keys", Status: "warn",
		Meaning: "A key has no `.pub` file.",
		Fix:     "Recreate it: `ssh-keygen -y -f {path} > {path}.pub`; cloud-init publishes the .pub files to the console for fingerprint checks.",
		RootFix: "Remove {path} and {path}.pub from the image (a clone makes its own keys at first boot), or re-seal the image with sealprep (its ssh-host-keys operation)."}

	// Host keys of a clone
	CodeHostKeyFresh = runner.Code{ID: "ssh-hostkey-fresh", Group: "Host keys of a clone", Status: "pass",
		Meaning: "The keys are newer than this cloud-init instance. Detail `instance_id` (`instance_id_hash` when it is a UUID, which may be the machine-id; messages then show `hash` and its first 8 digits), `instance_started`, `keys` (mtimes)."}
	CodeHostKeyKept = runner.Code{ID: "ssh-hostkey-kept", Group: "Host keys of a clone", Status: "fail",
		Meaning: "Keys predate the instance: the VM kept its template's or original's keys. Detail `older_keys`, `instance_started`.",
		Fix:     "Regenerate them: `rm /etc/ssh/ssh_host_*; ssh-keygen -A; systemctl restart ssh` (`sshd` on RHEL and SUSE), tell users the new fingerprints, and seal templates (sealprep, or cloud-init's `ssh_deletekeys`) before cloning them.",
		RootFix: "Re-seal the image with sealprep (its ssh-host-keys operation), or remove `/etc/ssh/ssh_host_*` from it, so that each clone makes its own."}
	CodeHostKeyTemplate = runner.Code{ID: "ssh-hostkey-template", Group: "Host keys of a clone", Status: "fail",
		Meaning: "A host key is one sealprep's template record lists: every clone of the image presents it. The message names the seal and how the keys survived it: `sealed at TIME by sealprep VERSION without its ssh-host-keys operation` (the template was sealed without removing its keys), or `..., whose ssh-host-keys operation removed them; they were put back since` (the keys were restored after the seal). Detail `keys` (path, type, fingerprint), `record`, `sealed_at`, `sealprep_version`.",
		Fix:     "Regenerate them: `rm /etc/ssh/ssh_host_* && ssh-keygen -A`, restart sshd, and tell clients the new fingerprints; seal the template with sealprep's ssh-host-keys operation so that later clones get their own.",
		RootFix: "Re-seal the image with sealprep (its ssh-host-keys operation), or remove `/etc/ssh/ssh_host_*` from it, so that each clone makes its own."}
	CodeHostKeyUndated = runner.Code{ID: "ssh-hostkey-undated", Group: "Host keys of a clone", Status: "skip",
		Meaning: "No cloud-init instance record to date the keys against."}
	CodeHostKeyTemplateNone = runner.Code{ID: "ssh-hostkey-template-none", Group: "Host keys of a clone", Status: "pass",
		Meaning: "A sealed template (network-identity's rule, detail `template`) holds no host key, and something generates them at first boot: cloud-init's ssh module, an sshd-keygen unit, an ssh unit that runs `ssh-keygen -A`, or sealprep's own unit (detail `regenerator`, named as sealprep names it)."}
	CodeHostKeyInTemplate = runner.Code{ID: "ssh-hostkey-in-template", Group: "Host keys of a clone", Status: "fail",
		Meaning: "A sealed template holds host key files (`/etc/ssh/ssh_host_*`, or a configured key): every clone answers with the same identity. Detail `keys`, `template`.",
		Fix:     "Remove the host key files ({keys}) from the image, or re-seal it with sealprep (its ssh-host-keys operation), so that each clone makes its own at first boot.",
		Cases: []runner.Case{
			{When: "when the template keeps them by choice",
				Fix: "Re-seal the image with sealprep (its ssh-host-keys operation) if clones must not share these host keys."},
		}}

	// Authentication
	CodeAuthOK = runner.Code{ID: "ssh-auth-ok", Group: "Authentication", Status: "pass",
		Meaning: "The five settings meet the baseline. Detail: each value with its file:line, `files`, and where the PasswordAuthentication expectation came from."}
	CodeAuthBaseline = runner.Code{ID: "ssh-auth-baseline", Group: "Authentication", Status: "fail, warn or skip",
		Meaning: "A setting's effective value is outside the baseline; the message names the file and line that won. Detail `setting`, `value`, `at`, `allowed`, `expected_from`. " +
			"`PasswordAuthentication yes` under the default baseline (neither `ssh.baseline` nor cloud-init's `ssh_pwauth` asks for a value, as with Debian's cloud.cfg) is judged by the accounts it opens, read from `/etc/shadow` (detail `accounts`, names only, never a hash): " +
			"fail when an account has a usable password hash or an empty password field; warn when every account is locked or has none (`!`, `*`, `!!`, `!` before a hash), since a password set later would be reachable; skip when guestcheck is not root and cannot read `/etc/shadow`; fail as for any setting when the file is missing or has lines that do not parse.",
		Fix:     "Set `{setting} {value}` at {at} (the first value wins, so change that line rather than adding one later), check that `sshd -T` prints `{setting} {value}` (it spells the name in lower case), and reload sshd.",
		RootFix: "Set `{setting} {value}` at {at} in the image (the first value wins, so change that line rather than adding one later).",
		Cases: []runner.Case{
			{When: "when the value is sshd's default",
				Fix: "Set `{setting} {value}` in a drop-in in `/etc/ssh/sshd_config.d/` that sorts before the others (the first value wins), check that `sshd -T` prints `{setting} {value}` (it spells the name in lower case), and reload sshd."},
			{When: "under an image root, when the value is sshd's default",
				Fix: "Set `{setting} {value}` in the image, in a drop-in in `/etc/ssh/sshd_config.d/` that sorts before the others (the first value wins)."},
			{When: "when /etc/shadow is readable by root only",
				Fix: "Run guestcheck as root to have `/etc/shadow` read: `PasswordAuthentication yes` fails only where an account has a password it accepts."},
		}}
	CodeAuthConditional = runner.Code{ID: "ssh-auth-conditional", Group: "Authentication", Status: "warn",
		Meaning: "A `Match` block sets a judged setting outside the baseline for the connections it matches. Detail `match`, `at`.",
		Fix:     "Make sure the Match condition at {at} is as narrow as intended, or set `{setting} {value}` in that block."}
	CodePwAuthUnread = runner.Code{ID: "ssh-pwauth-unread", Group: "Authentication", Status: "skip/error",
		Meaning: "skip: `cloud-config.txt` is readable by root only, so `ssh_pwauth` was not consulted; error: it could not be parsed.",
		Fix:     "Check the user-data with `cloud-init schema --system` and correct it.",
		RootFix: "Check `/var/lib/cloud/instance/cloud-config.txt` in the image: run `cloud-init schema -c FILE` on a copy of it, and correct the user-data the image was built with.",
		Cases: []runner.Case{
			{When: "when guestcheck is not root",
				Fix: "Run guestcheck as root to have cloud-init's `ssh_pwauth` read from `/var/lib/cloud/instance/cloud-config.txt`."},
		}}

	// When the state cannot be read
	CodeUnreadable = runner.Code{ID: "ssh-state-unreadable", Group: "When the state cannot be read", Status: "error",
		Meaning: "The unit state or the socket tables could not be read, or the deadline passed.",
		Fix:     "Check that systemd answers on D-Bus (`systemctl status ssh sshd`).",
		Cases: []runner.Case{
			{When: "when guestcheck is not root",
				Fix: "Run guestcheck as root, or check that systemd answers on D-Bus (`systemctl status ssh sshd`)."},
			{When: "when the listening sockets cannot be read",
				Fix: "Run guestcheck on the guest itself, with `/proc` mounted."},
			{When: "when the deadline passed",
				Fix: "Raise `checks.ssh.timeout` in the configuration file."},
		}}
)

// Codes lists every code Run can emit, in the order of the reference
// page.
var Codes = []runner.Code{
	CodeInstalled, CodeNotInstalled,
	CodeNotLive, CodeNoSystemd, CodeUnitActive, CodeUnitEnabled, CodeUnitInactive, CodeUnitDisabled, CodeUnitMasked,
	CodeListening, CodeNotListening, CodePortOther,
	CodeConfigInvalid, CodeConfigUnread,
	CodeHostKeyOK, CodeHostKeyMissing, CodeHostKeyNone, CodeHostKeyUnread, CodeHostKeyInvalid, CodeHostKeyMismatch, CodeHostKeyPerms, CodeHostKeyNoPub,
	CodeHostKeyFresh, CodeHostKeyKept, CodeHostKeyTemplate, CodeHostKeyUndated, CodeHostKeyTemplateNone, CodeHostKeyInTemplate,
	CodeAuthOK, CodeAuthBaseline, CodeAuthConditional, CodePwAuthUnread,
	CodeUnreadable,
}
