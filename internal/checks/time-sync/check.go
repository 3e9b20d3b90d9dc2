package timesync

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// Check judges the kernel clock's synchronisation and error through
// adjtimex, that one time daemon runs and is enabled, and that it has
// servers; docs/checks/time-sync.md explains each code.
var Check = runner.Check{
	ID:    "time-sync",
	Title: "Clock synchronisation",
	Description: "the kernel clock is synchronised and within time_sync.max_offset (adjtimex), and one of chrony, " +
		"systemd-timesyncd or ntpd runs, is enabled and has servers",
	Settings: settings.Section(),
	Codes:    Codes,
	Run:      Run,
}
