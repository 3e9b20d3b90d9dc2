package cloudinit

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (
	codeCIDone = runner.Code{ID: "cloud-init-done", Group: "", Status: "pass",
		Meaning: "cloud-init finished this boot; the message gives its extended status (`done`, or `degraded done` next to the `cloud-init-recoverable-error` warnings) and the datasource. Not emitted when a stage recorded an error."}
	codeCIRunningInFinal = runner.Code{ID: "cloud-init-running-in-final", Group: "", Status: "pass",
		Meaning: "cloud-init is running its final stage and guestcheck is its descendant (run from `runcmd`, a user script or a per-boot script): \"running\" is the only state cloud-init can be in, so this is a pass with a note, never a wait. The message says whether the earlier stages were clean; their errors are still reported as `cloud-init-module-error`. Detail `invoked_from` shows the process chain."}
	codeCIRunning = runner.Code{ID: "cloud-init-running", Group: "", Status: "warn",
		Meaning: "cloud-init has not finished yet (the message names the stage). When guestcheck was started by cloud-init in a stage other than the final one (`bootcmd`, a boothook), it says so.",
		Fix: "Re-run with `--wait 10m`, or follow `cloud-init status --long` and `/var/log/cloud-init.log`; run guestcheck from `runcmd` or after `cloud-final.service`, not from an earlier stage."}
	codeCINotStarted = runner.Code{ID: "cloud-init-not-started", Group: "", Status: "warn, or fail",
		Meaning: "cloud-init is installed and enabled, but has no record of running on this boot. A warn during the first 10 minutes after boot (the system may still be booting; slow emulated boots take minutes), a fail after that, a warn when the uptime is unknown. Under `--root IMAGE` it is a skip: an image has no run state.",
		Fix: "`systemctl status cloud-init-local.service cloud-init-main.service` and `/run/cloud-init/cloud-init-generator.log` tell why it did not start; `--wait` while booting."}
	codeCIModuleError = runner.Code{ID: "cloud-init-module-error", Group: "", Status: "fail",
		Meaning: "A stage recorded an unrecoverable error; one finding per error, with the stage and, when the text names one, the module as cloud-init names it (`locale`, `runcmd`, `scripts_user`; `write-files` with a hyphen since 24.x). Detail `error` holds the full text. `scripts_user` is a `runcmd` or user script that exited non-zero.",
		Fix: "Read the traceback in `/var/log/cloud-init.log` (`cloud-init status --long` lists the errors) and validate the user-data with `cloud-init schema --system`; for `scripts_user`, the script's output is in `/var/log/cloud-init-output.log`."}
	codeCIRecoverable = runner.Code{ID: "cloud-init-recoverable-error", Group: "", Status: "warn",
		Meaning: "cloud-init logged messages at a warning level or above without failing (cloud-init's \"degraded\", exit code 2): one finding per level, with the count, the first message, and all of them in detail `messages`.",
		Fix: "Fix what the messages point at; `cloud-init schema --system --annotate` shows invalid and deprecated keys."}
	codeCIUnitFailed = runner.Code{ID: "cloud-init-unit-failed", Group: "", Status: "fail",
		Meaning: "A cloud-init unit is in the failed state, or is disabled or masked (cloud-init cannot run all its stages; `cloud-init status` also treats this as an error). One finding per unit.",
		Fix: "`systemctl status UNIT` and `journalctl -b -u UNIT`; re-enable a masked or disabled unit, or disable cloud-init as a whole with `/etc/cloud/cloud-init.disabled`."}
	codeCIStaleResult = runner.Code{ID: "cloud-init-stale-result", Group: "", Status: "warn",
		Meaning: "`boot-finished` or `/var/lib/cloud/data/result.json` (or `status.json` itself) is from an earlier boot while nothing shows cloud-init ran on this one. The verdict on this boot is the accompanying `cloud-init-not-started`; this finding keeps anyone from reading the old file as this boot's result. Not reported when cloud-init is disabled, where old files are expected.",
		Fix: "Find out why cloud-init did not run this boot: `journalctl -b -u 'cloud-*'`; make sure `/run` is a tmpfs."}
	codeCIDatasourceNone = runner.Code{ID: "cloud-init-datasource-none", Group: "", Status: "warn",
		Meaning: "cloud-init found no datasource and fell back to `DataSourceNone`: no meta-data or user-data was applied.",
		Fix: "Attach the NoCloud disk or config drive, or make the metadata service reachable; read `/run/cloud-init/ds-identify.log`."}
	codeCIDisabled = runner.Code{ID: "cloud-init-disabled", Group: "", Status: "skip, or fail",
		Meaning: "cloud-init is disabled on this boot; the message gives cloud-init's reason and code (`disabled-by-marker-file`, …). A fail when `cloud_init.required` is true. Errors a stage recorded earlier on this boot are still reported.",
		Fix: "Remove the marker file or the `cloud-init=disabled` kernel parameter; for `disabled-by-generator`, ds-identify found no datasource (see `/run/cloud-init/ds-identify.log`)."}
	codeCINotInstalled = runner.Code{ID: "cloud-init-not-installed", Group: "", Status: "skip, or fail",
		Meaning: "No cloud-init: no `status.json`, no `cloud-init` program and no `cloud-init-local.service` unit. A fail when `cloud_init.required` is true.",
		Fix: "Install cloud-init in the image, or set `cloud_init.required: false`."}
	codeCIUnreadable = runner.Code{ID: "cloud-init-status-unreadable", Group: "", Status: "error",
		Meaning: "`status.json` or `instance-data.json` exists but cannot be used: unreadable, truncated or garbage JSON, or a field of the wrong type. The message names the file and the reason, e.g. `/run/cloud-init/status.json: unexpected end of JSON input` or `…: v1.init.errors: want an array of strings, got string`. A broken `status.json` leaves the run state unjudged (unit failures are still reported; `cloud-init status` itself stops with a Python traceback on such a file); a broken `instance-data.json` only loses the instance details.",
		Fix: "Inspect the file and `/var/log/cloud-init.log`; cloud-init rewrites its status files at every stage and boot. For \"permission denied\", run guestcheck as root."}
	codeCIResultUnreadable = runner.Code{ID: "cloud-init-result-unreadable", Group: "", Status: "warn",
		Meaning: "`result.json` exists but cannot be used: empty, truncated, not a JSON object (`[]`, `null`, a string), a field of the wrong type, or unreadable. `cloud-init status` only tests that `result.json` exists and takes the verdict and the errors from `status.json`, so guestcheck does the same: the run counts as finished, and the module errors, recoverable errors and `cloud-init-done` that `status.json` gives are all still reported next to this warning. It matters because scripts and tools that read `result.json` for the run's errors get nothing, and a damaged file under `/run` points at a full or failing tmpfs or at something else writing there. The message names the file and the reason.",
		Fix: "Inspect the file and `/var/log/cloud-init.log`; cloud-init writes `result.json` at the end of its final stage on every boot, so a reboot replaces it. For \"permission denied\", run guestcheck as root."}
	codeCIInterrupted = runner.Code{ID: "cloud-init-interrupted", Group: "", Status: "error",
		Meaning: "The check's deadline passed (typically while asking systemd).",
		Fix: "Raise `checks.cloud-init.timeout`, or find out why systemd is slow to answer."}
)
