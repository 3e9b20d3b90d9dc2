package runner

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/suggest"
)

// Validate judges what only the registry knows about a configuration:
// every check ID under checks: and probe.checks names a check, and every
// waiver names a check and one of its codes. Each mistake is a problem at
// its line with the closest name suggested; the error is a config.Errors
// (nil when all is well). guestcheck, guestcheck probe and guestcheck
// check-config all call it, so a file is judged the same by each.
func Validate(all []Check, cfg *config.Config) error {
	ids := checkIDs(all)
	var probs config.Errors
	at := func(path, format string, args ...any) {
		probs = append(probs, problem.At(cfg.Source(), cfg.Line(path), "%s: %s", path, fmt.Sprintf(format, args...)))
	}
	for _, id := range slices.Sorted(maps.Keys(cfg.Checks)) {
		if !slices.Contains(ids, id) {
			at("checks."+id, "%s", configID(all, ids, id, "", "to accept one finding, list it under waivers:"))
		}
	}
	// Only a list the file gives: the defaults are not the file's to fix.
	if cfg.Probe.Declared && cfg.Line("probe.checks") > 0 {
		for i, id := range cfg.Probe.Checks {
			if !slices.Contains(ids, id) {
				at(fmt.Sprintf("probe.checks[%d]", i), "%s", configID(all, ids, id, strconv.Quote(id), "probe.checks takes check IDs"))
			}
		}
	}
	for _, w := range cfg.Waivers {
		i := slices.Index(ids, w.Check)
		switch {
		case w.Check == "" || w.Code == "":
			// The decoder has said what the entry lacks.
		case i < 0:
			at(w.Path+".check", "%s", configID(all, ids, w.Check, strconv.Quote(w.Check), "check: takes a check ID, code: the finding code"))
		case !all[i].Has(w.Code):
			at(w.Path+".code", "%s", unknownCode(all, all[i], w.Code))
		}
	}
	if len(probs) == 0 {
		return nil
	}
	slices.SortStableFunc(probs, func(a, b problem.Problem) int { return a.Line - b.Line })
	return probs
}

// InspectConfig reads the configuration at path and judges it whole: the
// file's own mistakes and the registry's (Validate) in one pass, in line
// order, so that a typo'd key does not hide an unknown check ID or code.
// It returns what could be decoded even when there are problems (nil
// when the file cannot be read or is not YAML), for check-config's notes.
func InspectConfig(all []Check, path string, explicit bool) (*config.Config, config.Errors) {
	cfg, probs := config.Inspect(path, explicit, Sections(all)...)
	if cfg == nil {
		return nil, probs
	}
	var reg config.Errors
	if errors.As(Validate(all, cfg), &reg) {
		probs = append(probs, reg...)
		slices.SortStableFunc(probs, func(a, b problem.Problem) int { return a.Line - b.Line })
	}
	return cfg, probs
}

// Sections are the checks' own sections of the configuration file, in
// registry order: what the loader decodes besides the general keys.
func Sections(all []Check) []config.Section {
	var out []config.Section
	for _, c := range all {
		if c.Settings.Name != "" {
			out = append(out, c.Settings)
		}
	}
	return out
}

// LoadConfig is how guestcheck, guestcheck probe and guestcheck
// check-config load the configuration, so that the three judge a file
// alike: InspectConfig's problems, or the configuration when it has none.
func LoadConfig(all []Check, path string, explicit bool) (*config.Config, error) {
	cfg, probs := InspectConfig(all, path, explicit)
	if len(probs) > 0 {
		return nil, probs
	}
	return cfg, nil
}

// configID explains a configuration's check ID that names no check, like
// unknownID does for the command line; codeHint follows a finding code
// given in its place. quoted is the ID as the message shows it, "" when
// the key path already names it.
func configID(all []Check, ids []string, id, quoted, codeHint string) string {
	for _, c := range all {
		if c.Has(id) {
			if quoted == "" {
				return fmt.Sprintf("a finding code of check %s, not a check ID; %s", c.ID, codeHint)
			}
			return fmt.Sprintf("%s is a finding code of check %s; %s", quoted, c.ID, codeHint)
		}
	}
	msg := strings.TrimSpace("unknown check ID " + quoted)
	if s := suggest.Suggest(id, ids); s != "" {
		msg += "; did you mean " + s + "?"
	}
	return msg + " (see guestcheck --list)"
}

// unknownCode explains a waiver's code that check c does not have.
func unknownCode(all []Check, c Check, code string) string {
	msg := fmt.Sprintf("%s has no finding code %q", c.ID, code)
	for _, o := range all {
		if o.Has(code) {
			return msg + fmt.Sprintf("; it is a code of check %s (check: %s)", o.ID, o.ID)
		}
	}
	if s := cmp.Or(suggest.Suggest(code, IDs(c.Codes)), wordsIn(code, IDs(c.Codes))); s != "" {
		msg += "; did you mean " + s + "?"
	}
	return msg + fmt.Sprintf(" (guestcheck explain %s lists them)", c.ID)
}

// wordsIn returns the one code that holds every word of code (a word left
// out, as in time-sync-unsynced), or "" when none or several do.
func wordsIn(code string, codes []string) string {
	var hit []string
	for _, c := range codes {
		words := strings.Split(c, "-")
		if !slices.ContainsFunc(strings.Split(code, "-"), func(w string) bool { return !slices.Contains(words, w) }) {
			hit = append(hit, c)
		}
	}
	if len(hit) == 1 {
		return hit[0]
	}
	return ""
}
