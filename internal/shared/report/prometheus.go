package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/shared/clean"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// WritePrometheus renders r in the Prometheus text exposition format for
// node_exporter's textfile collector. Everything is a gauge: the file holds
// the last run's state, not a count that grows. No sample carries a
// timestamp, because the textfile collector rejects files whose samples
// have one; the run's time is a value instead
// (guestcheck_last_run_timestamp_seconds). Each family is written whole,
// HELP and TYPE first, checks in report order and statuses best first, so
// the output is stable for a given report.
func WritePrometheus(w io.Writer, r Report) error {
	bw := bufio.NewWriter(w)
	family := func(name, help string) {
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
	}
	sample := func(name string, value string, labels ...string) {
		bw.WriteString(name)
		if len(labels) > 0 {
			bw.WriteByte('{')
			for i := 0; i+1 < len(labels); i += 2 {
				if i > 0 {
					bw.WriteByte(',')
				}
				fmt.Fprintf(bw, "%s=\"%s\"", labels[i], PromEscape(labels[i+1]))
			}
			bw.WriteByte('}')
		}
		fmt.Fprintf(bw, " %s\n", value)
	}
	bit := map[bool]string{false: "0", true: "1"}

	family("guestcheck_status", "Whether the last run's overall status (the worst check status) is the one in the status label: 1 for that status, 0 for the others.")
	overall := valid(r.Status)
	for _, st := range runner.Statuses {
		sample("guestcheck_status", bit[st == overall], "status", string(st))
	}
	family("guestcheck_check_status", "Whether the check ended the last run with the status in the status label: 1 for its status, 0 for the others.")
	for _, c := range r.Checks {
		cs := valid(c.Status)
		for _, st := range runner.Statuses {
			sample("guestcheck_check_status", bit[st == cs], "check", c.ID, "status", string(st))
		}
	}
	family("guestcheck_findings", "Number of findings the check reported in the last run, per finding status.")
	for _, c := range r.Checks {
		n := map[runner.Status]int{}
		for _, f := range c.Findings {
			n[valid(f.Status)]++
		}
		for _, st := range runner.Statuses {
			sample("guestcheck_findings", strconv.Itoa(n[st]), "check", c.ID, "status", string(st))
		}
	}
	family("guestcheck_findings_waived", "Number of the check's findings a configuration waiver accepted in the last run (they are also counted in guestcheck_findings under their own status).")
	for _, c := range r.Checks {
		sample("guestcheck_findings_waived", strconv.Itoa(waivedIn(c)), "check", c.ID)
	}
	family("guestcheck_check_duration_seconds", "How long the check took in the last run.")
	for _, c := range r.Checks {
		sample("guestcheck_check_duration_seconds", millis(c.DurationMS), "check", c.ID)
	}
	family("guestcheck_run_duration_seconds", "How long the last run took, all checks included.")
	sample("guestcheck_run_duration_seconds", millis(r.DurationMS))
	family("guestcheck_last_run_timestamp_seconds", "Unix time at which the last run started.")
	sample("guestcheck_last_run_timestamp_seconds", millis(r.StartedAt.UnixMilli()))
	family("guestcheck_build_info", "The version of the guestcheck that wrote this file; the value is always 1.")
	sample("guestcheck_build_info", "1", "version", r.Version)
	if ids := identityOf(r); len(ids) > 0 {
		family(IdentityMetric, "One of the guest's identity items (guestid.Export: hashed where the raw value would identify it, bounded in number), for comparing guests across hosts; the value is always 1.")
		for _, l := range ids {
			sample(IdentityMetric, "1", l...)
		}
	}
	return bw.Flush()
}

// IdentityMetric is the in-guest identity series' name; guestcheck fleet
// writes the same labels, and its domain, as guestcheck_fleet_vm_identity_info.
const IdentityMetric = "guestcheck_identity_info"

// IdentityLabels is the label pairs of each identity series of one guest:
// boot (guestid.BootHash of its boot ID), item, value, and network for an
// address (networks by MAC, from a host that knows them). Both the
// in-guest report and guestcheck fleet write them, so the two compare in
// one PromQL expression. Without a boot ID (an image root has no boot)
// there are none: boot is what tells two guests' series apart, and two
// views of one guest's alike.
func IdentityLabels(id *guestid.Identity, bootID string, networks map[string]string) [][]string {
	boot, ok := guestid.BootHash(bootID)
	if !ok {
		return nil
	}
	var out [][]string
	for _, e := range guestid.Export(guestid.Member{ID: *id, Networks: networks}) {
		l := []string{"boot", boot, "item", string(e.Item), "value", e.Value}
		if e.Network != "" {
			l = append(l, "network", e.Network)
		}
		out = append(out, l)
	}
	return out
}

func identityOf(r Report) [][]string {
	if r.Identity == nil {
		return nil
	}
	return IdentityLabels(r.Identity, r.Host.BootID, nil)
}

// millis formats a count of milliseconds as seconds, without exponent or
// trailing zeros: 42 -> "0.042", 1764417600000 -> "1764417600".
func millis(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64)
}

// PromEscape escapes a label value as the exposition format requires
// (backslash, double quote, newline) and replaces invalid UTF-8, which
// Prometheus's parser rejects. The other control characters and bidi
// characters are clean.Text's, so that a .prom file shown with cat or
// less cannot drive the terminal. guestcheck fleet's /metrics uses it
// too.
func PromEscape(s string) string {
	if !clean.IsClean(s) {
		s = strings.Map(func(r rune) rune {
			if r == '\n' {
				return r // escaped below
			}
			return clean.Rune(r)
		}, strings.ToValidUTF8(s, "\uFFFD"))
	}
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	// By hand: a strings.Replacer is costly to build for each value and,
	// built once, would be startup work for every run.
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
