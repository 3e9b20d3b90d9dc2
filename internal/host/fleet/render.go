package fleet

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
)

// The output formats of guestcheck fleet.
const (
	FormatText       = "text"
	FormatJSON       = "json"
	FormatJUnit      = "junit"
	FormatPrometheus = "prometheus"
)

// Formats lists them, for --format and its completion.
var Formats = []string{FormatText, FormatJSON, FormatJUnit, FormatPrometheus}

// Render writes r in format.
func Render(w io.Writer, r Result, format string) error {
	switch format {
	case FormatText:
		return WriteText(w, r)
	case FormatJSON:
		return WriteJSON(w, r)
	case FormatJUnit:
		return WriteJUnit(w, r)
	case FormatPrometheus:
		return WritePrometheus(w, r)
	}
	return fmt.Errorf("unknown format %q", format)
}

// WriteJSON writes r as one JSON document (schema/fleet-v1.schema.json):
// indented, but each VM on one line, written as it is encoded, so that
// a survey of many VMs never sits in memory twice (a merge's reports are
// read from their files one at a time).
func WriteJSON(w io.Writer, r Result) error {
	r = cleanResult(r)
	vms := r.VMs
	r.VMs = nil
	if r.Collisions == nil {
		r.Collisions = []guestid.Collision{}
	}
	head, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	// The head ends in `"vms": null` and "}": the VMs go in their place.
	head = bytes.TrimSuffix(head, []byte("null\n}"))
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head)
	bw.WriteString("[")
	var line, compact bytes.Buffer
	var buf []byte
	enc := json.NewEncoder(&line)
	enc.SetEscapeHTML(false)
	for i, vm := range vms {
		line.Reset()
		rep, err := vm.reportJSON(buf)
		if rep != nil {
			buf = rep
		}
		if err != nil {
			return err
		}
		if rep != nil && (!utf8.Valid(rep) || !cleanJSON(rep)) {
			// Decoded, cleaned and encoded again, as every other
			// string of the output is.
			if vm, err = vm.full(); err != nil {
				return err
			}
			vm, rep = cleanVM(vm), nil
		} else if rep != nil {
			vm.Report = nil
		}
		if err := enc.Encode(vm); err != nil {
			return err
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		out := bytes.TrimSuffix(line.Bytes(), []byte("\n"))
		if rep == nil {
			bw.Write(out)
			continue
		}
		// The report as the survey holds it, checked when it was
		// merged, last: on one line, as every VM is.
		if bytes.ContainsAny(rep, "\n\r") {
			compact.Reset()
			if err := json.Compact(&compact, rep); err != nil {
				return err
			}
			rep = compact.Bytes()
		}
		bw.Write(bytes.TrimSuffix(out, []byte("}")))
		bw.WriteString(`,"report":`)
		bw.Write(rep)
		bw.WriteByte('}')
	}
	if len(vms) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	return bw.Flush()
}

// WriteText writes the table, worst VM first, then the collisions with
// their fix, then one summary line.
func WriteText(w io.Writer, r Result) error {
	r = cleanResult(r)
	bw := bufio.NewWriter(w)
	rows := [][]string{{"VM", "SOURCE", "STATUS", "CHECKS", "REASON"}}
	for _, vm := range r.VMs {
		rows = append(rows, []string{OneLine(vm.Name, 60), vm.Source, string(vm.Status), checkCounts(vm), vm.Reason})
	}
	if slices.ContainsFunc(r.VMs, func(vm VM) bool { return vm.Host != "" }) {
		// A cluster's VMs run on several machines: which one is part
		// of the finding.
		rows[0] = slices.Insert(rows[0], 1, "HOST")
		for i, vm := range r.VMs {
			rows[i+1] = slices.Insert(rows[i+1], 1, orDash(OneLine(vm.Host, 60)))
		}
	}
	if len(r.VMs) > 0 {
		writeTable(bw, rows)
	}
	for _, e := range r.SourceErrors {
		fmt.Fprintf(bw, "source %s: %s\n", e.Source, e.Error)
	}
	if len(r.Collisions) > 0 {
		// Values, as the summary line counts them: one entry may hold
		// several (3 ssh-host-keys ...), so entries would not add up.
		fmt.Fprintf(bw, "\nShared identity (%s):\n", plural(len(r.Collisions), "value"))
		for _, g := range guestid.Group(r.Collisions) {
			name := string(g.Item)
			if len(g.Values) > 1 {
				name = fmt.Sprintf("%d %ss", len(g.Values), g.Item)
			}
			for i, v := range g.Values {
				g.Values[i] = OneLine(v, 120)
			}
			fmt.Fprintf(bw, "  %s %s: %s\n    fix: %s\n", name, strings.Join(g.Values, ", "), strings.Join(g.Members, ", "), g.Fix)
		}
	}
	fmt.Fprintln(bw, SummaryLine(r))
	return bw.Flush()
}

// SummaryLine is the survey in one line.
func SummaryLine(r Result) string {
	s := r.Summary
	var parts []string
	for _, p := range []struct {
		n  int
		st Status
	}{{s.Fail, Fail}, {s.Unknown, Unknown}, {s.Error, Error}, {s.Warn, Warn}, {s.Skip, Skip}, {s.Pass, Pass}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.st))
		}
	}
	line := fmt.Sprintf("guestcheck fleet: %s: %s", strings.ToUpper(string(r.Status)), plural(s.VMs, "VM"))
	if len(r.Hosts) > 0 {
		line += " on " + plural(len(r.Hosts), "host")
	}
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	if s.Collisions > 0 {
		line += ", " + plural(s.Collisions, "shared identity item")
	}
	if n := len(r.SourceErrors); n > 0 {
		line += ", " + plural(n, "source") + " unreadable"
	}
	return line + fmt.Sprintf(" in %s", millisText(r.DurationMS))
}

func millisText(ms int64) string {
	if ms < 1000 {
		return strconv.FormatInt(ms, 10) + " ms"
	}
	return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + " s"
}

// checkCounts is a VM's checks per status, worst first: "1 fail, 9 pass".
func checkCounts(vm VM) string {
	if vm.Report == nil {
		return "-"
	}
	s := vm.Report.Summary
	var parts []string
	for _, p := range []struct {
		n  int
		st string
	}{{s.Fail, "fail"}, {s.Error, "error"}, {s.Warn, "warn"}, {s.Pass, "pass"}, {s.Skip, "skip"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.st))
		}
	}
	if len(parts) == 0 {
		return "no checks"
	}
	return strings.Join(parts, ", ")
}

func items(its []guestid.Item) string {
	s := make([]string, len(its))
	for i, it := range its {
		s[i] = string(it)
	}
	return strings.Join(s, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

// writeTable pads every column but the last to its widest cell.
func writeTable(w *bufio.Writer, rows [][]string) {
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c + strings.Repeat(" ", width[i]-len([]rune(c))+2))
		}
		w.WriteString(strings.TrimRight(b.String(), " ") + "\n")
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
