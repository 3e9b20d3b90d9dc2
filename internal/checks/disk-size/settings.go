package disksize

import (
	"fmt"

	"github.com/guestcheck/guestcheck/internal/shared/config"
)

// Settings are the disk section of guestcheck.yaml: usage thresholds in
// percent of blocks and of inodes.
type Settings struct {
	WarnPercent, FailPercent int
}

var settings = config.Settings[Settings]{
	Name:    "disk",
	Help:    "Thresholds of the disk usage checks, in percent of blocks and of inodes.",
	Default: func() Settings { return Settings{WarnPercent: 90, FailPercent: 97} },
	Keys: []config.Field[Settings]{
		config.Percent("warn_percent", "90", "Usage above this warns; at most disk.fail_percent.",
			func(s *Settings, v int) { s.WarnPercent = v }),
		config.Percent("fail_percent", "97", "Usage above this fails.",
			func(s *Settings, v int) { s.FailPercent = v }),
	},
	// A warning threshold above the failure one would never warn.
	Issues: func(s Settings) []config.Issue {
		if s.WarnPercent <= s.FailPercent {
			return nil
		}
		return []config.Issue{{Path: "warn_percent",
			Msg: fmt.Sprintf("%d is above disk.fail_percent (%d), so a filesystem would fail before it ever warned; write a warn_percent at or below fail_percent (the defaults are 90 and 97)", s.WarnPercent, s.FailPercent),
			OrElse: &config.Issue{Path: "fail_percent",
				Msg: fmt.Sprintf("%d is below disk.warn_percent (%d), so a filesystem would fail before it ever warned; write a fail_percent at or above warn_percent (the defaults are 90 and 97)", s.FailPercent, s.WarnPercent)}}}
	},
}
