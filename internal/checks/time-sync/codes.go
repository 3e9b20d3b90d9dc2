package timesync

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (

	// Where the check applies
	CodeNotLive = runner.Code{ID: "time-sync-not-live", Group: "Where the check applies", Status: "skip",
		Meaning: "Under `--root IMAGE` the kernel clock and the units are not checked."}

	// The clock
	CodeSynced = runner.Code{ID: "time-sync-clock-synced", Group: "The clock", Status: "pass",
		Meaning: "The kernel clock is synchronised and within `max_offset`. Detail `kernel_state`, `max_error`, `estimated_error`, `offset`, `sta_unsync`, `max_offset`."}
	CodeUnsynced = runner.Code{ID: "time-sync-clock-unsynced", Group: "The clock", Status: "warn",
		Meaning: "Maximum error 16 s or more: `NTPSynchronized=no`.",
		Fix: "Make the daemon reach its servers (`chronyc sources`, `timedatectl timesync-status`, `ntpq -p`)."}
	CodeClockOff = runner.Code{ID: "time-sync-clock-off", Group: "The clock", Status: "fail",
		Meaning: "Offset plus estimated error exceed `time_sync.max_offset`.",
		Fix: "`chronyc makestep` or restart systemd-timesyncd; find why it drifted (pause, restore, unreachable server)."}
	CodeClockUnreadable = runner.Code{ID: "time-sync-clock-unreadable", Group: "The clock", Status: "error",
		Meaning: "`adjtimex` failed. Detail `error`.",
		Fix: "Run on the guest itself."}

	// The time daemon
	CodeDaemonActive = runner.Code{ID: "time-sync-daemon-active", Group: "The time daemon", Status: "pass",
		Meaning: "A time daemon runs (or, under `--root`, is enabled). Detail: each daemon's unit state."}
	CodeDaemonDisabled = runner.Code{ID: "time-sync-daemon-disabled", Group: "The time daemon", Status: "warn",
		Meaning: "The daemon runs but is not enabled: it will not start at the next boot.",
		Fix: "`systemctl enable UNIT` or `timedatectl set-ntp true`."}
	CodeNoDaemon = runner.Code{ID: "time-sync-no-daemon", Group: "The time daemon", Status: "fail",
		Meaning: "No time daemon runs (or is enabled in the image); the message names masked ones.",
		Fix: "Install and enable one, `systemctl unmask` a masked one, `timedatectl set-ntp true`."}
	CodeMultiple = runner.Code{ID: "time-sync-multiple-daemons", Group: "The time daemon", Status: "warn",
		Meaning: "More than one time daemon runs.",
		Fix: "Disable all but one."}
	CodeNoSystemd = runner.Code{ID: "time-sync-no-systemd", Group: "The time daemon", Status: "skip",
		Meaning: "systemd is not running, so the daemons' state is unknown."}
	CodeUnitsUnreadable = runner.Code{ID: "time-sync-units-unreadable", Group: "The time daemon", Status: "error",
		Meaning: "The units could not be read over D-Bus. Detail `error`.",
		Fix: "`systemctl status chrony systemd-timesyncd ntp`."}

	// Its time sources
	CodeServersOK = runner.Code{ID: "time-sync-servers-ok", Group: "Its time sources", Status: "pass",
		Meaning: "The running daemon has time sources, or timesyncd uses its compiled-in fallback. Detail `daemon`, `servers` (kind, host, file:line), `files`."}
	CodeNoServers = runner.Code{ID: "time-sync-no-servers", Group: "Its time sources", Status: "warn",
		Meaning: "The running daemon has no time source configured.",
		Fix: "Add `pool`/`server` lines (chrony, ntpd) or `NTP=` (timesyncd)."}
	CodeConfigInvalid = runner.Code{ID: "time-sync-config-invalid", Group: "Its time sources", Status: "warn",
		Meaning: "A configuration line cannot be read (a `server` without a host, binary content, a timesyncd line that is not key=value); the message names `FILE:LINE`. Detail `problems`.",
		Fix: "Fix the lines."}
)
