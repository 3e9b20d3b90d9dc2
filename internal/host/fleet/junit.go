package fleet

import (
	"fmt"
	"io"
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/junitxml"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// WriteJUnit writes one <testsuite> per VM: one test case per check of
// its report (fail and warn a <failure>, error an <error>, skip
// <skipped>), one <failure> per identity item it shares with another VM,
// and for a VM that could not be surveyed one <error> with the reason.
// In a merge a suite is name@host, with its host as hostname.
func WriteJUnit(w io.Writer, r Result) error {
	r = cleanResult(r)
	var doc junitxml.Suites
	for i, vm := range r.VMs {
		vm, err := vm.full()
		if err != nil {
			return err
		}
		vm = cleanVM(vm) // its report as read again from its file
		host := r.Host
		if vm.Host != "" {
			host = vm.Host
		}
		s := junitxml.Suite{Name: vm.ID(), Package: "guestcheck.fleet", ID: i,
			Timestamp: junitxml.Timestamp(r.StartedAt), Hostname: junitxml.Hostname(host),
			Time: junitxml.Seconds(vm.DurationMS),
			Props: []junitxml.Property{{Name: "source", Value: vm.Source}, {Name: "status", Value: string(vm.Status)},
				{Name: "agent_version", Value: vm.AgentVersion}}}
		if vm.Host != "" {
			s.Props = append(s.Props, junitxml.Property{Name: "host", Value: vm.Host})
		}
		class := "fleet." + vm.ID()
		if vm.Report == nil && vm.APIIdentity != nil {
			s.Add(junitxml.Case{Name: "survey", Classname: class, Time: s.Time, Skipped: &junitxml.Skipped{Message: APIOnly}})
		} else if vm.Report == nil {
			s.Add(junitxml.Case{Name: "survey", Classname: class, Time: s.Time,
				Error: &junitxml.Problem{Type: string(Unknown), Message: vm.Reason, Body: junitxml.Body(vm.Reason)}})
		} else {
			for _, c := range vm.Report.Checks {
				s.Add(checkCase(class, c))
			}
		}
		for _, c := range r.Collisions {
			for _, m := range c.Members {
				if m != vm.ID() {
					continue
				}
				msg := fmt.Sprintf("%s %s shared with %s", c.Item, c.Value, strings.Join(others(c.Members, vm.ID()), ", "))
				s.Add(junitxml.Case{Name: "identity: " + msg, Classname: class + ".identity", Time: "0",
					Failure: &junitxml.Problem{Type: string(Fail), Message: msg, Body: junitxml.Body(msg + "\nfix: " + c.Fix + "\n")}})
			}
		}
		doc.Suites = append(doc.Suites, s)
	}
	return junitxml.Write(w, doc)
}

// checkCase is one check of a guest's report.
func checkCase(class string, c report.Check) junitxml.Case {
	tc := junitxml.Case{Name: c.ID + ": " + c.Summary, Classname: class + "." + c.ID, Time: junitxml.Seconds(c.DurationMS)}
	switch c.Status {
	case runner.Pass:
	case runner.Skip:
		tc.Skipped = &junitxml.Skipped{Message: c.Summary}
	case runner.Fail, runner.Warn:
		tc.Failure = &junitxml.Problem{Type: string(c.Status), Message: c.Summary, Body: findingsText(c)}
	default:
		tc.Error = &junitxml.Problem{Type: string(c.Status), Message: c.Summary, Body: findingsText(c)}
	}
	return tc
}

// findingsText lists a check's findings that are not a pass, with fixes,
// escaped for a failure's body.
func findingsText(c report.Check) string {
	var b strings.Builder
	for _, f := range c.Findings {
		if f.Status == runner.Pass {
			continue
		}
		fmt.Fprintf(&b, "%s %s: %s\n", strings.ToUpper(string(f.Status)), f.Code, f.Message)
		if f.Remediation != "" {
			fmt.Fprintf(&b, "fix: %s\n", f.Remediation)
		}
	}
	return junitxml.Body(b.String())
}

func others(ms []string, me string) []string {
	var out []string
	for _, m := range ms {
		if m != me {
			out = append(out, m)
		}
	}
	return out
}
