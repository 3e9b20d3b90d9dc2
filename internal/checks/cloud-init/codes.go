package cloudinit

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// reseal ends a fix under an image root: an image should carry no
// cloud-init run state, since every clone would start from that record.
const reseal = "re-seal the image with sealprep (its cloud-init operation clears cloud-init's state), or rebuild it"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (
	codeCIDone = runner.Code{ID: "cloud-init-done", Status: "pass",
		Meaning: "cloud-init finished this boot; the message gives its extended status (`done`, or `degraded done` next to the `cloud-init-recoverable-error` warnings) and the datasource. Not emitted when a stage recorded an error."}
	codeCIRunningInFinal = runner.Code{ID: "cloud-init-running-in-final", Status: "pass",
		Meaning: "cloud-init is running its final stage and guestcheck is its descendant (run from `runcmd`, a user script or a per-boot script): \"running\" is the only state cloud-init can be in, so this is a pass with a note, never a wait. The message says whether the earlier stages were clean; their errors are still reported as `cloud-init-module-error`. Detail `invoked_from` shows the process chain."}
	codeCIRunning = runner.Code{ID: "cloud-init-running", Status: "warn",
		Meaning: "cloud-init has not finished yet (the message names the stage). When guestcheck was started by cloud-init in a stage other than the final one (`bootcmd`, a boothook), it says so.",
		Fix:     "Re-run with `--wait 10m` to wait for cloud-init to finish, or follow it with `cloud-init status --long` and `/var/log/cloud-init.log`.",
		RootFix: "Let cloud-init finish before the image is captured (it was captured while cloud-init ran), then " + reseal + ".",
		Cases: []runner.Case{{When: "when cloud-init started guestcheck before its final stage",
			Fix: "Run guestcheck from `runcmd` (the final stage) or after `cloud-final.service`, not from `bootcmd` or an earlier stage."}}}
	codeCINotStarted = runner.Code{ID: "cloud-init-not-started", Status: "warn, or fail",
		Meaning: "cloud-init is installed and enabled, but has no record of running on this boot. A warn during the first 10 minutes after boot (the system may still be booting; slow emulated boots take minutes), a fail after that, a warn when the uptime is unknown. The fix's `--wait` is what is left of those 10 minutes (all of them when the uptime is unknown); after them it says where to look instead. Under `--root IMAGE` it is a skip: an image has no run state.",
		Fix:     "The system may still be booting: re-run with `--wait {wait}`; if cloud-init has still not started then, check `systemctl status cloud-init-local.service cloud-init-main.service` and `/run/cloud-init/cloud-init-generator.log` for why.",
		Cases: []runner.Case{{When: "when the system has been up longer than the grace period",
			Fix: "cloud-init should have started by now, so waiting will not help: read `systemctl status cloud-init-local.service cloud-init-main.service` (`cloud-init.service` before cloud-init 24.3), `journalctl -b -u 'cloud-init*'` and `/run/cloud-init/cloud-init-generator.log` for why it did not start."}}}
	codeCIModuleError = runner.Code{ID: "cloud-init-module-error", Status: "fail",
		Meaning: "A stage recorded an unrecoverable error; one finding per error, with the stage and, when the text names one, the module as cloud-init names it (`locale`, `runcmd`, `scripts_user`; `write-files` with a hyphen since 24.x). Detail `error` holds the full text. `scripts_user` is a `runcmd` or user script that exited non-zero.",
		Fix:     "Read the traceback in `/var/log/cloud-init.log` (`cloud-init status --long` lists the errors) and validate the user-data with `cloud-init schema --system`.",
		RootFix: "Read the traceback in `/var/log/cloud-init.log` in the image, validate the user-data it was built with (`cloud-init schema -c FILE`), then " + reseal + ".",
		Cases: []runner.Case{
			{When: "when a runcmd or user script failed",
				Fix: "Find the failing script's output in `/var/log/cloud-init-output.log` and fix the script (it exited non-zero); when guestcheck itself runs from `runcmd`, give it `--exit-zero` so that its own verdict does not fail the stage."},
			{When: "when the runcmd list is invalid",
				Fix: "Fix the `runcmd` list in the user-data: every item must be a string or a list of strings, and `cloud-init schema --system` points at the bad one."},
			{When: "when the runcmd list of an image is invalid",
				Fix: "Fix the `runcmd` list in the user-data the image was built with: every item must be a string or a list of strings, and `cloud-init schema -c FILE` points at the bad one; then " + reseal + "."},
		}}
	codeCIRecoverable = runner.Code{ID: "cloud-init-recoverable-error", Status: "warn",
		Meaning: "cloud-init logged messages at a warning level or above without failing (cloud-init's \"degraded\", exit code 2): one finding per level, with the count, the first message, and all of them in detail `messages`.",
		Fix:     "Read the messages with `cloud-init status --long` and fix the user-data or configuration they point at (`cloud-init schema --system` reports invalid and deprecated keys).",
		RootFix: "Read the messages in `/var/log/cloud-init.log` in the image and fix the user-data or configuration they point at (`cloud-init schema -c FILE` reports invalid and deprecated keys), then " + reseal + ".",
		Cases: []runner.Case{
			{When: "when keys are deprecated",
				Fix: "Replace the deprecated keys the messages name (`cloud-init schema --system --annotate` shows where they are)."},
			{When: "when keys in an image are deprecated",
				Fix: "Replace the deprecated keys the messages name (`cloud-init schema -c FILE --annotate` shows where they are in a user-data file), then " + reseal + "."},
		}}
	codeCIUnitFailed = runner.Code{ID: "cloud-init-unit-failed", Status: "fail",
		Meaning: "A cloud-init unit is in the failed state, or is disabled or masked (cloud-init cannot run all its stages; `cloud-init status` also treats this as an error). One finding per unit.",
		Fix:     "Run `systemctl status {unit}` and `journalctl -b -u {unit}` to see why it failed.",
		Cases: []runner.Case{{When: "when the unit is disabled or masked",
			Fix: "Re-enable it with `systemctl unmask {unit} && systemctl enable {unit}`, or disable cloud-init as a whole by creating `/etc/cloud/cloud-init.disabled`."}}}
	codeCIStaleResult = runner.Code{ID: "cloud-init-stale-result", Status: "warn",
		Meaning: "`boot-finished` or `/var/lib/cloud/data/result.json` (or `status.json` itself) is from an earlier boot while nothing shows cloud-init ran on this one. The verdict on this boot is the accompanying `cloud-init-not-started`; this finding keeps anyone from reading the old file as this boot's result. Not reported when cloud-init is disabled, where old files are expected.",
		Fix:     "Do not take {file} as proof that this boot was provisioned; find out why cloud-init did not run this boot with `journalctl -b -u 'cloud-*'`.",
		RootFix: "Do not take {file} as proof that the image was provisioned; " + reseal + ".",
		Cases: []runner.Case{
			{When: "when status.json is from an earlier boot",
				Fix: "Make sure `/run` is a tmpfs, and find out why cloud-init did not run this boot with `journalctl -b -u 'cloud-*'`."},
			{When: "when an image carries an earlier run's status.json",
				Fix: "Remove the earlier run's status from the image: " + reseal + "."},
		}}
	codeCIDatasourceNone = runner.Code{ID: "cloud-init-datasource-none", Status: "warn",
		Meaning: "cloud-init found no datasource and fell back to `DataSourceNone`: no meta-data or user-data was applied.",
		Fix:     "Attach the VM's cloud-init source (a NoCloud disk, a config drive or a reachable metadata service), and read `/run/cloud-init/ds-identify.log` for why none was found."}
	codeCIDisabled = runner.Code{ID: "cloud-init-disabled", Status: "skip, or fail",
		Meaning: "cloud-init is disabled on this boot; the message gives cloud-init's reason and code (`disabled-by-marker-file`, …). A fail when `cloud_init.required` is true. Errors a stage recorded earlier on this boot are still reported.",
		Fix:     "Remove {marker} if this VM must be provisioned by cloud-init, or set `cloud_init.required: false` in the configuration file.",
		Cases: []runner.Case{
			{When: "when the kernel command line disables it",
				Fix: "Remove `cloud-init=disabled` from the kernel command line (the boot loader's configuration) if this VM must be provisioned by cloud-init, or set `cloud_init.required: false` in the configuration file."},
			{When: "when the container's environment disables it",
				Fix: "Remove `cloud-init=disabled` from `KERNEL_CMDLINE` in the container's environment, or set `cloud_init.required: false` in the configuration file."},
			{When: "when the generator found no datasource",
				Fix: "Attach the NoCloud disk or config drive, and read `/run/cloud-init/ds-identify.log` and `/run/cloud-init/cloud-init-generator.log` for why ds-identify found no datasource."},
		}}
	codeCINotInstalled = runner.Code{ID: "cloud-init-not-installed", Status: "skip, or fail",
		Meaning: "No cloud-init: no `status.json`, no `cloud-init` program and no `cloud-init-local.service` unit. A fail when `cloud_init.required` is true.",
		Fix:     "Install cloud-init in the image (it must provision this VM), or set `cloud_init.required: false` in the configuration file."}
	codeCIUnreadable = runner.Code{ID: "cloud-init-status-unreadable", Status: "error",
		Meaning: "`status.json` or `instance-data.json` exists but cannot be used: unreadable, truncated or garbage JSON, or a field of the wrong type. The message names the file and the reason, e.g. `/run/cloud-init/status.json: unexpected end of JSON input` or `…: \"v1.init.errors\" is a string, want an array of strings`. A broken `status.json` leaves the run state unjudged (unit failures are still reported; `cloud-init status` itself stops with a Python traceback on such a file); a broken `instance-data.json` only loses the instance details.",
		Fix:     "Inspect {file} and `/var/log/cloud-init.log`; cloud-init rewrites its status files at every stage, so a reboot (or `cloud-init clean --logs --reboot` on a template) replaces a corrupt one.",
		RootFix: "Inspect {file} and `/var/log/cloud-init.log` in the image; cloud-init rewrites its status files at every stage, so " + reseal + ".",
		Cases:   readCases}
	codeCIResultUnreadable = runner.Code{ID: "cloud-init-result-unreadable", Status: "warn",
		Meaning: "`result.json` exists but cannot be used: empty, truncated, not a JSON object (`[]`, `null`, a string), a field of the wrong type, or unreadable. `cloud-init status` only tests that `result.json` exists and takes the verdict and the errors from `status.json`, so guestcheck does the same: the run counts as finished, and the module errors, recoverable errors and `cloud-init-done` that `status.json` gives are all still reported next to this warning. It matters because scripts and tools that read `result.json` for the run's errors get nothing, and a damaged file under `/run` points at a full or failing tmpfs or at something else writing there. The message names the file and the reason.",
		Fix:     "Inspect {file} and `/var/log/cloud-init.log`, and check that `/run` is not full; cloud-init writes `result.json` at the end of its final stage on every boot, so a reboot replaces it.",
		RootFix: "Inspect {file} and `/var/log/cloud-init.log` in the image; an image should carry no run state, so " + reseal + ".",
		Cases:   readCases}
	codeCIInterrupted = runner.Code{ID: "cloud-init-interrupted", Status: "error",
		Meaning: "The check's deadline passed (typically while asking systemd).",
		Fix:     "Raise `checks.cloud-init.timeout` in the configuration file, or find out why systemd is slow to answer."}
)

// readCases are the fixes for a cloud-init file that permissions keep
// guestcheck from reading: rerunning as root helps only a user who is not
// root already.
var readCases = []runner.Case{
	{When: "when guestcheck is not root", Fix: "Run guestcheck as root, or make {file} readable."},
	runner.RootDenied("{file}"),
}

// Codes lists every finding code the cloud-init check reports, in the
// order of its reference page.
var Codes = []runner.Code{
	codeCIDone, codeCIRunningInFinal, codeCIRunning, codeCINotStarted,
	codeCIModuleError, codeCIRecoverable, codeCIUnitFailed, codeCIStaleResult,
	codeCIDatasourceNone, codeCIDisabled, codeCINotInstalled, codeCIUnreadable,
	codeCIResultUnreadable, codeCIInterrupted,
}

// NotReadyCodes are the IDs of the codes that mean cloud-init is still
// provisioning the machine, whatever their status: an exec readiness
// probe is not ready while the cloud-init check reports one of them.
var NotReadyCodes = []string{codeCIRunning.ID, codeCINotStarted.ID}
