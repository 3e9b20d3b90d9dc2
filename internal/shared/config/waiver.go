package config

import (
	"fmt"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Waiver accepts one finding code of one check: the finding is still
// reported, marked with Reason, but no longer counts towards the exit code.
// The registry's side (the check exists and has the code) is judged by
// check.Validate; the runner applies waivers.
type Waiver struct {
	Check  string
	Code   string
	Reason string
	// Expires is the day (00:00 UTC) from which the waiver no longer
	// applies; zero for never.
	Expires time.Time
	// Path is the entry's key path, "waivers[2]", for messages.
	Path string

	file string
	line int
}

// dateLayout is how expires: is written.
const dateLayout = "2006-01-02"

// ExpiresText is the expiry date as the file writes it; "" for never.
func (w Waiver) ExpiresText() string {
	if w.Expires.IsZero() {
		return ""
	}
	return w.Expires.Format(dateLayout)
}

// Expired reports whether the waiver no longer applies at now.
func (w Waiver) Expired(now time.Time) bool {
	return !w.Expires.IsZero() && !now.Before(w.Expires)
}

// Where is "file:line" of the entry, for messages and remediations.
func (w Waiver) Where() string {
	if w.file == "" {
		return w.Path
	}
	return fmt.Sprintf("%s:%d", w.file, w.line)
}

// expiresLeaf decodes waivers[].expires, a date without a time.
var expiresLeaf = leaf(func(d *decoder, n *yaml.Node, shown string) (time.Time, bool) {
	s, ok := d.scalar(n, shown, "a date such as 2027-03-01")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		d.add(n.Line, "%s: want a date such as 2027-03-01, got %q", shown, s)
		return time.Time{}, false
	}
	return t, true
}, func(c *Config, _ []string, t time.Time) { c.Waivers[len(c.Waivers)-1].Expires = t })

// finishWaivers checks what the table cannot: the required keys, and one
// entry per check and code.
func (d *decoder) finishWaivers() {
	first := map[[2]string]int{}
	for _, w := range d.c.Waivers {
		switch {
		case w.Check == "":
			d.add(w.line, "%s: no check: name the check whose finding is waived (check: ID)", w.Path)
		case w.Code == "":
			d.add(w.line, "%s: no code: name the finding code waived (code: CODE; guestcheck explain %s lists them)", w.Path, w.Check)
		case w.Reason == "":
			d.add(w.line, "%s: no reason: say why %s is accepted (reason: \"...\"); every report shows it", w.Path, w.Code)
		default:
			k := [2]string{w.Check, w.Code}
			if l, dup := first[k]; dup {
				d.add(w.line, "%s: waives %s of %s again (first at line %d)", w.Path, w.Code, w.Check, l)
				continue
			}
			first[k] = w.line
		}
	}
}

// Notes are what check-config says about a valid file that wants an
// edit: each waiver expired at now, by name and date. They are not
// mistakes: the run goes on and reports waiver-expired (a warning).
func (c *Config) Notes(now time.Time) []problem.Problem {
	var out []problem.Problem
	for _, w := range c.Waivers {
		if w.Expired(now) && w.Check != "" && w.Code != "" {
			out = append(out, problem.At(w.file, w.line, "note: %s: expired on %s, so it no longer waives %s of %s and the run reports waiver-expired; set a later expires: or remove the entry",
				w.Path, w.ExpiresText(), w.Code, w.Check))
		}
	}
	return out
}
