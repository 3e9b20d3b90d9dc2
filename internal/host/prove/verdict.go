package prove

import (
	"fmt"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
)

// TemplateName is the member name of the template in collisions.
const TemplateName = "template"

// Item statuses (ItemResult.Status).
const (
	ItemDistinct    = "distinct"
	ItemShared      = "shared"
	ItemNotCompared = "not-compared"
)

// TemplateIdentity is the template's identity as read offline from the
// image, when it could be.
type TemplateIdentity struct {
	// Read is false when the image could not be read (NotRead says why).
	Read    bool   `json:"read" schema:"req"`
	NotRead string `json:"not_read,omitempty" doc:"why the template could not be read"`
	// Identity holds what a clone must not keep from the template.
	Identity *guestid.Identity `json:"identity,omitempty" doc:"what a clone must not keep; MACs and addresses are the clones' own and not compared with it"`
	// Sealed says whether sealprep's template record is in the image,
	// with its operations.
	Record     bool     `json:"template_record" schema:"req"`
	SealedAt   string   `json:"sealed_at,omitempty" schema:"pattern=datetime"`
	Operations []string `json:"operations,omitempty" schema:"nonempty" doc:"the operations the record says sealprep ran"`
	// Kept is what the record says the seal keeps by choice (operations
	// --ops dropped, refusals --force passed), worded as sealprep verify
	// and guestcheck word it.
	Kept []sealrecord.Item `json:"kept,omitempty" doc:"what the record says the seal keeps by choice: each operation left out of --ops and each refusal --force passed, worded as sealprep verify and guestcheck word it"`
	// record is the template record, for the template's machine ID
	// before the seal, hashed (Record.MachineIDIs).
	record sealrecord.Record
}

// ItemResult is one identity item across the clones.
type ItemResult struct {
	Item   guestid.Item `json:"item" schema:"req"`
	Status string       `json:"status" schema:"req,enum=distinct|shared|not-compared" doc:"not-compared: fewer than two members hold it, or it was not read on some"`
	// Detail says what was compared or why not.
	Detail string `json:"detail,omitempty"`
}

// Failure is one reason the template is not proven.
type Failure struct {
	Clone string       `json:"clone,omitempty"`
	Item  guestid.Item `json:"item,omitempty"`
	// Step is the lifecycle step the failure belongs to ("reboot",
	// "copy"), ""
	// for the first boot and the comparison across clones.
	Step    string `json:"step,omitempty" schema:"enum=reboot|copy"`
	Message string `json:"message" schema:"req,nonempty"`
	Fix     string `json:"fix,omitempty"`
}

// cloneFailed says why a clone fails, "" when it passes: it did not come
// up (bootFailed), or guestcheck failed it on anything but its baseline
// findings (BaselineCodes), which the report lists apart.
func cloneFailed(c CloneResult) string {
	if why := bootFailed(c); why != "" {
		return why
	}
	if baselineOnlyFail(c) {
		return ""
	}
	if c.Verdict != nil && (c.Verdict.Status == "FAIL" || c.Verdict.Status == "ERROR") {
		msg := fmt.Sprintf("guestcheck says %s (%d fail, %d error)", c.Verdict.Status, c.Verdict.Counts.Fail, c.Verdict.Counts.Error)
		if len(c.Failing) > 0 {
			msg += ": " + strings.Join(c.Failing, "; ")
		}
		return msg
	}
	return ""
}

// baselineOnlyFail reports whether guestcheck's report (through the
// agent: the console's summary line has counts only) failed the clone on
// baseline findings alone.
func baselineOnlyFail(c CloneResult) bool {
	return c.Verdict != nil && (c.Verdict.Status == "FAIL" || c.Verdict.Status == "ERROR") &&
		c.VerdictSource == SourceAgent && len(c.Failing) == 0 && len(c.Baseline) > 0
}

// bootFailed says why a clone did not come up to be judged, "" when it
// did: it did not boot, something broke on the way, or no verdict came.
func bootFailed(c CloneResult) string {
	switch {
	case c.Boot == BootTimeout:
		return "did not finish before the deadline: " + c.Problem
	case c.Boot != BootUp:
		return "did not boot: " + c.Problem
	case c.Problem != "":
		return c.Problem
	case c.Verdict == nil && !c.IdentityOnly:
		return "no boot verdict"
	}
	return ""
}

// cloneFix is what to look at when a clone fails.
func cloneFix(c CloneResult) string {
	switch {
	case c.Boot != BootUp:
		return "boot the template by hand and read its console (sealprep prove --keep DIR keeps the console log); a broken fstab, a missing driver or a bootloader that names the wrong disk stop a clone like this"
	case c.Verdict != nil:
		return "read guestcheck's report on a clone (guestcheck --format text, or /run/guestcheck/report.txt; --keep DIR keeps the clones' disks and reports) and fix the template"
	}
	return "install qemu-guest-agent and guestcheck in the template so that prove can judge its clones"
}

// Compare judges identity across the clones and against the template:
// every item is distinct, shared (a failure naming the members and the
// fix) or not compared (fewer than two members had it, or it was not
// read).
func Compare(clones []CloneResult, tmpl TemplateIdentity) ([]ItemResult, []guestid.Collision) {
	var members []guestid.Member
	var noIdentity []string
	for _, c := range clones {
		if c.Identity != nil {
			members = append(members, guestid.Member{Name: c.Name, ID: *c.Identity})
		} else {
			noIdentity = append(noIdentity, c.Name)
		}
	}
	if tmpl.Identity != nil {
		// The template is compared for what a clone must never keep:
		// MACs and addresses belong to the running clones alone.
		t := *tmpl.Identity
		t.Interfaces = nil
		members = append(members, guestid.Member{Name: TemplateName, ID: t})
	}
	cols := append(guestid.Collisions(members), recordCollisions(clones, tmpl)...)
	var items []ItemResult
	for _, it := range guestid.GuestItems {
		items = append(items, itemResult(it, members, noIdentity, cols))
	}
	return items, cols
}

// itemResult judges one item; noIdentity names the clones whose identity
// was not read at all (no agent answered, or they did not boot).
func itemResult(it guestid.Item, members []guestid.Member, noIdentity []string, cols []guestid.Collision) ItemResult {
	var shared []string
	for _, c := range cols {
		if c.Item == it {
			shared = append(shared, strings.Join(c.Members, ", "))
		}
	}
	if len(shared) > 0 {
		return ItemResult{Item: it, Status: ItemShared, Detail: "shared by " + strings.Join(shared, "; ")}
	}
	var have, unread []string
	why := ""
	for _, m := range members {
		if hasItem(m.ID, it) {
			have = append(have, m.Name)
		}
		for _, u := range m.ID.Unread {
			if rest, ok := strings.CutPrefix(u, string(it)+":"); ok || strings.HasPrefix(u, string(it)+" ") {
				unread = append(unread, m.Name)
				if why == "" && ok {
					why = ": " + strings.TrimSpace(rest)
				}
				break
			}
		}
	}
	// Fewer than two holders is "not compared", never "distinct": a
	// JUnit case that no template could fail would prove nothing.
	switch {
	case len(have) >= 2:
		return ItemResult{Item: it, Status: ItemDistinct, Detail: fmt.Sprintf("%d members compared", len(have))}
	case len(unread) > 0:
		return ItemResult{Item: it, Status: ItemNotCompared, Detail: "not read on " + strings.Join(unread, ", ") + why}
	case len(noIdentity) > 0:
		return ItemResult{Item: it, Status: ItemNotCompared, Detail: "not read on " + strings.Join(noIdentity, ", ")}
	case len(have) == 1:
		return ItemResult{Item: it, Status: ItemNotCompared, Detail: "only " + have[0] + " has one"}
	}
	return ItemResult{Item: it, Status: ItemNotCompared, Detail: "no member has one"}
}

func hasItem(id guestid.Identity, it guestid.Item) bool {
	switch it {
	case guestid.ItemMachineID:
		return id.MachineIDHash != ""
	case guestid.ItemHostKey:
		return len(id.HostKeys) > 0
	case guestid.ItemDHCPClient:
		return len(id.DHCPClients) > 0
	case guestid.ItemMACBinding:
		return len(id.MACBindings) > 0
	case guestid.ItemHostname:
		return id.Hostname != ""
	case guestid.ItemInstanceID:
		return guestid.InstanceKey(id) != ""
	case guestid.ItemMAC:
		return slices.ContainsFunc(id.Interfaces, func(i guestid.Interface) bool { return i.MAC != "" })
	case guestid.ItemAddress:
		return slices.ContainsFunc(id.Interfaces, func(i guestid.Interface) bool { return len(i.Addresses) > 0 })
	}
	return false
}

// failures lists every reason the run is not proven: clones that failed,
// then shared items.
func failures(clones []CloneResult, cols []guestid.Collision, tmpl TemplateIdentity) []Failure {
	out := []Failure{} // [] in JSON, never null: the schema wants an array
	for _, c := range clones {
		if why := cloneFailed(c); why != "" {
			out = append(out, Failure{Clone: c.Name, Message: why, Fix: cloneFix(c)})
		}
		out = append(out, rebootFailures(c)...)
	}
	for _, g := range guestid.Group(cols) {
		others := slices.DeleteFunc(slices.Clone(g.Members), func(m string) bool { return m == TemplateName })
		what := "share"
		switch {
		case len(others) < len(g.Members) && len(others) == 1:
			what = "keeps the template's"
		case len(others) < len(g.Members):
			what = "keep the template's"
		}
		name := string(g.Item)
		if len(g.Values) > 1 {
			name = fmt.Sprintf("%d %ss", len(g.Values), g.Item)
		}
		msg := fmt.Sprintf("%s %s %s (%s)", strings.Join(others, " and "), what, name, strings.Join(g.Values, ", "))
		if k, ok := keptItem(tmpl, g.Item); ok {
			msg += ": " + k.Message
		}
		out = append(out, Failure{Item: g.Item, Message: msg, Fix: g.Fix})
	}
	return out
}

// recordCollisions are the clones whose machine-id is the one the
// template had before sealprep sealed it: the ID came back (a leak path:
// /var/lib/dbus/machine-id, systemd.machine_id= on the kernel command
// line, a credential), so every clone of the template has it.
func recordCollisions(clones []CloneResult, tmpl TemplateIdentity) []guestid.Collision {
	if !tmpl.record.HasMachineID() {
		return nil
	}
	var ms []string
	for _, c := range clones {
		if tmpl.record.MachineIDIs(c.sealHash) {
			ms = append(ms, c.Name)
		}
	}
	if len(ms) == 0 {
		return nil
	}
	return []guestid.Collision{{Item: guestid.ItemMachineID, Value: "the ID sealprep's template record says the template had before the seal",
		Members: append(ms, TemplateName), Fix: guestid.Fix(guestid.ItemMachineID)}}
}

// keptOps are the sealprep operations that clear each identity item.
var keptOps = map[guestid.Item]string{
	guestid.ItemMachineID:  "machine-id",
	guestid.ItemHostKey:    "ssh-host-keys",
	guestid.ItemDHCPClient: "dhcp-leases",
	guestid.ItemMACBinding: "net-mac-pins",
	guestid.ItemHostname:   "hostname",
	guestid.ItemInstanceID: "cloud-init",
}

// keptItem is the template record's kept item for it: the operation
// that clears it was dropped, or its refusal forced. Clones still share
// the item, and prove still fails them for it; the failure says it was a
// choice.
func keptItem(tmpl TemplateIdentity, it guestid.Item) (sealrecord.Item, bool) {
	op, ok := keptOps[it]
	if !ok {
		return sealrecord.Item{}, false
	}
	for _, k := range tmpl.Kept {
		if k.Op == op {
			return k, true
		}
	}
	return sealrecord.Item{}, false
}
