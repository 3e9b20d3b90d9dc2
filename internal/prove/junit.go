package prove

import (
	"fmt"
	"io"
	"strings"

	"github.com/guestcheck/guestcheck/internal/junitxml"
)

// WriteJUnit renders the report for a CI page: a suite "clones" with one
// test case per clone (it booted and guestcheck passed it), and a suite
// "identity" with one test case per identity item (no two clones, and no
// clone and the template, share it). A failure's text holds the message,
// the fix and, for a clone, the console tail; an item that was not
// compared is skipped.
func WriteJUnit(w io.Writer, r Report) error {
	ts := junitxml.Timestamp(r.StartedAt)
	// The report names no host, so both suites take the schema's
	// "localhost".
	props := []junitxml.Property{{Name: "image", Value: r.Image.File}, {Name: "accel", Value: r.Accel},
		{Name: "firmware", Value: r.Firmware}, {Name: "version", Value: r.Version}}
	clones := junitxml.Suite{Name: "clones", Package: "sealprep.prove", ID: 0, Timestamp: ts, Hostname: junitxml.Hostname(""), Props: props,
		Time: junitxml.Seconds(r.DurationMS)}
	for _, c := range r.Clones {
		tc := junitxml.Case{Name: c.Name + ": boots healthy", Classname: "sealprep.prove.clones", Time: junitxml.Seconds(c.Timings.total())}
		if why := cloneFailed(c); why != "" {
			body := why + "\nfix: " + cloneFix(c) + "\n"
			if len(c.ConsoleTail) > 0 {
				body += "console tail:\n  " + strings.Join(c.ConsoleTail, "\n  ") + "\n"
			}
			tc.Failure = &junitxml.Problem{Type: "fail", Message: why, Body: junitxml.Body(body)}
		}
		clones.Add(tc)
	}
	ident := junitxml.Suite{Name: "identity", Package: "sealprep.prove", ID: 1, Timestamp: ts, Hostname: junitxml.Hostname(""), Props: props,
		Time: junitxml.Seconds(0)}
	for _, it := range r.Items {
		tc := junitxml.Case{Name: string(it.Item) + ": not shared", Classname: "sealprep.prove.identity", Time: "0"}
		switch it.Status {
		case ItemShared:
			var body strings.Builder
			for _, f := range r.Failures {
				if f.Item == string(it.Item) {
					fmt.Fprintf(&body, "%s\nfix: %s\n", f.Message, f.Fix)
				}
			}
			tc.Failure = &junitxml.Problem{Type: "fail", Message: string(it.Item) + " " + it.Detail, Body: junitxml.Body(body.String())}
		case ItemNotCompared:
			tc.Skipped = &junitxml.Skipped{Message: it.Detail}
		}
		ident.Add(tc)
	}
	return junitxml.Write(w, junitxml.Suites{Suites: []junitxml.Suite{clones, ident}})
}

func (t Timings) total() int64 { return t.Seed + t.Boot + t.CloudInit + t.Guestcheck + t.Collection }
