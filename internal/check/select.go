package check

import (
	"fmt"
	"strings"

	"github.com/guestcheck/guestcheck/internal/config"
)

// Select returns the checks of all that a run executes, in all's order:
// the config file's enabled switches, then only (when non-empty, exactly
// these IDs) and skip (never these), both comma-separated lists of check
// IDs. An unknown ID in the config or either list is an error, so a typo
// never silently drops a check. It is guestcheck's counterpart of
// seal.Select.
func Select(all []Check, cfg *config.Config, only, skip string) ([]Check, error) {
	known := map[string]bool{}
	for _, c := range all {
		known[c.ID] = true
	}
	for id := range cfg.Checks {
		if !known[id] {
			return nil, fmt.Errorf("config: checks.%s: unknown check ID", id)
		}
	}
	onlySet, err := idSet(known, "only", only)
	if err != nil {
		return nil, err
	}
	skipSet, err := idSet(known, "skip", skip)
	if err != nil {
		return nil, err
	}
	var out []Check
	for _, c := range all {
		switch {
		case skipSet[c.ID]:
		case len(onlySet) > 0:
			if onlySet[c.ID] {
				out = append(out, c)
			}
		case cfg.CheckEnabled(c.ID):
			out = append(out, c)
		}
	}
	return out, nil
}

// idSet parses the comma-separated IDs of --flagName, ignoring blanks.
func idSet(known map[string]bool, flagName, s string) (map[string]bool, error) {
	set := map[string]bool{}
	for _, id := range strings.Split(s, ",") {
		id = strings.TrimSpace(id)
		if id == "" {
			continue
		}
		if !known[id] {
			return nil, fmt.Errorf("--%s: unknown check ID %q", flagName, id)
		}
		set[id] = true
	}
	return set, nil
}

// Has reports whether checks holds the check with this ID.
func Has(checks []Check, id string) bool {
	for _, c := range checks {
		if c.ID == id {
			return true
		}
	}
	return false
}
