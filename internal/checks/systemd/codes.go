package systemdcheck

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
		Fix: "`systemctl is-system-running`; raise `checks.systemd.timeout`."}

	// The manager's state
	CodeRunning = runner.Code{ID: "systemd-running", Group: "The manager's state", Status: "pass",
		Meaning: "`SystemState` is `running`. Detail `system_state`, `systemd_version`."}
	CodeDegraded = runner.Code{ID: "systemd-degraded", Group: "The manager's state", Status: "fail",
		Meaning: "`SystemState` is `degraded`; the message lists each failed unit and its result.",
		Fix: "`systemctl --failed`, then each unit's journal; `systemctl reset-failed` once repaired."}
	CodeUnitFailed = runner.Code{ID: "systemd-unit-failed", Group: "The manager's state", Status: "fail",
		Meaning: "One failed unit. Detail `unit`, `result`, `result_from`, `journal` (the command).",
		Fix: "`journalctl -b -u UNIT`, fix, `systemctl restart UNIT`."}
	CodeMaintenance = runner.Code{ID: "systemd-maintenance", Group: "The manager's state", Status: "fail",
		Meaning: "The system is in rescue or emergency mode.",
		Fix: "`journalctl -b -p err`, fix (often fstab), reboot."}
	CodeStopping = runner.Code{ID: "systemd-stopping", Group: "The manager's state", Status: "warn",
		Meaning: "The system is shutting down (`stopping`, `offline`).",
		Fix: "Run on a running system."}

	// The boot
	CodeBootFinished = runner.Code{ID: "systemd-boot-finished", Group: "The boot", Status: "pass",
		Meaning: "The boot finished. Detail `userspace_to_finish`."}
	CodeBootInProgress = runner.Code{ID: "systemd-boot-in-progress", Group: "The boot", Status: "pass/warn",
		Meaning: "pass: the boot waits only for guestcheck's own unit (`own_unit`); warn: other jobs still run, none longer than the budget. Detail `running_jobs`, `waiting_jobs`, `since_userspace`.",
		Fix: "Run again after `systemctl is-system-running --wait`."}
	CodeJobStuck = runner.Code{ID: "systemd-job-stuck", Group: "The boot", Status: "fail",
		Meaning: "A running job has been activating longer than `systemd.boot_budget`. Detail `unit`, `job_id`, `job_type`, `age`.",
		Fix: "`systemctl list-jobs`, `journalctl -b -u UNIT`."}
	CodeBootTime = runner.Code{ID: "systemd-boot-time", Group: "The boot", Status: "pass",
		Meaning: "Boot times within budget. Detail `kernel_to_userspace`, `kernel_to_initrd`, `userspace_to_finish`, `userspace_to_cloud_final`, `userspace_to_qemu_guest_agent`, `userspace_to_ssh` (or `_sshd`), `kernel_to_last_milestone`, `critical_chain`, `slowest_on_critical_chain`, `budget`."}
	CodeBootSlow = runner.Code{ID: "systemd-boot-slow", Group: "The boot", Status: "warn",
		Meaning: "The boot took longer than the budget; the message names the slowest units of the critical chain. Same detail.",
		Fix: "`systemd-analyze critical-chain`, `systemd-analyze blame`; raise `systemd.boot_budget` under TCG."}

	// Ordering cycles among the loaded units
	CodeNoCycle = runner.Code{ID: "systemd-no-ordering-cycle", Group: "Ordering cycles among the loaded units", Status: "pass",
		Meaning: "No ordering cycle among the loaded units."}
	CodeCycle = runner.Code{ID: "systemd-ordering-cycle", Group: "Ordering cycles among the loaded units", Status: "fail",
		Meaning: "Units ordered after each other in a loop. Detail `units`, `journal`.",
		Fix: "`systemd-analyze verify UNIT`; remove the After=/Before= (or the dependency implying it) that closes the loop."}

	// Ordering cycles in this boot's journal
	CodeJournalNoCycle = runner.Code{ID: "systemd-journal-no-ordering-cycle", Group: "Ordering cycles in this boot's journal", Status: "pass",
		Meaning: "This boot's journal has no ordering-cycle message of systemd, and shows PID 1's messages. Detail `entries_read`, `query`, `read_in` (how long journalctl took)."}
	CodeJournalCycleBroken = runner.Code{ID: "systemd-ordering-cycle-broken", Group: "Ordering cycles in this boot's journal", Status: "fail",
		Meaning: "This boot systemd deleted a job to break an ordering cycle: that unit was not started. Detail `unit`, `deleted_job`, `cycle` (the jobs as systemd listed them), `start`, `first_logged`, `times_logged`, `journal`, `query`, `read_in`.",
		Fix: "`journalctl -b -u UNIT`, `systemd-analyze verify UNIT`; remove the After=/Before= (or the dependency implying it) that closes the loop, then start the unit."}
	CodeJournalCycleUnbroken = runner.Code{ID: "systemd-ordering-cycle-unbreakable", Group: "Ordering cycles in this boot's journal", Status: "fail",
		Meaning: "This boot systemd met a cycle it could not break: the start request failed as a whole. Same detail (no `deleted_job`).",
		Fix: "`journalctl -b -u UNIT`, `systemd-analyze verify UNIT`; remove the edge that closes the loop."}
	CodeJournalUnavailable = runner.Code{ID: "systemd-journal-unavailable", Group: "Ordering cycles in this boot's journal", Status: "skip",
		Meaning: "The journal was not read: journalctl is not installed, or it shows no message of PID 1 this boot (not root nor in `systemd-journal`/`adm`, or journald keeps nothing)."}
	CodeJournalUnreadable = runner.Code{ID: "systemd-journal-unreadable", Group: "Ordering cycles in this boot's journal", Status: "error",
		Meaning: "journalctl failed, printed what does not parse, or ran past its deadline. Detail `error`, `query`, `read_in`.",
		Fix: "`journalctl -b _PID=1`, `journalctl --verify`; raise `checks.systemd.timeout` if it is only slow."}
)
