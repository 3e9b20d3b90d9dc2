package prove

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/shared/clean"
)

// itemHeads are the text table's short column heads, in guestid.GuestItems
// order.
var itemHeads = map[guestid.Item]string{
	guestid.ItemMachineID: "MACHINE-ID", guestid.ItemHostKey: "HOST-KEYS", guestid.ItemDHCPClient: "DHCP-ID",
	guestid.ItemMACBinding: "MAC-PIN", guestid.ItemHostname: "HOSTNAME", guestid.ItemInstanceID: "INSTANCE-ID",
	guestid.ItemMAC: "MAC", guestid.ItemAddress: "ADDRESS",
}

// WriteText renders the report for a person: the setup, a table of
// clones (boot, verdict, each identity item distinct or shared), the
// template, the failures with their fixes, the phases and a verdict line.
func WriteText(w io.Writer, r Report) error {
	r = clean.Value(r) // guests' text, as every output shows it
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "sealprep prove %s (%s): %d %s, %s (%s), %s (%s)\n", r.Image.File, r.Image.Format,
		len(r.Clones), plural(len(r.Clones), "clone", "clones"), r.Accel, r.AccelReason, r.Firmware, r.FirmwareReason)
	for _, b := range r.Image.Backing {
		fmt.Fprintf(bw, "  backing file (only read): %s (%s)\n", b.File, b.Format)
	}
	bw.WriteString("\n")
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	head := []string{"CLONE", "BOOT", "VERDICT"}
	for _, it := range guestid.GuestItems {
		head = append(head, itemHeads[it])
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, c := range r.Clones {
		row := []string{c.Name, c.Boot, verdictText(c)}
		for _, it := range guestid.GuestItems {
			row = append(row, cellText(c, it, r.Collisions))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	writeReboots(bw, r)
	writeCopies(bw, r)
	bw.WriteString("\n" + templateText(r.Template) + "\n")
	writeUUIDs(bw, r)
	for _, c := range r.Clones {
		for _, n := range c.Notes {
			fmt.Fprintf(bw, "note: %s: %s\n", c.Name, n)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(bw, "note: %s\n", n)
	}
	for _, it := range r.Items {
		if it.Status == ItemNotCompared {
			fmt.Fprintf(bw, "not compared: %s (%s)\n", it.Item, it.Detail)
		}
	}
	writeFailures(bw, r)
	writeBaseline(bw, r)
	bw.WriteString("\n")
	tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "PHASES\tSEED\tBOOT\tCLOUD-INIT\tGUESTCHECK\tCOLLECTION\t")
	for _, c := range r.Clones {
		t := c.Timings
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Name, secs(t.Seed), secs(t.Boot), secs(t.CloudInit), secs(t.Guestcheck), secs(t.Collection))
		if c.Reboot != nil {
			t := c.Reboot.Timings
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Name+" reboot", "-", secs(t.Boot), secs(t.CloudInit), secs(t.Guestcheck), secs(t.Collection))
		}
	}
	for _, c := range copiesAsClones(r.Copies) {
		t := c.Timings
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Name, secs(t.Seed), secs(t.Boot), secs(t.CloudInit), secs(t.Guestcheck), secs(t.Collection))
	}
	tw.Flush()
	writeBootTimes(bw, r)
	if r.Kept != "" {
		fmt.Fprintf(bw, "kept: %s\n", r.Kept)
	}
	fmt.Fprintf(bw, "\n%s\n", verdictLine(r))
	return bw.Flush()
}

// writeReboots is the second boot of each clone under --reboot: how it
// came back, guestcheck's verdict, and what changed across the reboot.
func writeReboots(bw *bufio.Writer, r Report) {
	if !slices.ContainsFunc(r.Clones, func(c CloneResult) bool { return c.Reboot != nil }) {
		return
	}
	bw.WriteString("\n")
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AFTER REBOOT\tBOOT\tVERDICT\tCHANGED")
	for _, c := range r.Clones {
		rb := c.Reboot
		if rb == nil {
			continue
		}
		changed := "nothing"
		switch {
		case rb.Boot != BootUp:
			changed = "-"
		case len(rb.Changed) > 0:
			var l []string
			for _, ch := range rb.Changed {
				l = append(l, ch.Item)
			}
			changed = strings.Join(l, ", ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Name, rb.Boot, verdictText(rb.asClone(c)), changed)
	}
	tw.Flush()
	for _, c := range r.Clones {
		if c.Reboot != nil {
			for _, n := range c.Reboot.Notes {
				fmt.Fprintf(bw, "note: %s after the reboot: %s\n", c.Name, n)
			}
		}
	}
}

// writeBootTimes is each boot's time to its verdict and guestcheck's
// own boot-time finding, with the budget when --boot-budget set one.
func writeBootTimes(bw *bufio.Writer, r Report) {
	line := func(name string, bt *BootTime) {
		if bt == nil {
			return
		}
		fmt.Fprintf(bw, "boot time: %s: %s to the verdict", name, secs(bt.ToVerdictMS))
		if bt.Message != "" {
			fmt.Fprintf(bw, "; guestcheck %s: %s", bt.Code, bt.Message)
		}
		if bt.Slowest != "" {
			fmt.Fprintf(bw, " (slowest: %s)", bt.Slowest)
		}
		bw.WriteString("\n")
	}
	for _, c := range r.Clones {
		line(c.Name, c.BootTime)
		if c.Reboot != nil {
			line(c.Name+" reboot", c.Reboot.BootTime)
		}
	}
	for _, c := range copiesAsClones(r.Copies) {
		line(c.Name, c.BootTime)
	}
	if r.BootBudgetMS > 0 {
		fmt.Fprintf(bw, "boot budget: %s from QEMU's start (or the reboot) to the verdict (--boot-budget)\n", secs(r.BootBudgetMS))
	}
}

// writeUUIDs names each clone's firmware UUID, or the one they share.
func writeUUIDs(bw *bufio.Writer, r Report) {
	var parts []string
	for _, c := range r.Clones {
		if c.FirmwareUUID != "" {
			parts = append(parts, c.Name+" "+c.FirmwareUUID)
		}
	}
	if len(parts) == 0 {
		return
	}
	if r.FirmwareUUID == UUIDShared {
		fmt.Fprintf(bw, "firmware UUID: one for every clone (--firmware-uuid shared): %s\n", r.Clones[0].FirmwareUUID)
		return
	}
	fmt.Fprintf(bw, "firmware UUID: %s\n", strings.Join(parts, ", "))
}

func writeFailures(bw *bufio.Writer, r Report) {
	if len(r.Failures) == 0 {
		return
	}
	bw.WriteString("\nfailures:\n")
	for _, f := range r.Failures {
		who := f.Clone
		switch {
		case f.Step == StepCopy:
			who = f.Clone + " (" + copyPlatform(r, f.Clone) + " copy)"
		case f.Step != "":
			who = f.Clone + " (" + f.Step + ")"
		case f.Item != "":
			who = string(f.Item)
		}
		fmt.Fprintf(bw, "  FAIL %s: %s\n", who, f.Message)
		if f.Fix != "" {
			fmt.Fprintf(bw, "       fix: %s\n", f.Fix)
		}
		if f.Clone == "" {
			continue
		}
		for _, c := range append(slices.Clone(r.Clones), copiesAsClones(r.Copies)...) {
			if c.Name == f.Clone && len(c.ConsoleTail) > 0 {
				fmt.Fprintf(bw, "       console tail:\n")
				for _, l := range c.ConsoleTail {
					fmt.Fprintf(bw, "         | %s\n", l)
				}
			}
		}
	}
}

// writeBaseline lists guestcheck's baseline findings on each clone,
// apart from the failures: they are the site's security baseline, not
// the template's identity or health, and do not fail the proof.
func writeBaseline(bw *bufio.Writer, r Report) {
	if baselineClones(r) == 0 {
		return
	}
	bw.WriteString("\nbaseline (guestcheck's security baseline, not part of the proof):\n")
	for _, c := range r.Clones {
		for _, b := range c.Baseline {
			fmt.Fprintf(bw, "  %s: %s\n", c.Name, b)
		}
	}
}

// baselineClones counts the clones with baseline findings.
func baselineClones(r Report) int {
	n := 0
	for _, c := range r.Clones {
		if len(c.Baseline) > 0 {
			n++
		}
	}
	return n
}

func verdictText(c CloneResult) string {
	switch {
	case baselineOnlyFail(c):
		return c.Verdict.Status + " (baseline only)"
	case c.Verdict != nil && c.VerdictSource == SourceConsole:
		return c.Verdict.Status + " (console)"
	case c.Verdict != nil:
		return c.Verdict.Status
	case c.IdentityOnly:
		return "identity only"
	}
	return "-"
}

// cellText is one clone's state for one item: TEMPLATE when it keeps
// the template's, SHARED when it shares it with another clone, distinct
// when it has its own, - when it has none or it was not read.
func cellText(c CloneResult, it guestid.Item, cols []guestid.Collision) string {
	for _, col := range cols {
		if col.Item == it && slices.Contains(col.Members, c.Name) {
			if slices.Contains(col.Members, TemplateName) {
				return "TEMPLATE"
			}
			return "SHARED"
		}
	}
	if c.Identity != nil && hasItem(*c.Identity, it) {
		return "distinct"
	}
	return "-"
}

func templateText(t TemplateIdentity) string {
	switch {
	case !t.Read:
		return "template: not read (" + t.NotRead + ")"
	case t.Record:
		s := fmt.Sprintf("template: sealed by sealprep at %s (%s); compared with the clones", t.SealedAt, strings.Join(t.Operations, ", "))
		for _, k := range t.Kept {
			s += "\ntemplate: " + k.Message
		}
		return s
	}
	return "template: no sealprep template record; its identity was compared with the clones"
}

func verdictLine(r Report) string {
	d := (time.Duration(r.DurationMS) * time.Millisecond).Round(time.Second)
	if r.Proven {
		what := fmt.Sprintf("%d %s", len(r.Clones), plural(len(r.Clones), "clone", "clones"))
		if n := len(r.Copies); n > 0 {
			what += fmt.Sprintf(" and %d %s", n, plural(n, "copy", "copies"))
		}
		line := fmt.Sprintf("PROVEN: %s came up healthy and distinct (%s)", what, d)
		if n := baselineClones(r); n > 0 {
			line += fmt.Sprintf("; baseline findings on %d %s, listed above", n, plural(n, "clone", "clones"))
		}
		return line
	}
	return fmt.Sprintf("NOT PROVEN: %d %s (%s)", len(r.Failures), plural(len(r.Failures), "failure", "failures"), d)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func secs(ms int64) string {
	if ms <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fs", float64(ms)/1000)
}
