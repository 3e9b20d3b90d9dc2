package timesync

import (
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/config"
)

// DefaultMaxOffset is the bound on the clock error: a disciplined clock
// is within milliseconds, and one second is far inside Kerberos'
// five-minute tolerance.
const DefaultMaxOffset = time.Second

// Settings are the time_sync section of guestcheck.yaml.
type Settings struct {
	// MaxOffset is how far the kernel's own estimate of the clock error
	// may go before the check fails.
	MaxOffset time.Duration
}

var settings = config.Settings[Settings]{
	Name:    "time_sync",
	Help:    "The time-sync check's bound on the clock error.",
	Default: func() Settings { return Settings{MaxOffset: DefaultMaxOffset} },
	Keys: []config.Field[Settings]{
		config.Duration("max_offset", "1s",
			"How far the kernel's own estimate of the clock error (offset plus estimated error) may go before the check fails.",
			true, func(s *Settings, v time.Duration) { s.MaxOffset = v }),
	},
}
