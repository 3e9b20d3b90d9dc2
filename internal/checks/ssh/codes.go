package sshcheck

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (

	// The package
	CodeInstalled = runner.Code{ID: "ssh-installed", Group: "The package", Status: "pass",
		Meaning: "sshd's binary exists. Detail `binary`."}
	CodeNotInstalled = runner.Code{ID: "ssh-not-installed", Group: "The package", Status: "fail",
		Meaning: "No sshd: the VM cannot be reached over SSH.",
		Fix: "Install openssh-server, or set `checks: {ssh: {enabled: false}}` for console-only images."}

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
		Fix: "`journalctl -b -u ssh`, `sshd -t`, then `systemctl start ssh`."}
	CodeUnitDisabled = runner.Code{ID: "ssh-unit-disabled", Group: "The unit", Status: "warn",
		Meaning: "sshd runs now but is not enabled: it will not start at the next boot; under `--root IMAGE`, no sshd unit is enabled in the image (presets applied at first boot are not evaluated).",
		Fix: "`systemctl enable ssh` (or `sshd`); in an image `systemctl --root=/mnt/image enable ssh`."}
	CodeUnitMasked = runner.Code{ID: "ssh-unit-masked", Group: "The unit", Status: "fail",
		Meaning: "The unit is masked (on the running system, or by a `/dev/null` link in the image).",
		Fix: "`systemctl unmask ssh && systemctl enable --now ssh`."}

	// The listening port
	CodeListening = runner.Code{ID: "ssh-listening", Group: "The listening port", Status: "pass",
		Meaning: "Every configured address has a listening socket owned by sshd (or by systemd for socket activation). Detail `listening` (address by process). As non-root the owner may be \"unverified\"."}
	CodeNotListening = runner.Code{ID: "ssh-not-listening", Group: "The listening port", Status: "fail",
		Meaning: "A configured address has no listening socket. Detail `not_listening` with the directive.",
		Fix: "Look for bind errors in `journalctl -b -u ssh`, compare Port/ListenAddress with the VM's addresses."}
	CodePortOther = runner.Code{ID: "ssh-port-other-process", Group: "The listening port", Status: "fail",
		Meaning: "The configured address is held by another process. Detail `held_by_other`.",
		Fix: "Stop that service or move sshd's Port."}

	// The configuration
	CodeConfigInvalid = runner.Code{ID: "ssh-config-invalid", Group: "The configuration", Status: "fail",
		Meaning: "A line sshd rejects (no argument, invalid quotes, an unsupported value of a judged setting, an unreadable Include): sshd refuses to start or restart. Detail `problems` (`FILE:LINE: reason`).",
		Fix: "Fix the lines, check with `sshd -t`."}
	CodeConfigUnread = runner.Code{ID: "ssh-config-unreadable", Group: "The configuration", Status: "skip/error",
		Meaning: "skip: a configuration file is readable by root only (RHEL ships `sshd_config` 0600), so the addresses, host keys and settings are not judged rather than judged from defaults; error: it cannot be read even as root. Detail `file`, `error`.",
		Fix: "Run as root; check the file's mode."}

	// Host keys
	CodeHostKeyOK = runner.Code{ID: "ssh-hostkey-ok", Group: "Host keys", Status: "pass",
		Meaning: "Host keys exist, parse, match their `.pub` and have accepted modes. Detail `keys` (file, type, SHA256 fingerprint)."}
	CodeHostKeyMissing = runner.Code{ID: "ssh-hostkey-missing", Group: "Host keys", Status: "warn",
		Meaning: "A configured `HostKey` does not exist (missing default keys are not reported: sshd skips them).",
		Fix: "`ssh-keygen -A`, or remove the HostKey line."}
	CodeHostKeyNone = runner.Code{ID: "ssh-hostkey-none", Group: "Host keys", Status: "fail",
		Meaning: "sshd has no usable host key at all: it exits at start. In a sealed template (detail `template`): no key and nothing generates them at first boot, so clones boot an sshd that cannot start (sealprep's `verify` refuses the same template). Detail `configured`.",
		Fix: "`ssh-keygen -A` and restart sshd; in a template, install cloud-init's ssh module or sshd-keygen in the image, or re-seal it with sealprep, which installs its own unit."}
	CodeHostKeyUnread = runner.Code{ID: "ssh-hostkey-unreadable", Group: "Host keys", Status: "skip/error",
		Meaning: "skip: reading a private key needs root; error: it cannot be read even as root. Detail `path`, `error`.",
		Fix: "Run as root; `ls -l KEY`."}
	CodeHostKeyInvalid = runner.Code{ID: "ssh-hostkey-invalid", Group: "Host keys", Status: "fail",
		Meaning: "A key does not parse as an unencrypted private key: truncated or damaged, passphrase-protected, an OpenSSH-format file with text before its BEGIN line or CRLF line ends (OpenSSH does not load those), or numbers that do not belong together (see below). Detail `error`.",
		Fix: "`rm` it and its `.pub`, `ssh-keygen -A`, restart sshd."}
	CodeHostKeyMismatch = runner.Code{ID: "ssh-hostkey-mismatch", Group: "Host keys", Status: "fail",
		Meaning: "The `.pub` file is not the key's public half, or does not parse: clients and cloud-init's published fingerprints disagree with what sshd presents.",
		Fix: "`ssh-keygen -y -f KEY > KEY.pub`."}
	CodeHostKeyPerms = runner.Code{ID: "ssh-hostkey-permissions", Group: "Host keys", Status: "fail/warn",
		Meaning: "fail: the private key is not owned by root or has group/other bits (0640 with group `ssh_keys` is accepted on RHEL-family systems only); warn: the `.pub` is writable by others or not root's. Detail `mode`, `owner`, `group`.",
		Fix: "`chown root:root KEY && chmod 0600 KEY`."}
	CodeHostKeyNoPub = runner.Code{ID: "ssh-hostkey-pub-missing", Group: "Host keys", Status: "warn",
		Meaning: "A key has no `.pub` file.",
		Fix: "`ssh-keygen -y -f KEY > KEY.pub`."}

	// Host keys of a clone
	CodeHostKeyFresh = runner.Code{ID: "ssh-hostkey-fresh", Group: "Host keys of a clone", Status: "pass",
		Meaning: "The keys are newer than this cloud-init instance. Detail `instance_id`, `instance_started`, `keys` (mtimes)."}
	CodeHostKeyKept = runner.Code{ID: "ssh-hostkey-kept", Group: "Host keys of a clone", Status: "fail",
		Meaning: "Keys predate the instance: the VM kept its template's or original's keys. Detail `older_keys`, `instance_started`.",
		Fix: "`rm /etc/ssh/ssh_host_*; ssh-keygen -A; systemctl restart ssh`; seal templates (sealprep, or cloud-init's `ssh_deletekeys`)."}
	CodeHostKeyTemplate = runner.Code{ID: "ssh-hostkey-template", Group: "Host keys of a clone", Status: "fail",
		Meaning: "A host key is one sealprep's template record lists: every clone of the image presents it. The message names the seal and how the keys survived it: `sealed at TIME by sealprep VERSION without its ssh-host-keys operation` (the template was sealed without removing its keys), or `..., whose ssh-host-keys operation removed them; they were put back since` (the keys were restored after the seal). Detail `keys` (path, type, fingerprint), `record`, `sealed_at`, `sealprep_version`.",
		Fix: "`rm /etc/ssh/ssh_host_* && ssh-keygen -A`, restart sshd, tell clients the new fingerprints; seal the template with `ssh-host-keys`."}
	CodeHostKeyUndated = runner.Code{ID: "ssh-hostkey-undated", Group: "Host keys of a clone", Status: "skip",
		Meaning: "No cloud-init instance record to date the keys against."}
	CodeHostKeyTemplateNone = runner.Code{ID: "ssh-hostkey-template-none", Group: "Host keys of a clone", Status: "pass",
		Meaning: "A sealed template (network-identity's rule, detail `template`) holds no host key, and something generates them at first boot: cloud-init's ssh module, an sshd-keygen unit, an ssh unit that runs `ssh-keygen -A`, or sealprep's own unit (detail `regenerator`, named as sealprep names it)."}
	CodeHostKeyInTemplate = runner.Code{ID: "ssh-hostkey-in-template", Group: "Host keys of a clone", Status: "fail",
		Meaning: "A sealed template holds host key files (`/etc/ssh/ssh_host_*`, or a configured key): every clone answers with the same identity. Detail `keys`, `template`.",
		Fix: "Remove `/etc/ssh/ssh_host_*` in the image, or re-seal it with sealprep (its `ssh-host-keys` operation)."}

	// Authentication
	CodeAuthOK = runner.Code{ID: "ssh-auth-ok", Group: "Authentication", Status: "pass",
		Meaning: "The five settings meet the baseline. Detail: each value with its file:line, `files`, and where the PasswordAuthentication expectation came from."}
	CodeAuthBaseline = runner.Code{ID: "ssh-auth-baseline", Group: "Authentication", Status: "fail",
		Meaning: "A setting's effective value is outside the baseline; the message names the file and line that won. Detail `setting`, `value`, `at`, `allowed`, `expected_from`.",
		Fix: "Change that line (the first value wins, so a later line does not help), check with `sshd -T`, reload sshd."}
	CodeAuthConditional = runner.Code{ID: "ssh-auth-conditional", Group: "Authentication", Status: "warn",
		Meaning: "A `Match` block sets a judged setting outside the baseline for the connections it matches. Detail `match`, `at`.",
		Fix: "Narrow the Match condition, or set the baseline value in the block."}
	CodePwAuthUnread = runner.Code{ID: "ssh-pwauth-unread", Group: "Authentication", Status: "skip/error",
		Meaning: "skip: `cloud-config.txt` is readable by root only, so `ssh_pwauth` was not consulted; error: it could not be parsed.",
		Fix: "Run as root; `cloud-init schema --system`."}

	// When the state cannot be read
	CodeUnreadable = runner.Code{ID: "ssh-state-unreadable", Group: "When the state cannot be read", Status: "error",
		Meaning: "The unit state or the socket tables could not be read, or the deadline passed.",
		Fix: "Run as root on the guest; raise `checks.ssh.timeout`."}
)
