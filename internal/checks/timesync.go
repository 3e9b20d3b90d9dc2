package checks

import (
	timesync "github.com/guestcheck/guestcheck/internal/checks/time-sync"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// TimeSync checks the kernel clock's synchronisation and error through
// adjtimex, that one time daemon runs and is enabled, and that it has
// servers. The logic lives in internal/checks/time-sync; docs/checks/time-sync.md
// explains each code.
var TimeSync = runner.Check{
	ID:    "time-sync",
	Title: "Clock synchronisation",
	Description: "the kernel clock is synchronised and within time_sync.max_offset (adjtimex); chrony, systemd-timesyncd " +
		"or ntpd runs, is enabled and has servers",
	Codes: timesync.Codes,
	Run:   timesync.Run,
}
