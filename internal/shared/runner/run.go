package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/store"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// Codes lists the codes the runner itself reports on any check, beside
// the check's own Codes (codes.go describes each).
var Codes = []Code{codeCheckTimeout, codeRunTimeout, codeCheckPanic, codeNoFindings, codeDependencyNotPassed, codeWaiverExpired}

// RunOptions tunes a run.
type RunOptions struct {
	// Timeout returns the deadline of one check.
	Timeout func(id string) time.Duration
}

// Run executes checks concurrently. Each check runs under its own deadline
// and waits only for the checks it depends on; a dependency that did not
// pass turns the dependant into a skip. When ctx ends (the whole-run
// --timeout), unfinished checks are reported as errors and Run returns
// without waiting for them. Results keep the order of checks.
func Run(ctx context.Context, checks []Check, env *Env, opts RunOptions) []Result {
	if env.Facts == nil {
		// Facts read once live as long as this run and no longer.
		e := *env
		e.Facts = store.New()
		env = &e
	}
	results := make([]Result, len(checks))
	done := make([]chan struct{}, len(checks))
	index := make(map[string]int, len(checks))
	for i, c := range checks {
		done[i] = make(chan struct{})
		index[c.ID] = i
	}
	finished := make(chan int, len(checks))
	for i := range checks {
		go func() {
			results[i] = oneLine(runOne(ctx, checks[i], env, opts, results, done, index))
			close(done[i])
			finished <- i
		}()
	}
	got := make([]bool, len(checks))
	for n := 0; n < len(checks); n++ {
		select {
		case i := <-finished:
			got[i] = true
		case <-ctx.Done():
			// The run's deadline passed: report what is missing and stop
			// waiting. Finished results are complete and no longer written.
			out := make([]Result, len(checks))
			for i, c := range checks {
				if got[i] {
					out[i] = results[i]
					continue
				}
				out[i] = oneLine(errorResult(c, codeRunTimeout, unfinished(ctx), codeRunTimeout.Fixf()))
			}
			return out
		}
	}
	return results
}

// TimedOut reports whether the runner cut r off at a deadline, the
// check's own or the run's, rather than the check reporting an error.
func TimedOut(r Result) bool {
	return slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Code == codeCheckTimeout.ID || f.Code == codeRunTimeout.ID })
}

// unfinished says why a check was cut off when the run's ctx ended: its
// deadline, or the run being stopped; in words, not Go's error text.
func unfinished(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.Canceled) {
		return "did not finish: the run was stopped"
	}
	return "did not finish before the run's deadline"
}

// runOne waits for c's dependencies, then runs c under its deadline.
func runOne(ctx context.Context, c Check, env *Env, opts RunOptions, results []Result, done []chan struct{}, index map[string]int) Result {
	start := time.Now()
	for _, dep := range c.DependsOn {
		j, ok := index[dep]
		if !ok {
			continue // not part of this run: not enforced
		}
		select {
		case <-done[j]:
		case <-ctx.Done():
			return errorResult(c, codeRunTimeout, "run deadline passed while waiting for "+dep, codeRunTimeout.Fixf())
		}
		if st := results[j].Status; st != Pass {
			r := Result{ID: c.ID, Title: c.Title, Status: Skip,
				Findings: []Finding{Skipf(codeDependencyNotPassed.ID,
					fmt.Sprintf("skipped because %s reported %s", dep, st),
					map[string]string{"dependency": dep, "dependency_status": string(st)})}}
			r.Summary = r.Findings[0].Message
			return r
		}
	}
	timeout := 5 * time.Second
	if opts.Timeout != nil {
		timeout = opts.Timeout(c.ID)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	ch := make(chan []Finding, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				stack := string(debug.Stack())
				ch <- []Finding{Errorf(codeCheckPanic.ID, fmt.Sprintf("the check crashed: %v", p),
					map[string]string{"stack": trimStack(stack)}, codeCheckPanic.Fixf("check", c.ID))}
			}
		}()
		ch <- c.Run(cctx, env)
	}()
	var fs []Finding
	select {
	case fs = <-ch:
	case <-cctx.Done():
		// The check overran its deadline; abandon it. Its goroutine ends
		// with the process at the latest.
		msg := fmt.Sprintf("did not finish within its %v deadline", timeout)
		if ctx.Err() != nil {
			msg = unfinished(ctx)
		}
		r := errorResult(c, codeCheckTimeout, msg, codeCheckTimeout.Fixf("check", c.ID))
		r.Duration = time.Since(start)
		return r
	}
	r := Result{ID: c.ID, Title: c.Title, Duration: time.Since(start), Findings: fs}
	for i, f := range fs {
		if !f.Status.Valid() {
			// A zero-valued or misspelt status must never read as healthy.
			fs[i].Status = Error
			fs[i].Message = fmt.Sprintf("invalid status %q: %s", f.Status, f.Message)
		}
		fs[i].Pending = slices.Contains(c.Pending, f.Code)
	}
	if len(fs) == 0 {
		r.Findings = []Finding{Errorf(codeNoFindings.ID, "the check returned no findings", nil, codeNoFindings.Fixf("check", c.ID))}
	}
	now := time.Now
	if env.Now != nil {
		now = env.Now
	}
	r.Findings = waive(c, r.Findings, env.Config, now())
	r.Status, r.Summary = summarise(r.Findings)
	return r
}

// summarise derives a check's status and one-line summary from its
// findings: the worst status they count with (a waived finding counts as
// a pass), and the message of the first finding that has it; a waived
// one says so.
func summarise(fs []Finding) (Status, string) {
	sts := make([]Status, len(fs))
	for i, f := range fs {
		sts[i] = f.Counted()
	}
	w := reportv1.Overall(sts...)
	for _, f := range fs {
		if f.Counted() == w {
			if n := countAt(fs, w); n > 1 && w != Pass && w != Skip {
				return w, fmt.Sprintf("%s (+%d more)", f.Message, n-1)
			}
			if f.Waived != nil {
				return w, fmt.Sprintf("%s (%s, waived: %s)", f.Message, f.Status, f.Waived.Reason)
			}
			return w, f.Message
		}
	}
	return w, fs[0].Message
}

func countAt(fs []Finding, s Status) int {
	n := 0
	for _, f := range fs {
		if f.Counted() == s {
			n++
		}
	}
	return n
}

// oneLine folds the result's summary and every finding's message and
// remediation to one line, whatever the check wrote (text from a file, a
// library's error): every renderer, and the journal and console lines,
// can then rely on it. Detail values stay as they are: they are evidence,
// and a list of files or a stack is clearer on several lines. The check's
// own slice is left alone.
func oneLine(r Result) Result {
	r.Summary = problem.OneLine(r.Summary)
	r.Findings = slices.Clone(r.Findings)
	for i := range r.Findings {
		f := &r.Findings[i]
		f.Message = problem.OneLine(f.Message)
		f.Remediation = problem.OneLine(f.Remediation)
	}
	return r
}

func errorResult(c Check, code Code, msg, fix string) Result {
	return Result{ID: c.ID, Title: c.Title, Status: Error, Summary: msg,
		Findings: []Finding{Errorf(code.ID, msg, nil, fix)}}
}

// trimStack keeps the frames that matter: the panic site and its callers,
// without the runtime's own frames.
func trimStack(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 24 {
		lines = lines[:24]
	}
	return strings.Join(lines, "\n")
}
