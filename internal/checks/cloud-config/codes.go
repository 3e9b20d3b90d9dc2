package intent

// Finding codes of the cloud-config check; docs/checks/cloud-config.md
// explains each.
const (
	CodeNoCloudInit   = "cloud-config-no-cloud-init"
	CodeNoUserData    = "cloud-config-no-user-data"
	CodeNotRoot       = "cloud-config-not-root"
	CodeUnreadable    = "cloud-config-unreadable"
	CodeInvalidYAML   = "cloud-config-invalid-yaml"
	CodeSchemaValid   = "cloud-config-schema-valid"
	CodeSchemaError   = "cloud-config-schema-error"
	CodeDeprecated    = "cloud-config-schema-deprecated"
	CodeUnknownKey    = "cloud-config-unknown-key"
	CodeSchemaSkipped = "cloud-config-schema-unavailable"

	CodeUsersInvalid     = "cloud-config-users-invalid"
	CodeUserOK           = "cloud-config-user-ok"
	CodeUserMissing      = "cloud-config-user-missing"
	CodeUserShell        = "cloud-config-user-shell"
	CodeUserHome         = "cloud-config-user-home"
	CodeUserPrimaryGroup = "cloud-config-user-primary-group"
	CodeUserGroups       = "cloud-config-user-groups"
	CodeUserLock         = "cloud-config-user-lock-passwd"
	CodeUserPassword     = "cloud-config-user-password"
	CodeSudoMissing      = "cloud-config-sudo-rule-missing"
	CodeSudoNotIncluded  = "cloud-config-sudo-not-included"
	CodeKeyMissing       = "cloud-config-key-missing"
	CodeKeyStrictModes   = "cloud-config-key-strictmodes"
	CodeRootKeyPrefix    = "cloud-config-root-key-prefix"
	CodeGroupMissing     = "cloud-config-group-missing"

	CodePwauthOK        = "cloud-config-ssh-pwauth-ok"
	CodePwauthMismatch  = "cloud-config-ssh-pwauth-mismatch"
	CodePwauthMatch     = "cloud-config-ssh-pwauth-match-override"
	CodePwauthUnjudged  = "cloud-config-ssh-pwauth-unjudged"
	CodePackageOK       = "cloud-config-package-installed"
	CodePackageMissing  = "cloud-config-package-missing"
	CodePackageVersion  = "cloud-config-package-version"
	CodePackageUnjudged = "cloud-config-package-unjudged"

	CodeFileOK      = "cloud-config-file-ok"
	CodeFileMissing = "cloud-config-file-missing"
	CodeFileMode    = "cloud-config-file-mode"
	CodeFileOwner   = "cloud-config-file-owner"
	CodeFileContent = "cloud-config-file-content"
	CodeFileChanged = "cloud-config-file-changed"

	CodeScriptRan    = "cloud-config-script-ran"
	CodeScriptNotRun = "cloud-config-script-not-run"
	CodeScriptFailed = "cloud-config-script-failed"

	CodeTimezoneOK       = "cloud-config-timezone-ok"
	CodeTimezoneMismatch = "cloud-config-timezone-mismatch"
	CodeNTPOK            = "cloud-config-ntp-ok"
	CodeNTPMismatch      = "cloud-config-ntp-mismatch"
	CodeMountOK          = "cloud-config-mount-ok"
	CodeMountMissing     = "cloud-config-mount-missing"
	CodeHostKeyOK        = "cloud-config-host-key-ok"
	CodeHostKeyMissing   = "cloud-config-host-key-missing"
	CodeElsewhere        = "cloud-config-judged-elsewhere"
	CodeNotJudged        = "cloud-config-not-judged"
)

// Codes lists every code Run can emit.
var Codes = []string{
	CodeNoCloudInit, CodeNoUserData, CodeNotRoot, CodeUnreadable, CodeInvalidYAML,
	CodeSchemaValid, CodeSchemaError, CodeDeprecated, CodeUnknownKey, CodeSchemaSkipped,
	CodeUsersInvalid, CodeUserOK, CodeUserMissing, CodeUserShell, CodeUserHome, CodeUserPrimaryGroup,
	CodeUserGroups, CodeUserLock, CodeUserPassword, CodeSudoMissing, CodeSudoNotIncluded,
	CodeKeyMissing, CodeKeyStrictModes, CodeRootKeyPrefix, CodeGroupMissing,
	CodePwauthOK, CodePwauthMismatch, CodePwauthMatch, CodePwauthUnjudged,
	CodePackageOK, CodePackageMissing, CodePackageVersion, CodePackageUnjudged,
	CodeFileOK, CodeFileMissing, CodeFileMode, CodeFileOwner, CodeFileContent, CodeFileChanged,
	CodeScriptRan, CodeScriptNotRun, CodeScriptFailed,
	CodeTimezoneOK, CodeTimezoneMismatch, CodeNTPOK, CodeNTPMismatch, CodeMountOK, CodeMountMissing,
	CodeHostKeyOK, CodeHostKeyMissing, CodeElsewhere, CodeNotJudged,
}
