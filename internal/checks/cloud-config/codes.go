package cloudconfig

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// reprovision and rebuild end an account fix: cloud-init applies users
// only at an instance's first boot, so a fix by hand does not reach the
// next instance. rebuild is the image root's, where usermod and friends
// would change the host's own accounts.
const (
	reprovision = " As cloud-init applies users only at an instance's first boot, also fix the image or the user-data and re-provision."
	rebuild     = " As cloud-init applies users only at an instance's first boot, also fix the image's build or its user-data and rebuild it."
)

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (
	codeNoCloudInit = runner.Code{ID: "cloud-config-no-cloud-init", Status: "skip",
		Meaning: "cloud-init is not installed"}
	codeNoUserData = runner.Code{ID: "cloud-config-no-user-data", Status: "skip",
		Meaning: "no `cloud-config.txt` for this instance: no cloud-config user-data, or cloud-init has not run"}
	codeNotRoot = runner.Code{ID: "cloud-config-not-root", Status: "skip",
		Meaning: "the 0600 user-data cannot be read as non-root",
		Fix:     "Run guestcheck as root to compare the user-data with the system."}
	codeUnreadable = runner.Code{ID: "cloud-config-unreadable", Status: "error",
		Meaning: "a file the check needs cannot be read (or the check was interrupted)",
		Fix:     "Find out why {file} cannot be read: a damaged filesystem, or a `--root` that is not the guest's root.",
		Cases: []runner.Case{
			{When: "when guestcheck is not root", Fix: "Run guestcheck as root, or make {file} readable."},
			runner.RootDenied("{file}"),
			{When: "when the file is missing", Fix: "Restore {file} from a backup, or reinstall the package that owns it."},
			{When: "when the file is damaged", Fix: "Repair {file}, or restore it from a backup."},
			{When: "when the account databases have bad lines", Fix: "Repair the lines of /etc/passwd, /etc/group or /etc/shadow that the message names (`pwck -r` and `grpck -r` list them)."},
			{When: "when the check was interrupted", Fix: "Raise `checks.cloud-config.timeout` in the configuration file."},
		}}
	codeInvalidYAML = runner.Code{ID: "cloud-config-invalid-yaml", Status: "fail",
		Meaning: "cloud-init cannot load the user-data, so it applied none of it (file:line in the message)",
		Fix:     "Fix the YAML in the instance's user-data (check it with `cloud-init schema -c FILE --annotate`) and re-provision the instance."}
	codeSchemaValid = runner.Code{ID: "cloud-config-schema-valid", Status: "pass",
		Meaning: "valid under the installed schema, only known keys"}
	codeSchemaError = runner.Code{ID: "cloud-config-schema-error", Status: "fail",
		Meaning: "a key has the wrong type or shape per the installed schema",
		Fix:     "Correct {key} in the user-data as `cloud-init schema -c FILE --annotate` explains: cloud-init may skip or misapply a key of the wrong shape."}
	codeDeprecated = runner.Code{ID: "cloud-config-schema-deprecated", Status: "warn",
		Meaning: "a key or form is deprecated in the installed version",
		Fix:     "Replace {key} in the user-data with its documented successor before a cloud-init upgrade drops it."}
	codeUnknownKey = runner.Code{ID: "cloud-config-unknown-key", Status: "fail",
		Meaning: "a top-level key the installed cloud-init does not know; ignored silently; with a did-you-mean",
		Fix:     "Remove {key} from the user-data, or spell it as a key this cloud-init knows.",
		Cases: []runner.Case{{When: "when a known key is spelt alike",
			Fix: "Rename {key} to {suggestion} in the user-data and re-provision: cloud-init silently ignored it."}}}
	codeSchemaSkipped = runner.Code{ID: "cloud-config-schema-unavailable", Status: "skip",
		Meaning: "the guest has no schema file"}
	codeUsersInvalid = runner.Code{ID: "cloud-config-users-invalid", Status: "fail",
		Meaning: "users/groups cannot be normalised (wrong types, `default` with no default user)",
		Fix:     "Write `users` in the user-data as a list of mappings (name, groups, shell, sudo, ssh_authorized_keys) as cloud-init's documentation shows."}
	codeUserOK = runner.Code{ID: "cloud-config-user-ok", Status: "pass",
		Meaning: "the user exists with everything asked"}
	codeUserMissing = runner.Code{ID: "cloud-config-user-missing", Status: "fail",
		Meaning: "the user does not exist",
		Fix:     "Read `/var/log/cloud-init.log` for the useradd error (a clash with an existing group or UID is common)." + reprovision,
		RootFix: "Read `/var/log/cloud-init.log` in the image for the useradd error (a clash with an existing group or UID is common)." + rebuild}
	codeUserShell = runner.Code{ID: "cloud-config-user-shell", Status: "fail",
		Meaning: "the login shell differs (cloud-init never changes an existing user)",
		Fix:     "Run `usermod -s {shell} {user}`: cloud-init does not change an existing user." + reprovision,
		RootFix: "Set {user}'s shell to {shell} in /etc/passwd in the image: cloud-init does not change an existing user." + rebuild}
	codeUserHome = runner.Code{ID: "cloud-config-user-home", Status: "fail",
		Meaning: "the home differs from `homedir`, or does not exist",
		Fix:     "Run `usermod -d {home} -m {user}`." + reprovision,
		RootFix: "Set {user}'s home to {home} in /etc/passwd in the image, and move the directory there." + rebuild,
		Cases: []runner.Case{
			{When: "when the home directory is missing", Fix: "Create the home directory with `mkhomedir_helper {user}`." + reprovision},
			{When: "when the home directory is missing in an image", Fix: "Create {home} in the image, owned by {user}." + rebuild},
		}}
	codeUserPrimaryGroup = runner.Code{ID: "cloud-config-user-primary-group", Status: "fail",
		Meaning: "the primary group differs",
		Fix:     "Run `usermod -g {group} {user}`." + reprovision,
		RootFix: "Set {user}'s group in /etc/passwd in the image to the GID of {group}." + rebuild}
	codeUserGroups = runner.Code{ID: "cloud-config-user-groups", Status: "fail",
		Meaning: "the user is not in some requested groups",
		Fix:     "Run `usermod -aG {groups} {user}`." + reprovision,
		RootFix: "Add {user} to {groups} in /etc/group in the image." + rebuild}
	codeUserLock = runner.Code{ID: "cloud-config-user-lock-passwd", Status: "fail",
		Meaning: "`lock_passwd` is true but the password is usable (or no shadow entry)",
		Fix:     "Run `passwd -l {user}`; cloud-init locks the password only when it creates or updates the user.",
		RootFix: "Lock {user}'s password in /etc/shadow in the image (a ! before the hash); cloud-init locks it only when it creates or updates the user.",
		Cases: []runner.Case{
			{When: "when the user has no shadow entry", Fix: "Run `pwconv` to rebuild /etc/shadow."},
			{When: "when a user of an image has no shadow entry", Fix: "Add a line for {user} to /etc/shadow in the image (`pwconv --root DIR` on the image's root rebuilds the file)."},
		}}
	codeUserPassword = runner.Code{ID: "cloud-config-user-password", Status: "fail",
		Meaning: "a password was asked but none is set, or the hash is not the requested one",
		Fix:     "Read `/var/log/cloud-init.log` for the chpasswd error." + reprovision,
		RootFix: "Read `/var/log/cloud-init.log` in the image for the chpasswd error." + rebuild,
		Cases: []runner.Case{
			{When: "when the hash was changed", Fix: "Set {user}'s password again with `usermod -p`: something changed it after cloud-init set it."},
			{When: "when the hash in an image was changed", Fix: "Set {user}'s hash in /etc/shadow in the image again: something changed it after cloud-init set it."},
		}}
	codeSudoMissing = runner.Code{ID: "cloud-config-sudo-rule-missing", Status: "fail",
		Meaning: "the sudo rule is not in `90-cloud-init-users`",
		Fix:     "Add the rule `{rule}` with `visudo -f {file}`." + reprovision,
		RootFix: "Add the rule `{rule}` to {file} in the image (`visudo -c -f FILE` checks a copy)." + rebuild}
	codeSudoNotIncluded = runner.Code{ID: "cloud-config-sudo-not-included", Status: "fail",
		Meaning: "the rule is there but `/etc/sudoers` does not include the directory",
		Fix:     "Add `@includedir /etc/sudoers.d` to /etc/sudoers with `visudo`.",
		RootFix: "Add `@includedir /etc/sudoers.d` to /etc/sudoers in the image."}
	codeKeyMissing = runner.Code{ID: "cloud-config-key-missing", Status: "fail",
		Meaning: "a requested key is not in the user's authorized_keys (shown by fingerprint), or is not a key",
		Fix:     "Add the key to {file}." + reprovision,
		RootFix: "Add the key to {file} in the image." + rebuild,
		Cases: []runner.Case{{When: "when the requested key does not parse",
			Fix: "Give the key in the user-data as `TYPE BASE64 [COMMENT]`, one key per list item."}}}
	codeKeyStrictModes = runner.Code{ID: "cloud-config-key-strictmodes", Status: "fail",
		Meaning: "sshd's StrictModes rejects the key file or a directory above it (owner or group/other write)",
		Fix:     "Run `chmod go-w {path}` and `chown {user} {path}`.",
		RootFix: "Make {path} in the image owned by {user} (its UID in the image's /etc/passwd) and not writable by group or others."}
	codeRootKeyPrefix = runner.Code{ID: "cloud-config-root-key-prefix", Status: "pass/fail",
		Meaning: "root's copy of a top-level key carries (or wrongly lacks) the `disable_root` refusal command, or is missing",
		Fix:     "Add the key to /root/.ssh/authorized_keys with the options cloud-init gives it (detail `asked`), or re-provision.",
		Cases: []runner.Case{
			{When: "when the refusal command is missing", Fix: "Prefix the key in /root/.ssh/authorized_keys with cloud-init's `disable_root_opts` (detail `asked`), or remove the key."},
			{When: "when options are left over", Fix: "Remove the options from the key in /root/.ssh/authorized_keys."},
		}}
	codeGroupMissing = runner.Code{ID: "cloud-config-group-missing", Status: "fail",
		Meaning: "a top-level group does not exist or lacks members",
		Fix:     "Create the group with `groupadd {group}`." + reprovision,
		RootFix: "Add the group {group} to /etc/group in the image." + rebuild,
		Cases: []runner.Case{
			{When: "when members are missing", Fix: "Add {members} to {group} with `gpasswd -a USER {group}` for each of them." + reprovision},
			{When: "when members are missing in an image", Fix: "Add {members} to {group}'s line in /etc/group in the image." + rebuild},
		}}
	codePwauthOK = runner.Code{ID: "cloud-config-ssh-pwauth-ok", Status: "pass",
		Meaning: "sshd's effective settings agree with `ssh_pwauth`"}
	codePwauthMismatch = runner.Code{ID: "cloud-config-ssh-pwauth-mismatch", Status: "fail",
		Meaning: "effective `PasswordAuthentication` (or keyboard-interactive with PAM) disagrees; names the winning file:line",
		Fix:     "Remove or change the PasswordAuthentication line at {at}, and reload sshd.",
		RootFix: "Remove or change the PasswordAuthentication line at {at} in the image.",
		Cases: []runner.Case{
			{When: "when PAM takes passwords", Fix: "Set `KbdInteractiveAuthentication no` in /etc/ssh/sshd_config (before any Include that sets it), and reload sshd."},
			{When: "when PAM takes passwords in an image", Fix: "Set `KbdInteractiveAuthentication no` in /etc/ssh/sshd_config in the image (before any Include that sets it)."},
		}}
	codePwauthMatch = runner.Code{ID: "cloud-config-ssh-pwauth-match-override", Status: "warn",
		Meaning: "a `Match` block sets it otherwise for the connections it matches",
		Fix:     "Remove {key} from the Match block at {at} unless the exception is intended."}
	codePwauthUnjudged = runner.Code{ID: "cloud-config-ssh-pwauth-unjudged", Status: "pass/warn/skip",
		Meaning: "`unchanged`/null (pass), a value cloud-init ignores (warn), no readable sshd_config (skip)",
		Fix:     "Set `ssh_pwauth` in the user-data to true or false."}
	codePackageOK = runner.Code{ID: "cloud-config-package-installed", Status: "pass",
		Meaning: "the package (or a provider) is installed"}
	codePackageMissing = runner.Code{ID: "cloud-config-package-missing", Status: "fail",
		Meaning: "the package is not installed (dpkg state shown)",
		Fix:     "Install it with `apt-get install {package}`; cloud-init could not (read `/var/log/cloud-init.log`: no network, a missing repository or a misspelt name).",
		RootFix: "Install {package} in the image's build, or fix the user-data; cloud-init could not install it (read `/var/log/cloud-init.log` in the image: no network, a missing repository or a misspelt name).",
		Cases: []runner.Case{{When: "on an rpm system",
			Fix: "Install it with `dnf install {package}`; cloud-init could not (read `/var/log/cloud-init.log`: a missing repository or no network is common)."}}}
	codePackageVersion = runner.Code{ID: "cloud-config-package-version", Status: "fail",
		Meaning: "installed at another version than the pin",
		Fix:     "Install the pinned version with `apt-get install {package}`, or change the pin.",
		RootFix: "Install the pinned {package} in the image's build, or change the pin."}
	codePackageUnjudged = runner.Code{ID: "cloud-config-package-unjudged", Status: "skip",
		Meaning: "no dpkg database and rpm cannot be asked (no rpm program, or not the running system)"}
	codeFileOK = runner.Code{ID: "cloud-config-file-ok", Status: "pass",
		Meaning: "a write_files path has the requested owner, mode and content"}
	codeFileMissing = runner.Code{ID: "cloud-config-file-missing", Status: "fail",
		Meaning: "the path does not exist, is not a regular file, or the entry has no path",
		Fix:     "Read `/var/log/cloud-init.log` for the write_files error (the cloud-init check reports it as `cloud-init-module-error`), and find out whether something deleted {file} after boot.",
		Cases: []runner.Case{
			{When: "when something else is at the path", Fix: "Remove what is at {file} and re-provision."},
			{When: "when the entry has no path", Fix: "Give the write_files entry {key} a `path` in the user-data."},
		}}
	codeFileMode = runner.Code{ID: "cloud-config-file-mode", Status: "fail",
		Meaning: "permissions differ",
		Fix:     "Run `chmod {mode} {file}`.",
		RootFix: "Give {file} in the image mode {mode}."}
	codeFileOwner = runner.Code{ID: "cloud-config-file-owner", Status: "fail",
		Meaning: "owner or group differs, or does not exist",
		Fix:     "Run `chown {owner} {file}`.",
		RootFix: "Make {file} in the image owned by {owner} (the IDs in the image's /etc/passwd and /etc/group)."}
	codeFileContent = runner.Code{ID: "cloud-config-file-content", Status: "fail",
		Meaning: "content differs and the file was not modified after cloud-init wrote it (or the content cannot be decoded)",
		Fix:     "Write the content of {file} again, or re-provision; read `/var/log/cloud-init.log` for a write_files error.",
		Cases: []runner.Case{{When: "when the content cannot be decoded",
			Fix: "Fix the content of {key} or its `encoding` in the user-data."}}}
	codeFileChanged = runner.Code{ID: "cloud-config-file-changed", Status: "warn",
		Meaning: "content differs and the file was modified after the write_files module ran: something rewrote it after boot",
		Fix:     "Find what rewrote {file} after boot (runcmd, a package or configuration management); if that is intended, drop the write_files entry."}
	codeScriptRan = runner.Code{ID: "cloud-config-script-ran", Status: "pass/skip",
		Meaning: "runcmd's script exists and scripts-user ran it (or runcmd is running this guestcheck); bootcmd recorded no error"}
	codeScriptNotRun = runner.Code{ID: "cloud-config-script-not-run", Status: "fail",
		Meaning: "runcmd's script is missing, or scripts-user never ran it",
		Fix:     "Check `systemctl status cloud-final.service` and `/var/log/cloud-init.log`; re-run with `--wait` while the guest is still booting.",
		RootFix: "Capture the image after cloud-init finished (it was captured before the final stage ran) and re-seal it with sealprep; `/var/log/cloud-init.log` in the image shows how far cloud-init got.",
		Cases: []runner.Case{{When: "when the runcmd module did not run",
			Fix: "Check that `runcmd` is in `cloud_config_modules` of /etc/cloud/cloud.cfg, and read `/var/log/cloud-init.log`."}}}
	codeScriptFailed = runner.Code{ID: "cloud-config-script-failed", Status: "warn",
		Meaning: "the module failed; the `cloud-init` check's `cloud-init-module-error` has the error",
		Fix:     "Read the failing command's output in `/var/log/cloud-init-output.log` and its error in `cloud-init status --long` (the cloud-init check reports it as `cloud-init-module-error`), and fix the command in the user-data."}
	codeTimezoneOK = runner.Code{ID: "cloud-config-timezone-ok", Status: "pass",
		Meaning: "the time zone is the requested one"}
	codeTimezoneMismatch = runner.Code{ID: "cloud-config-timezone-mismatch", Status: "fail",
		Meaning: "the time zone is not the requested one",
		Fix:     "Run `timedatectl set-timezone {zone}`; check that the name exists under /usr/share/zoneinfo.",
		RootFix: "Link /etc/localtime in the image to ../usr/share/zoneinfo/{zone} (and write {zone} to /etc/timezone on Debian); check that the name exists under /usr/share/zoneinfo."}
	codeNTPOK = runner.Code{ID: "cloud-config-ntp-ok", Status: "pass",
		Meaning: "the client is enabled and lists the servers (or `enabled: false`)"}
	codeNTPMismatch = runner.Code{ID: "cloud-config-ntp-mismatch", Status: "fail",
		Meaning: "no client configuration, a server missing, or the unit not enabled",
		Fix:     "Install an NTP client (chrony or systemd-timesyncd) and re-provision; read `/var/log/cloud-init.log` for the ntp module's error.",
		Cases: []runner.Case{
			{When: "when servers are missing", Fix: "Add {servers} to {file} and restart {client}."},
			{When: "when servers are missing in an image", Fix: "Add {servers} to {file} in the image."},
			{When: "when the client is not enabled", Fix: "Run `systemctl enable --now {unit}`."},
			{When: "when the client is not enabled in an image", Fix: "Enable {client} in the image: make {link} a link to its unit."},
		}}
	codeMountOK = runner.Code{ID: "cloud-config-mount-ok", Status: "pass",
		Meaning: "the mounts entry is in fstab (or absent, for a removal)"}
	codeMountMissing = runner.Code{ID: "cloud-config-mount-missing", Status: "fail",
		Meaning: "the mounts entry is not in fstab (or a removal is still there)",
		Fix:     "Check that the device {spec} exists at boot (cloud-init skips a mounts entry whose device does not), or add the line to /etc/fstab.",
		Cases: []runner.Case{{When: "when a removed entry is still there",
			Fix: "Delete line {line} ({spec}) from /etc/fstab."}}}
	codeHostKeyOK = runner.Code{ID: "cloud-config-host-key-ok", Status: "pass",
		Meaning: "the requested host key type exists"}
	codeHostKeyMissing = runner.Code{ID: "cloud-config-host-key-missing", Status: "fail",
		Meaning: "the requested host key type does not exist (DSA cannot be made by OpenSSH 9.8+)",
		Fix:     "Run `ssh-keygen -A` (or drop {type} from `ssh_genkeytypes`) and restart sshd.",
		RootFix: "Judge the host keys on a booted instance, or drop {type} from `ssh_genkeytypes`: cloud-init makes host keys at an instance's first boot, and a sealed image carries none."}
	codeElsewhere = runner.Code{ID: "cloud-config-judged-elsewhere", Status: "pass",
		Meaning: "keys the `hostname` and `disk-size` checks judge"}
	codeNotJudged = runner.Code{ID: "cloud-config-not-judged", Status: "pass",
		Meaning: "keys present in user-data that this check does not compare, each with the reason"}
)

// Codes lists every finding code the cloud-config check reports, in the
// order of its reference page.
var Codes = []runner.Code{
	codeNoCloudInit, codeNoUserData, codeNotRoot, codeUnreadable, codeInvalidYAML,
	codeSchemaValid, codeSchemaError, codeDeprecated, codeUnknownKey, codeSchemaSkipped,
	codeUsersInvalid, codeUserOK, codeUserMissing, codeUserShell, codeUserHome,
	codeUserPrimaryGroup, codeUserGroups, codeUserLock, codeUserPassword, codeSudoMissing,
	codeSudoNotIncluded, codeKeyMissing, codeKeyStrictModes, codeRootKeyPrefix, codeGroupMissing,
	codePwauthOK, codePwauthMismatch, codePwauthMatch, codePwauthUnjudged, codePackageOK,
	codePackageMissing, codePackageVersion, codePackageUnjudged, codeFileOK, codeFileMissing,
	codeFileMode, codeFileOwner, codeFileContent, codeFileChanged, codeScriptRan,
	codeScriptNotRun, codeScriptFailed, codeTimezoneOK, codeTimezoneMismatch, codeNTPOK,
	codeNTPMismatch, codeMountOK, codeMountMissing, codeHostKeyOK, codeHostKeyMissing,
	codeElsewhere, codeNotJudged,
}
