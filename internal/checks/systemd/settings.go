package systemd

import (
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/config"
)

// DefaultBootBudget is the userspace boot budget: Debian guests under TCG
// (no KVM) take about a minute.
const DefaultBootBudget = 60 * time.Second

// Settings are the systemd section of guestcheck.yaml.
type Settings struct {
	// BootBudget bounds userspace start-up: from systemd's start to the
	// end of the boot transaction and to cloud-final, the guest agent and
	// sshd becoming active.
	BootBudget time.Duration
}

var settings = config.Settings[Settings]{
	Name:    "systemd",
	Help:    "The systemd check's boot budget: how long userspace start-up may take.",
	Default: func() Settings { return Settings{BootBudget: DefaultBootBudget} },
	Keys: []config.Field[Settings]{
		config.Duration("boot_budget", "60s",
			"Bounds userspace start-up: from systemd's start to the end of the boot transaction, and to cloud-final, the guest agent and sshd becoming active. Guests without KVM (TCG) need about the default.",
			true, func(s *Settings, v time.Duration) { s.BootBudget = v }),
	},
}
