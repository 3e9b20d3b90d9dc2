package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/suggest"
)

// Select returns the checks of all that a run executes, in all's order,
// after Validate has judged the configuration: the config file's enabled
// switches, then only (when non-empty, exactly
// these IDs) and skip (never these), both comma-separated lists of check
// IDs. An unknown ID in the config or either list is an error with the
// closest ID suggested, a finding code is named with its check, and a
// selection left empty is an error, so a typo never silently drops a
// check or runs nothing. It is guestcheck's counterpart of seal.Select.
func Select(all []Check, cfg *config.Config, only, skip string) ([]Check, error) {
	ids := checkIDs(all)
	if err := Validate(all, cfg); err != nil {
		return nil, err
	}
	onlySet, err := idSet(all, ids, "only", only)
	if err != nil {
		return nil, err
	}
	skipSet, err := idSet(all, ids, "skip", skip)
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
	if len(out) == 0 && len(all) > 0 {
		return nil, fmt.Errorf("no check left to run (%s)", emptyWhy(only, skip))
	}
	return out, nil
}

// emptyWhy names what emptied the selection.
func emptyWhy(only, skip string) string {
	switch {
	case only != "" && skip != "":
		return "--skip removes every check --only names"
	case skip != "":
		return "--skip and the configuration's enabled: false leave none"
	case only != "":
		return "--only names no enabled check"
	}
	return "the configuration disables every check"
}

// idSet parses the comma-separated IDs of --flagName, ignoring blanks.
func idSet(all []Check, ids []string, flagName, s string) (map[string]bool, error) {
	set := map[string]bool{}
	for _, id := range strings.Split(s, ",") {
		id = strings.TrimSpace(id)
		if id == "" {
			continue
		}
		if !slices.Contains(ids, id) {
			return nil, fmt.Errorf("--%s: %s", flagName, unknownID(all, ids, id))
		}
		set[id] = true
	}
	return set, nil
}

// unknownID explains an ID that names no check: a finding code says which
// check emits it, a near miss gets the closest ID.
func unknownID(all []Check, ids []string, id string) string {
	for _, c := range all {
		if c.Has(id) {
			return fmt.Sprintf("%q is a finding code of check %s; this takes check IDs (--only %s)", id, c.ID, c.ID)
		}
	}
	msg := fmt.Sprintf("unknown check ID %q", id)
	if s := suggest.Suggest(id, ids); s != "" {
		msg += "; did you mean " + s + "?"
	}
	return msg + " (see --list)"
}

// Has reports whether checks holds the check with this ID.
func Has(checks []Check, id string) bool { return slices.Contains(checkIDs(checks), id) }

// checkIDs are the IDs of checks, in order.
func checkIDs(checks []Check) []string {
	ids := make([]string, len(checks))
	for i, c := range checks {
		ids[i] = c.ID
	}
	return ids
}
