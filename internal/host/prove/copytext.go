package prove

import (
	"bufio"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/shared/junitxml"
)

// writeCopies is --copy's table: each copy, what its platform kept, how
// it came up, its network on its own MAC and what it shares with its
// source.
func writeCopies(bw *bufio.Writer, r Report) {
	if len(r.Copies) == 0 {
		return
	}
	bw.WriteString("\n")
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "COPY OF %s\tPLATFORM\tKEPT\tBOOT\tVERDICT\tNETWORK\tSHARES\n", r.Copies[0].Of)
	for _, c := range r.Copies {
		kept := strings.Join(c.Kept, ", ")
		if kept == "" {
			kept = "nothing"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Copy.Name, c.Platform, kept, c.Copy.Boot, verdictText(c.Copy), c.Network.text(), sharedText(c))
	}
	tw.Flush()
	for _, c := range r.Copies {
		for _, n := range c.Copy.Notes {
			fmt.Fprintf(bw, "note: %s: %s\n", c.Copy.Name, n)
		}
	}
}

// text is the NETWORK cell.
func (n CopyNetwork) text() string {
	switch {
	case !n.Read:
		return "-"
	case n.Up:
		return "up"
	}
	return "DOWN"
}

// sharedText is the SHARES cell.
func sharedText(c CopyResult) string {
	if c.Copy.Identity == nil {
		return "-"
	}
	if len(c.Shared) == 0 {
		return "nothing"
	}
	var l []string
	for _, s := range c.Shared {
		l = append(l, string(s.Item))
	}
	return strings.Join(l, ", ")
}

// copyCases are a copy's JUnit cases, each named "copy-N (PLATFORM):
// ...": it came up and was judged, each guestcheck check on it, each
// item not shared with its source, and its network on its own MAC.
func copyCases(c CopyResult, fails []Failure) []junitxml.Case {
	who := c.Copy.Name + " (" + string(c.Platform) + ")"
	cp := c.Copy
	cp.Name = who
	boot := bootCase(cp)
	boot.Classname = "sealprep.prove.copies." + c.Copy.Name
	out := []junitxml.Case{boot}
	for _, tc := range checkCases(cp) {
		tc.Classname = boot.Classname
		out = append(out, tc)
	}
	up := c.Copy.Boot == BootUp && c.Copy.Identity != nil
	for _, it := range CopyItems {
		tc := junitxml.Case{Name: who + ": " + string(it) + " not shared with " + c.Of, Classname: boot.Classname, Time: "0"}
		for _, f := range fails {
			if f.Clone == c.Copy.Name && f.Step == StepCopy && f.Item == it {
				tc.Failure = &junitxml.Problem{Type: "fail", Message: f.Message, Body: junitxml.Body(f.Message + "\nfix: " + f.Fix + "\n")}
			}
		}
		if tc.Failure == nil && !up {
			tc.Skipped = &junitxml.Skipped{Message: "not compared: the copy did not come up with an identity"}
		}
		out = append(out, tc)
	}
	tc := junitxml.Case{Name: who + ": network up on its MAC", Classname: boot.Classname, Time: "0"}
	switch {
	case !c.Network.Read:
		tc.Skipped = &junitxml.Skipped{Message: "not read: the copy did not come up with an identity"}
	case !c.Network.Up:
		for _, f := range fails {
			if f.Clone == c.Copy.Name && f.Step == StepCopy && f.Item == "" && strings.Contains(f.Message, networkDown) {
				tc.Failure = &junitxml.Problem{Type: "fail", Message: f.Message, Body: junitxml.Body(f.Message + "\nfix: " + f.Fix + "\n")}
			}
		}
	}
	return append(out, tc)
}

// CopyItems are what --copy compares between a copy and its source.
var CopyItems = []guestid.Item{guestid.ItemMachineID, guestid.ItemHostKey, guestid.ItemHostname,
	guestid.ItemDHCPClient, guestid.ItemInstanceID, guestid.ItemAddress}

// copiesAsClones are the copies' own boots, for what lists every boot.
func copiesAsClones(cs []CopyResult) []CloneResult {
	var out []CloneResult
	for _, c := range cs {
		out = append(out, c.Copy)
	}
	return out
}

// copyPlatform is the platform of the copy named name.
func copyPlatform(r Report, name string) string {
	for _, c := range r.Copies {
		if c.Copy.Name == name {
			return string(c.Platform)
		}
	}
	return "?"
}
