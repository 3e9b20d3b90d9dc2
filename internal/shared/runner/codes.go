package runner

// The runner's own finding codes, reported on any check: each one's
// reference entry and the fix its findings carry.
var (
	// Deadlines
	codeCheckTimeout = Code{ID: "check-timeout", Group: "Deadlines", Status: "error",
		Meaning: "The check did not finish within its own deadline (`checks.ID.timeout`, else `check_timeout`, 5 seconds by default), or was still running when the deadline of the whole run passed. guestcheck stopped waiting for it, so this is the check's only finding: nothing it would have found is reported.",
		Fix:     "Find what check {check} waits on (a hung NFS mount, a DNS server that does not answer, a stuck agent) and fix it; if it is only slow on this machine, raise `checks.{check}.timeout` in the configuration file."}
	codeRunTimeout = Code{ID: "run-timeout", Group: "Deadlines", Status: "error",
		Meaning: "The whole run's deadline (`--timeout`, else `timeout` in the configuration file, 60 seconds by default) passed before the check finished, or while it was still waiting for a check it depends on.",
		Fix:     "Raise `--timeout` (or `timeout` in the configuration file), or find which check holds the run up: one that reports `check-timeout`, or the one with the largest `duration_ms` in a JSON report."}

	// Checks that gave no answer
	codeCheckPanic = Code{ID: "check-panic", Group: "Checks that gave no answer", Status: "error",
		Meaning: "The check crashed while it ran. This is a bug in guestcheck, not a problem of the VM; the detail named `stack` shows where it crashed. The other checks are not affected.",
		Fix:     "Report the bug to the guestcheck project with the report's detail named `stack` and the guestcheck version (`guestcheck --version`); meanwhile `--skip {check}` leaves the check out."}
	codeNoFindings = Code{ID: "no-findings", Group: "Checks that gave no answer", Status: "error",
		Meaning: "The check finished without saying anything about what it found. Every check must report at least one finding, so this is a bug in guestcheck, not a problem of the VM.",
		Fix:     "Report the bug to the guestcheck project with the guestcheck version (`guestcheck --version`) and the distribution of the VM; meanwhile `--skip {check}` leaves the check out."}
	codeDependencyNotPassed = Code{ID: "dependency-not-passed", Group: "Checks that gave no answer", Status: "skip",
		Meaning: "The check was not run because a check it depends on did not pass: its answer would have been meaningless or misleading. The detail named `dependency` names that check, and the one named `dependency_status` says what it reported."}

	// Waivers
	codeWaiverExpired = Code{ID: "waiver-expired", Group: "Waivers", Status: "warn",
		Meaning: "A waiver of one of the check's codes in the configuration file has passed its expiry date (from 00:00 UTC that day), so the finding it accepted counts towards the check's status again. The message names the waived code and the waiver's reason; the detail named `where` gives the file and line of the waiver.",
		Fix:     "Correct what {code} reports, or renew the waiver at {where} with a later `expires` date, or remove it; `guestcheck check-config FILE` checks the file after the edit."}
)
