package intent

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (
	CodeNoCloudInit = runner.Code{ID: "cloud-config-no-cloud-init", Group: "", Status: "skip",
		Meaning: "cloud-init is not installed"}
	CodeNoUserData = runner.Code{ID: "cloud-config-no-user-data", Group: "", Status: "skip",
		Meaning: "no `cloud-config.txt` for this instance: no cloud-config user-data, or cloud-init has not run"}
	CodeNotRoot = runner.Code{ID: "cloud-config-not-root", Group: "", Status: "skip",
		Meaning: "the 0600 user-data cannot be read as non-root",
		Fix: "run as root"}
	CodeUnreadable = runner.Code{ID: "cloud-config-unreadable", Group: "", Status: "error",
		Meaning: "a file the check needs cannot be read (or the check was interrupted)",
		Fix: "see the message"}
	CodeInvalidYAML = runner.Code{ID: "cloud-config-invalid-yaml", Group: "", Status: "fail",
		Meaning: "cloud-init cannot load the user-data, so it applied none of it (file:line in the message)",
		Fix: "fix the YAML and re-provision"}
	CodeSchemaValid = runner.Code{ID: "cloud-config-schema-valid", Group: "", Status: "pass",
		Meaning: "valid under the installed schema, only known keys"}
	CodeSchemaError = runner.Code{ID: "cloud-config-schema-error", Group: "", Status: "fail",
		Meaning: "a key has the wrong type or shape per the installed schema",
		Fix: "correct it as `cloud-init schema --annotate` explains"}
	CodeDeprecated = runner.Code{ID: "cloud-config-schema-deprecated", Group: "", Status: "warn",
		Meaning: "a key or form is deprecated in the installed version",
		Fix: "move to its successor"}
	CodeUnknownKey = runner.Code{ID: "cloud-config-unknown-key", Group: "", Status: "fail",
		Meaning: "a top-level key the installed cloud-init does not know; ignored silently; with a did-you-mean",
		Fix: "rename or remove it"}
	CodeSchemaSkipped = runner.Code{ID: "cloud-config-schema-unavailable", Group: "", Status: "skip",
		Meaning: "the guest has no schema file"}
	CodeUsersInvalid = runner.Code{ID: "cloud-config-users-invalid", Group: "", Status: "fail",
		Meaning: "users/groups cannot be normalised (wrong types, `default` with no default user)",
		Fix: "write users as a list of mappings"}
	CodeUserOK = runner.Code{ID: "cloud-config-user-ok", Group: "", Status: "pass",
		Meaning: "the user exists with everything asked"}
	CodeUserMissing = runner.Code{ID: "cloud-config-user-missing", Group: "", Status: "fail",
		Meaning: "the user does not exist",
		Fix: "read the useradd error, re-provision"}
	CodeUserShell = runner.Code{ID: "cloud-config-user-shell", Group: "", Status: "fail",
		Meaning: "the login shell differs (cloud-init never changes an existing user)",
		Fix: "`usermod -s`"}
	CodeUserHome = runner.Code{ID: "cloud-config-user-home", Group: "", Status: "fail",
		Meaning: "the home differs from `homedir`, or does not exist",
		Fix: "`usermod -d -m`, `mkhomedir_helper`"}
	CodeUserPrimaryGroup = runner.Code{ID: "cloud-config-user-primary-group", Group: "", Status: "fail",
		Meaning: "the primary group differs",
		Fix: "`usermod -g`"}
	CodeUserGroups = runner.Code{ID: "cloud-config-user-groups", Group: "", Status: "fail",
		Meaning: "the user is not in some requested groups",
		Fix: "`usermod -aG`"}
	CodeUserLock = runner.Code{ID: "cloud-config-user-lock-passwd", Group: "", Status: "fail",
		Meaning: "`lock_passwd` is true but the password is usable (or no shadow entry)",
		Fix: "`passwd -l`"}
	CodeUserPassword = runner.Code{ID: "cloud-config-user-password", Group: "", Status: "fail",
		Meaning: "a password was asked but none is set, or the hash is not the requested one",
		Fix: "set it again"}
	CodeSudoMissing = runner.Code{ID: "cloud-config-sudo-rule-missing", Group: "", Status: "fail",
		Meaning: "the sudo rule is not in `90-cloud-init-users`",
		Fix: "add it with `visudo -f`"}
	CodeSudoNotIncluded = runner.Code{ID: "cloud-config-sudo-not-included", Group: "", Status: "fail",
		Meaning: "the rule is there but `/etc/sudoers` does not include the directory",
		Fix: "add `@includedir /etc/sudoers.d`"}
	CodeKeyMissing = runner.Code{ID: "cloud-config-key-missing", Group: "", Status: "fail",
		Meaning: "a requested key is not in the user's authorized_keys (shown by fingerprint), or is not a key",
		Fix: "add it"}
	CodeKeyStrictModes = runner.Code{ID: "cloud-config-key-strictmodes", Group: "", Status: "fail",
		Meaning: "sshd's StrictModes rejects the key file or a directory above it (owner or group/other write)",
		Fix: "`chmod go-w`, `chown`"}
	CodeRootKeyPrefix = runner.Code{ID: "cloud-config-root-key-prefix", Group: "", Status: "pass/fail",
		Meaning: "root's copy of a top-level key carries (or wrongly lacks) the `disable_root` refusal command, or is missing",
		Fix: "prefix or remove the key"}
	CodeGroupMissing = runner.Code{ID: "cloud-config-group-missing", Group: "", Status: "fail",
		Meaning: "a top-level group does not exist or lacks members",
		Fix: "`groupadd`, `gpasswd -a`"}
	CodePwauthOK = runner.Code{ID: "cloud-config-ssh-pwauth-ok", Group: "", Status: "pass",
		Meaning: "sshd's effective settings agree with `ssh_pwauth`"}
	CodePwauthMismatch = runner.Code{ID: "cloud-config-ssh-pwauth-mismatch", Group: "", Status: "fail",
		Meaning: "effective `PasswordAuthentication` (or keyboard-interactive with PAM) disagrees; names the winning file:line",
		Fix: "fix that line, reload sshd"}
	CodePwauthMatch = runner.Code{ID: "cloud-config-ssh-pwauth-match-override", Group: "", Status: "warn",
		Meaning: "a `Match` block sets it otherwise for the connections it matches",
		Fix: "remove it unless intended"}
	CodePwauthUnjudged = runner.Code{ID: "cloud-config-ssh-pwauth-unjudged", Group: "", Status: "pass/warn/skip",
		Meaning: "`unchanged`/null (pass), a value cloud-init ignores (warn), no readable sshd_config (skip)",
		Fix: "set true or false"}
	CodePackageOK = runner.Code{ID: "cloud-config-package-installed", Group: "", Status: "pass",
		Meaning: "the package (or a provider) is installed"}
	CodePackageMissing = runner.Code{ID: "cloud-config-package-missing", Group: "", Status: "fail",
		Meaning: "the package is not installed (dpkg state shown)",
		Fix: "install it; read the cloud-init log"}
	CodePackageVersion = runner.Code{ID: "cloud-config-package-version", Group: "", Status: "fail",
		Meaning: "installed at another version than the pin",
		Fix: "install the pinned version"}
	CodePackageUnjudged = runner.Code{ID: "cloud-config-package-unjudged", Group: "", Status: "skip",
		Meaning: "no dpkg database and rpm cannot be asked (no rpm program, or not the running system)"}
	CodeFileOK = runner.Code{ID: "cloud-config-file-ok", Group: "", Status: "pass",
		Meaning: "a write_files path has the requested owner, mode and content"}
	CodeFileMissing = runner.Code{ID: "cloud-config-file-missing", Group: "", Status: "fail",
		Meaning: "the path does not exist, is not a regular file, or the entry has no path",
		Fix: "see the message"}
	CodeFileMode = runner.Code{ID: "cloud-config-file-mode", Group: "", Status: "fail",
		Meaning: "permissions differ",
		Fix: "`chmod`"}
	CodeFileOwner = runner.Code{ID: "cloud-config-file-owner", Group: "", Status: "fail",
		Meaning: "owner or group differs, or does not exist",
		Fix: "`chown`"}
	CodeFileContent = runner.Code{ID: "cloud-config-file-content", Group: "", Status: "fail",
		Meaning: "content differs and the file was not modified after cloud-init wrote it (or the content cannot be decoded)",
		Fix: "re-provision"}
	CodeFileChanged = runner.Code{ID: "cloud-config-file-changed", Group: "", Status: "warn",
		Meaning: "content differs and the file was modified after the write_files module ran: something rewrote it after boot",
		Fix: "find what rewrote it"}
	CodeScriptRan = runner.Code{ID: "cloud-config-script-ran", Group: "", Status: "pass/skip",
		Meaning: "runcmd's script exists and scripts-user ran it (or runcmd is running this guestcheck); bootcmd recorded no error"}
	CodeScriptNotRun = runner.Code{ID: "cloud-config-script-not-run", Group: "", Status: "fail",
		Meaning: "runcmd's script is missing, or scripts-user never ran it",
		Fix: "check cloud-final and the module lists"}
	CodeScriptFailed = runner.Code{ID: "cloud-config-script-failed", Group: "", Status: "warn",
		Meaning: "the module failed; the `cloud-init` check's `cloud-init-module-error` has the error",
		Fix: "see that finding"}
	CodeTimezoneOK = runner.Code{ID: "cloud-config-timezone-ok", Group: "", Status: "pass",
		Meaning: "the time zone is the requested one"}
	CodeTimezoneMismatch = runner.Code{ID: "cloud-config-timezone-mismatch", Group: "", Status: "fail",
		Meaning: "it is not",
		Fix: "`timedatectl set-timezone`"}
	CodeNTPOK = runner.Code{ID: "cloud-config-ntp-ok", Group: "", Status: "pass",
		Meaning: "the client is enabled and lists the servers (or `enabled: false`)"}
	CodeNTPMismatch = runner.Code{ID: "cloud-config-ntp-mismatch", Group: "", Status: "fail",
		Meaning: "no client configuration, a server missing, or the unit not enabled",
		Fix: "see the message"}
	CodeMountOK = runner.Code{ID: "cloud-config-mount-ok", Group: "", Status: "pass",
		Meaning: "the mounts entry is in fstab (or absent, for a removal)"}
	CodeMountMissing = runner.Code{ID: "cloud-config-mount-missing", Group: "", Status: "fail",
		Meaning: "it is not (or a removal is still there)",
		Fix: "check the device, edit fstab"}
	CodeHostKeyOK = runner.Code{ID: "cloud-config-host-key-ok", Group: "", Status: "pass",
		Meaning: "the requested host key type exists"}
	CodeHostKeyMissing = runner.Code{ID: "cloud-config-host-key-missing", Group: "", Status: "fail",
		Meaning: "it does not (DSA cannot be made by OpenSSH 9.8+)",
		Fix: "`ssh-keygen -A`"}
	CodeElsewhere = runner.Code{ID: "cloud-config-judged-elsewhere", Group: "", Status: "pass",
		Meaning: "keys the `hostname` and `disk-size` checks judge"}
	CodeNotJudged = runner.Code{ID: "cloud-config-not-judged", Group: "", Status: "pass",
		Meaning: "keys present in user-data that this check does not compare, each with the reason"}
)
