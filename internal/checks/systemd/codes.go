package systemd

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (

	// When systemd cannot be asked
	CodeNotLive = runner.Code{ID: "systemd-not-live", Group: "When systemd cannot be asked", Status: "skip",
		Meaning: "Under `--root IMAGE` there is no manager to ask."}
	CodeNotRunning = runner.Code{ID: "systemd-not-running", Group: "When systemd cannot be asked", Status: "skip",
		Meaning: "systemd is not PID 1, or no systemd answers on the bus (a container)."}
	CodeUnreadable = runner.Code{ID: "systemd-state-unreadable", Group: "When systemd cannot be asked", Status: "error",
		Meaning: "systemd could not be asked (bus refused, deadline), the unit list could not be read, or it reported an unknown state. Detail `error`.",
		Fix:     "Check that systemd answers on D-Bus with `systemctl is-system-running`; if it answers there but not to guestcheck, run guestcheck as root, since the system bus policy may refuse another user.",
		Cases: []runner.Case{
			{When: "when the unit list could not be read",
				Fix: "Check that `systemctl list-units` answers; if it is only slow, raise `checks.systemd.timeout` in the configuration file."},
			{When: "when systemd reports a state guestcheck does not know",
				Fix: "Run `systemctl is-system-running` and `systemctl status` to see what state systemd is in, and report the state {state} to the guestcheck project with the systemd version."},
		}}

	// The manager's state
	CodeRunning = runner.Code{ID: "systemd-running", Group: "The manager's state", Status: "pass",
		Meaning: "`SystemState` is `running`. Detail `system_state`, `systemd_version`."}
	CodeDegraded = runner.Code{ID: "systemd-degraded", Group: "The manager's state", Status: "fail",
		Meaning: "`SystemState` is `degraded`; the message lists each failed unit and its result.",
		Fix:     "List the failed units with `systemctl --failed`, read why each failed with `journalctl -b -u UNIT`, fix it, then run `systemctl reset-failed` once it is repaired."}
	CodeUnitFailed = runner.Code{ID: "systemd-unit-failed", Group: "The manager's state", Status: "fail",
		Meaning: "One failed unit. Detail `unit`, `result`, `result_from`, `journal` (the command).",
		Fix:     "Read why with `journalctl -b -u {unit}`, fix the cause, then run `systemctl restart {unit}` (or `systemctl reset-failed {unit}` if the unit is not needed)."}
	CodeMaintenance = runner.Code{ID: "systemd-maintenance", Group: "The manager's state", Status: "fail",
		Meaning: "The system is in rescue or emergency mode.",
		Fix:     "Read `journalctl -b -p err` for what dropped the boot into rescue or emergency mode (often an `/etc/fstab` entry), fix it and reboot."}
	CodeStopping = runner.Code{ID: "systemd-stopping", Group: "The manager's state", Status: "warn",
		Meaning: "The system is shutting down (`stopping`, `offline`).",
		Fix:     "Run guestcheck again on a running system: a shutdown is in progress."}

	// The boot
	CodeBootFinished = runner.Code{ID: "systemd-boot-finished", Group: "The boot", Status: "pass",
		Meaning: "The boot finished. Detail `userspace_to_finish`."}
	CodeBootInProgress = runner.Code{ID: "systemd-boot-in-progress", Group: "The boot", Status: "pass/warn",
		Meaning: "pass: the boot waits only for guestcheck's own unit (`own_unit`); warn: other jobs still run, none longer than the budget. Detail `running_jobs`, `waiting_jobs`, `since_userspace`.",
		Fix:     "Run guestcheck again once `systemctl is-system-running --wait` returns, or order its unit after the services it checks."}
	CodeJobStuck = runner.Code{ID: "systemd-job-stuck", Group: "The boot", Status: "fail",
		Meaning: "A running job has been activating longer than `systemd.boot_budget`. Detail `unit`, `job_id`, `job_type`, `age`.",
		Fix:     "See what the job waits for with `systemctl list-jobs` and `journalctl -b -u {unit}`, and fix that: a start job that never finishes holds back every unit ordered after it."}
	CodeBootTime = runner.Code{ID: "systemd-boot-time", Group: "The boot", Status: "pass",
		Meaning: "Boot times within budget. Detail `kernel_to_userspace`, `kernel_to_initrd`, `userspace_to_finish`, `userspace_to_cloud_final`, `userspace_to_qemu_guest_agent`, `userspace_to_ssh` (or `_sshd`), `kernel_to_last_milestone`, `critical_chain`, `slowest_on_critical_chain`, `budget`."}
	CodeBootSlow = runner.Code{ID: "systemd-boot-slow", Group: "The boot", Status: "warn",
		Meaning: "The boot took longer than the budget; the message names the slowest units of the critical chain. Detail `kernel_to_userspace`, `kernel_to_initrd`, `userspace_to_finish`, the `userspace_to_` time of each milestone, `kernel_to_last_milestone`, `critical_chain`, `slowest_on_critical_chain`, `budget`.",
		Fix:     "Find the slowest units with `systemd-analyze critical-chain` and `systemd-analyze blame` and make them start faster; under TCG (no KVM) raise `systemd.boot_budget` instead."}

	// Ordering cycles among the loaded units
	CodeNoCycle = runner.Code{ID: "systemd-no-ordering-cycle", Group: "Ordering cycles among the loaded units", Status: "pass",
		Meaning: "No ordering cycle among the loaded units."}
	CodeCycle = runner.Code{ID: "systemd-ordering-cycle", Group: "Ordering cycles among the loaded units", Status: "fail",
		Meaning: "Units ordered after each other in a loop. Detail `units`, `journal`.",
		Fix:     "Run `systemd-analyze verify {unit}`, which names the edges, and remove the After=/Before= (or the Requires=/Wants= that implies it) that closes the loop: systemd breaks the cycle by not starting one of its units."}

	// Ordering cycles in this boot's journal
	CodeJournalNoCycle = runner.Code{ID: "systemd-journal-no-ordering-cycle", Group: "Ordering cycles in this boot's journal", Status: "pass",
		Meaning: "This boot's journal has no ordering-cycle message of systemd, and shows PID 1's messages. Detail `entries_read`, `query`, `read_in` (how long journalctl took)."}
	CodeJournalCycleBroken = runner.Code{ID: "systemd-ordering-cycle-broken", Group: "Ordering cycles in this boot's journal", Status: "fail",
		Meaning: "This boot systemd deleted a job to break an ordering cycle: that unit was not started. Detail `unit`, `deleted_job`, `cycle` (the jobs as systemd listed them), `start`, `first_logged`, `times_logged`, `journal`, `query`, `read_in`.",
		Fix:     "Read `journalctl -b -u {unit}` and `systemd-analyze verify {unit}`, which name the edges; remove the After=/Before= (or the Requires=/Wants= that implies it) that closes the loop, then start {unit}."}
	CodeJournalCycleUnbroken = runner.Code{ID: "systemd-ordering-cycle-unbreakable", Group: "Ordering cycles in this boot's journal", Status: "fail",
		Meaning: "This boot systemd met a cycle it could not break: the start request failed as a whole. Detail `unit`, `cycle` (the jobs as systemd listed them), `start`, `first_logged`, `times_logged`, `journal`, `query`, `read_in`.",
		Fix:     "Read `journalctl -b -u {unit}` and `systemd-analyze verify {unit}`, which name the edges; remove the After=/Before= (or the Requires=/Wants= that implies it) that closes the loop, then start {unit}."}
	CodeJournalUnavailable = runner.Code{ID: "systemd-journal-unavailable", Group: "Ordering cycles in this boot's journal", Status: "skip",
		Meaning: "The journal was not read: journalctl is not installed, or it shows no message of PID 1 this boot (not root nor in `systemd-journal`/`adm`, or journald keeps nothing).",
		Fix:     "Run guestcheck as root or as a member of the `systemd-journal` group, or let journald keep PID 1's messages.",
		Cases: []runner.Case{
			{When: "when guestcheck runs as root",
				Fix: "Let journald keep PID 1's messages: check `Storage=` and `MaxLevelStore=` in `/etc/systemd/journald.conf`, its rate limit (`RateLimitBurst=`), and whether this boot's journal was rotated away."},
			{When: "when journalctl is not installed",
				Fix: "Install journalctl (part of the systemd package on most distributions) to have this boot's journal read for ordering cycles."},
		}}
	CodeJournalUnreadable = runner.Code{ID: "systemd-journal-unreadable", Group: "Ordering cycles in this boot's journal", Status: "error",
		Meaning: "journalctl failed, printed what does not parse, or ran past its deadline. Detail `error`, `query`, `read_in`.",
		Fix:     "Check that `journalctl -b _PID=1` answers (journald running, the journal not corrupt: `journalctl --verify`); if it is only slow, raise `checks.systemd.timeout` in the configuration file."}
)

// Codes lists every code Run can emit, in the order of the reference
// page.
var Codes = []runner.Code{
	CodeNotLive, CodeNotRunning, CodeUnreadable,
	CodeRunning, CodeDegraded, CodeUnitFailed, CodeMaintenance, CodeStopping,
	CodeBootFinished, CodeBootInProgress, CodeJobStuck, CodeBootTime, CodeBootSlow,
	CodeNoCycle, CodeCycle,
	CodeJournalNoCycle, CodeJournalCycleBroken, CodeJournalCycleUnbroken, CodeJournalUnavailable, CodeJournalUnreadable,
}
