package drill

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/junitxml"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// Output formats.
const (
	FormatText       = "text"
	FormatJSON       = "json"
	FormatJUnit      = "junit"
	FormatPrometheus = "prometheus"
)

// Formats lists the output formats.
var Formats = []string{FormatText, FormatJSON, FormatJUnit, FormatPrometheus}

// Types are the rules of the drill's JSON types beyond their tags:
// schema/freeze-drill-v1.schema.json is generated from them (its test),
// and Render checks every document with them before writing it.
func Types() reportv1.Types {
	return reportv1.Types{
		reflect.TypeFor[Status](): {Def: "status", Enum: []string{string(Pass), string(Warn), string(Unknown), string(Fail)}},
		reflect.TypeFor[Hook](): {Def: "hook", Check: func(v any) string {
			h := v.(*Hook)
			if h.State != HookRan && h.State != HookFailed && h.State != HookSilent && h.State != HookUnknown {
				return "hook state " + strconv.Quote(bounded(h.State, 20)) + " is not ran, failed, silent or unknown"
			}
			return ""
		}, Cond: `{"properties": {"state": {"enum": ["ran", "failed", "silent", "unknown"]}}}`},
		reflect.TypeFor[Prediction](): {Def: "prediction", Check: func(v any) string {
			p := v.(*Prediction)
			if p.State != Agree && p.State != Disagree && p.State != NotCompared {
				return "prediction state " + strconv.Quote(bounded(p.State, 20)) + " is not agree, disagree or not compared"
			}
			return ""
		}, Cond: `{"properties": {"state": {"enum": ["agree", "disagree", "not compared"]}}}`},
		reflect.TypeFor[VM](): {Def: "vm", Check: func(v any) string {
			vm := v.(*VM)
			if vm.Status != Pass && vm.Status != Unknown && vm.Fix == "" {
				return "a " + string(vm.Status) + " VM without a fix"
			}
			return ""
		}, Cond: `{"if": {"properties": {"status": {"enum": ["warn", "fail"]}}}, "then": {"required": ["fix"]}}`},
	}
}

// Render writes r in format.
func Render(w io.Writer, r Result, format string) error {
	if err := reportv1.Check(&r, Types()); err != nil {
		return fmt.Errorf("the drill's result breaks its own schema: %w", err)
	}
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case FormatJUnit:
		return writeJUnit(w, r)
	case FormatPrometheus:
		return WritePrometheus(w, r)
	}
	return writeText(w, r)
}

// ExitCode is 0 when every VM passed, 2 for warnings at worst, 1
// otherwise.
func ExitCode(r Result) int {
	switch r.Status {
	case Pass:
		return 0
	case Warn:
		return 2
	}
	return 1
}

func writeText(w io.Writer, r Result) error {
	bw := bufio.NewWriter(w)
	for _, e := range r.SourceErrors {
		fmt.Fprintf(bw, "UNKNOWN  %s: %s\n", e.Source, e.Error)
	}
	for _, vm := range r.VMs {
		fmt.Fprintf(bw, "%-8s %s: %s\n", strings.ToUpper(string(vm.Status)), vm.Name, vm.Reason)
		if vm.Froze || vm.ThawedBy != "" {
			fmt.Fprintf(bw, "         freeze %s, frozen %s, thaw %s; %d filesystem(s) frozen, %d thawed, guest-get-fsinfo %d before and %d after; thawed by the %s\n",
				ms(vm.FreezeMS), ms(vm.FrozenMS), ms(vm.ThawMS), vm.FrozenCount, vm.ThawedCount, len(vm.FSBefore), len(vm.FSAfter), cmp(vm.ThawedBy, "nobody"))
		}
		if vm.Status != Unknown || vm.Froze {
			fmt.Fprintf(bw, "         hook: %s", vm.Hook.State)
			if s := hookScripts(vm.Hook, "freeze") + thawSep(vm.Hook); s != "" {
				fmt.Fprintf(bw, " (%s)", s)
			}
			if vm.Hook.Why != "" {
				fmt.Fprintf(bw, ": %s", vm.Hook.Why)
			}
			fmt.Fprintf(bw, "\n         prediction: %s", vm.Prediction.State)
			if vm.Prediction.Why != "" {
				fmt.Fprintf(bw, ": %s", vm.Prediction.Why)
			} else if vm.Prediction.State == Agree {
				fmt.Fprintf(bw, " (%s)", strings.Join(vm.Prediction.Predicted, ", "))
			}
			fmt.Fprintln(bw)
		}
		if vm.Fix != "" {
			fmt.Fprintf(bw, "         fix: %s\n", vm.Fix)
		}
	}
	fmt.Fprintf(bw, "freeze drill: %d VM(s), %s against a %s deadline\n", len(r.VMs), r.Status, ms(r.DeadlineMS))
	return bw.Flush()
}

func thawSep(h Hook) string {
	if s := hookScripts(h, "thaw"); s != "" {
		return "; thaw: " + s
	}
	return ""
}

func writeJUnit(w io.Writer, r Result) error {
	s := junitxml.Suite{Name: "freeze-drill", Package: "guestcheck.freeze-drill", Timestamp: junitxml.Timestamp(r.StartedAt),
		Hostname: junitxml.Hostname(r.Host), Time: junitxml.Seconds(r.DurationMS),
		Props: []junitxml.Property{{Name: "deadline", Value: ms(r.DeadlineMS)}}}
	for _, e := range r.SourceErrors {
		s.Add(junitxml.Case{Name: e.Source, Classname: "freeze-drill.source", Time: "0",
			Error: &junitxml.Problem{Type: string(Unknown), Message: e.Error, Body: junitxml.Body(e.Error)}})
	}
	for _, vm := range r.VMs {
		c := junitxml.Case{Name: vm.Name, Classname: "freeze-drill." + vm.Source, Time: junitxml.Seconds(vm.DurationMS)}
		body := junitxml.Body(vm.Reason + "\nfix: " + vm.Fix + "\n")
		switch vm.Status {
		case Fail, Warn:
			c.Failure = &junitxml.Problem{Type: string(vm.Status), Message: vm.Reason, Body: body}
		case Unknown:
			c.Error = &junitxml.Problem{Type: string(Unknown), Message: vm.Reason, Body: body}
		}
		s.Add(c)
	}
	return junitxml.Write(w, junitxml.Suites{Suites: []junitxml.Suite{s}})
}

// WritePrometheus writes the drill's series: each VM's last drill, its
// status and durations. They are node_exporter's textfile (--format
// prometheus) and what guestcheck fleet --listen serves from the drill's
// JSON result (ResultsFile): one writer for both. Names are cleaned as
// fleet cleans them (report.PromEscape), whoever wrote the result.
func WritePrometheus(w io.Writer, r Result) error {
	bw := bufio.NewWriter(w)
	family := func(name, help, typ string) {
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	label := func(vm VM) string {
		return `vm="` + report.PromEscape(vm.Name) + `",source="` + report.PromEscape(vm.Source) + `"`
	}
	family("guestcheck_freeze_drill_status", "The VM's last freeze drill: 1 for its status.", "gauge")
	for _, vm := range r.VMs {
		for _, st := range Statuses {
			fmt.Fprintf(bw, "guestcheck_freeze_drill_status{%s,status=%q} %s\n", label(vm), st, bit(vm.Status == st))
		}
	}
	for _, m := range []struct {
		name, help string
		get        func(VM) string
	}{
		{"guestcheck_freeze_drill_freeze_seconds", "guest-fsfreeze-freeze's time, hooks included.", func(vm VM) string { return secs(vm.FreezeMS) }},
		{"guestcheck_freeze_drill_frozen_seconds", "How long the guest stayed frozen.", func(vm VM) string { return secs(vm.FrozenMS) }},
		{"guestcheck_freeze_drill_thaw_seconds", "guest-fsfreeze-thaw's time, hooks included.", func(vm VM) string { return secs(vm.ThawMS) }},
		{"guestcheck_freeze_drill_filesystems_frozen", "Filesystems the freeze froze.", func(vm VM) string { return strconv.Itoa(vm.FrozenCount) }},
	} {
		family(m.name, m.help, "gauge")
		for _, vm := range r.VMs {
			if vm.Status == Unknown && !vm.Froze {
				continue // no freeze was tried: no figure, rather than a 0
			}
			fmt.Fprintf(bw, "%s{%s} %s\n", m.name, label(vm), m.get(vm))
		}
	}
	// A name no VM has (renamed, stopped, moved) has no series of its
	// own: without this count its drill would vanish without a word.
	family("guestcheck_freeze_drill_source_errors", "Names the drill was given that no running VM has, and sources that could not list their VMs: not drilled.", "gauge")
	fmt.Fprintf(bw, "guestcheck_freeze_drill_source_errors %d\n", len(r.SourceErrors))
	family("guestcheck_freeze_drill_deadline_seconds", "The platform deadline the drill judged against.", "gauge")
	fmt.Fprintf(bw, "guestcheck_freeze_drill_deadline_seconds %s\n", secs(r.DeadlineMS))
	family("guestcheck_freeze_drill_timestamp_seconds", "When the drill started.", "gauge")
	fmt.Fprintf(bw, "guestcheck_freeze_drill_timestamp_seconds %d\n", r.StartedAt.Unix())
	return bw.Flush()
}

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func secs(n int64) string { return strconv.FormatFloat(float64(n)/1000, 'f', -1, 64) }
