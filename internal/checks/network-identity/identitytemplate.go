package networkidentity

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// JudgeTemplateMachineID flags a machine ID that sealprep recorded as the
// template's: the image was sealed without machine-id, or the ID was put
// back. Only hashes are compared; the record never holds the ID.
func JudgeTemplateMachineID(ev identity.CloneEvidence) []runner.Finding {
	if ev.TemplateErr != nil {
		return []runner.Finding{CodeIDTemplateRecordBad.New(runner.Warn,
			"sealprep's template record cannot be read, so a clone that kept the template's identity is not named: "+ev.TemplateErr.Error(),
			map[string]string{"record": sealrecord.Path},
			CodeIDTemplateRecordBad.Fixf("record", sealrecord.Path))}
	}
	t := ev.Template
	if t == nil || ev.MachineIDKind != identity.Valid || !t.MachineIDIs(sealrecord.HashID(ev.MachineID)) {
		return nil
	}
	how := " without its machine-id operation"
	if t.MachineIDCleared {
		how = ", whose machine-id operation cleared it; it was put back since"
	}
	return []runner.Finding{CodeIDMachineIDTemplate.New(runner.Fail,
		"/etc/machine-id is the template's machine ID ("+t.Describe()+how+"): every clone of the image shares it, and with it DHCP DUIDs, IPv6 addresses and journal directories",
		map[string]string{"record": sealrecord.Path, "sealed_at": t.SealedAt.UTC().Format(time.RFC3339),
			"sealprep_version": t.SealprepVersion, "machine_id_hash": sealrecord.HashMachineID(ev.MachineID)},
		CodeIDMachineIDTemplate.FixOn(ev.Live))}
}

// JudgeTemplateInstance judges cloud-init's instance state in a sealed
// template, where none is expected: a clone of a template that kept one
// starts with the template's user-data, semaphores and rendered network
// config. Off a template it says nothing (JudgeClone reads the instance).
func JudgeTemplateInstance(ev identity.CloneEvidence) []runner.Finding {
	if !ev.State.Is {
		return nil
	}
	var left []string
	if ev.InstanceID != "" {
		left = append(left, identity.InstanceIDPath+" ("+ShowInstanceID(ev.InstanceID)+")")
	}
	// sealprep's cloud-init operation removes it too: the template's
	// instance-id as the one before a clone's.
	if ev.PreviousID != "" {
		left = append(left, identity.PreviousInstanceIDPath+" ("+ShowInstanceID(ev.PreviousID)+")")
	}
	if ev.InstanceLink {
		left = append(left, identity.CloudInstancePath)
	}
	for _, n := range ev.Instances {
		left = append(left, identity.CloudInstancesDir+"/"+ShowInstanceID(n))
	}
	d := ev.State.Detail(map[string]string{"dir": "/var/lib/cloud"})
	if len(left) == 0 {
		return []runner.Finding{runner.Passf(CodeIDTemplateNoInstance.ID,
			"no cloud-init instance, as in a sealed template: each clone is a new instance at first boot", d)}
	}
	d["left"] = strings.Join(left, "\n")
	status, summary := runner.Fail, fmt.Sprintf("cloud-init instance state is left in the template (%s): every clone starts with its user-data, semaphores and rendered network config", left[0])
	if k, ok := keptBy(ev.State, "cloud-init", ""); ok {
		status, summary = runner.Warn, k.Message
	}
	return []runner.Finding{CodeIDTemplateInstance.New(status, summary, d, CodeIDTemplateInstance.Fixf())}
}

// JudgeDHCPIdentityIn is JudgeDHCPIdentity in the mode the root was
// judged in. In a sealed template whose machine ID is unset (no D-Bus
// copy to fall back to, no NetworkManager secret_key left), client
// identifiers derived from the machine ID are new in every clone, so the
// warnings a guest gets become one pass; on a guest they stay: a
// restored or cloned guest keeps its ID.
//
// A DUID pinned by DUIDRawData= derives from nothing: every clone
// presents it, so in a template it fails, as a kept lease does, even
// where no client presents it yet.
func JudgeDHCPIdentityIn(c NetworkConfig, ev identity.CloneEvidence) []runner.Finding {
	fs := JudgeDHCPIdentity(c)
	if !ev.State.Is {
		return fs
	}
	var derived []string
	var out []runner.Finding
	if rawDUID(c.NetworkdConf) {
		// A template must not pin one, whether or not a client uses it
		// yet (the catalogue's rule, which sealprep's machine-id
		// operation follows).
		f := rawDUIDFinding(c.NetworkdConf)
		f.Status, f.Detail = runner.Fail, ev.State.Detail(f.Detail)
		out = append(out, f)
	}
	for _, f := range fs {
		switch {
		case f.Code == CodeIDDHCPClientID.ID && f.Detail[detailRawDUID] != "":
			// told above, as the template's failure
		case f.Code == CodeIDDHCPClientID.ID && ev.DBusMachineID == "" && !ev.NMSecretKey:
			derived = append(derived, f.Message)
		default:
			out = append(out, f)
		}
	}
	if len(derived) == 0 {
		return out
	}
	d := ev.State.Detail(map[string]string{"derived": strings.Join(derived, "\n")})
	return append(out, runner.Passf(CodeIDDHCPOK.ID,
		fmt.Sprintf("%d DHCP client identifier(s) derive from the machine ID, unset as in a sealed template: each clone derives its own", len(derived)), d))
}

// JudgeTemplateLeaks fails a sealed template that hands systemd a machine
// ID at boot: the emptied /etc/machine-id is then rewritten with that ID
// on every clone.
func JudgeTemplateLeaks(ev identity.CloneEvidence) []runner.Finding {
	if !ev.State.Is || len(ev.Leaks) == 0 {
		return nil
	}
	d := ev.State.Detail(map[string]string{"leaks": strings.Join(ev.Leaks, "\n")})
	status, summary := runner.Fail, fmt.Sprintf("the template hands systemd a machine ID at boot (%s): every clone gets the same ID", ev.Leaks[0])
	// Kept by choice only when the operation of every leak was dropped:
	// a credential's (machine-id-credential) or a command line's.
	var kept []string
	for _, l := range ev.Leaks {
		op := "machine-id-cmdline"
		if strings.HasSuffix(l, identity.MachineIDCredential+" credential)") {
			op = "machine-id-credential"
		}
		k, ok := keptBy(ev.State, op, "")
		if !ok {
			kept = nil
			break
		}
		if !slices.Contains(kept, k.Message) {
			kept = append(kept, k.Message)
		}
	}
	if len(kept) > 0 {
		status, summary = runner.Warn, strings.Join(kept, "; ")
	}
	return []runner.Finding{CodeIDMachineIDLeak.New(status, summary, d, CodeIDMachineIDLeak.Fixf("leaks", strings.Join(ev.Leaks, "; ")))}
}

// JudgeTemplateDHCPState fails a sealed template that holds DHCP client
// state (identity.ReadDHCPState): dhcpcd's DUID or secret, or a lease.
// Every clone would present the template's DUID or ask for its address,
// and dhcpcd's secret makes every clone's stable IPv6 addresses the
// template's.
func JudgeTemplateDHCPState(ev identity.CloneEvidence) []runner.Finding {
	if !ev.State.Is || len(ev.DHCPState) == 0 {
		return nil
	}
	d := ev.State.Detail(map[string]string{"left": strings.Join(ev.DHCPState, "\n")})
	status, summary := runner.Fail, fmt.Sprintf("the template holds DHCP client state (%s): every clone would present the template's DHCP identity", ev.DHCPState[0])
	if it, ok := keptBy(ev.State, "dhcp-leases", ""); ok {
		status, summary = runner.Warn, it.Message
	}
	return []runner.Finding{CodeIDTemplateDHCPState.New(status, summary, d, CodeIDTemplateDHCPState.Fixf("files", strings.Join(ev.DHCPState, ", ")))}
}

// JudgeTemplateLeftovers judges the catalogue items of a sealed template
// that nothing else reads (identity.TemplateLeftoverItems: saved random
// seeds, systemd's credential.secret, NetworkManager's secret_key and
// history, LVM's devices file, per-host enrolment): one finding per item
// left, a failure unless the template record says the item's operation
// was dropped by choice, then a warning in the record's words.
func JudgeTemplateLeftovers(ev identity.CloneEvidence) []runner.Finding {
	if !ev.State.Is || len(ev.Leftovers) == 0 {
		return nil
	}
	byItem := map[string][]string{}
	var order []string
	for _, f := range ev.Leftovers {
		if _, ok := byItem[f.Item]; !ok {
			order = append(order, f.Item)
		}
		byItem[f.Item] = append(byItem[f.Item], f.Path)
	}
	var out []runner.Finding
	for _, name := range order {
		it := catalogue.Lookup(name)
		paths := byItem[name]
		d := ev.State.Detail(map[string]string{"item": name, "left": strings.Join(paths, "\n"), "source": it.Source})
		status, summary := runner.Fail, fmt.Sprintf("the template holds %s (%s): clones would share %s", it.What, paths[0], it.Shared)
		if k, ok := keptBy(ev.State, it.Op, ""); ok {
			status, summary = runner.Warn, k.Message
		}
		out = append(out, CodeIDTemplateLeftover.New(status, summary, d,
			CodeIDTemplateLeftover.Fixf("op", it.Op, "files", strings.Join(paths, ", "))))
	}
	return out
}

// keptBy is the template record's kept-by-choice item for op: the
// operation --ops dropped, or a refusal of it --force passed at path
// ("" for any). A template that keeps an item by choice is warned about
// in the record's own words, as sealprep verify warns about it, rather
// than failed: the two tools tell one choice alike.
func keptBy(st identity.TemplateState, op, path string) (sealrecord.Item, bool) {
	if st.Record == nil {
		return sealrecord.Item{}, false
	}
	for _, it := range st.Record.KeptItems() {
		if it.Op == op && (!it.Forced || path == "" || it.Path == path) {
			return it, true
		}
	}
	return sealrecord.Item{}, false
}

// JudgeTemplateMACBindings fails each MAC binding in a sealed template:
// the configuration is for the template's NIC, and a clone has another
// MAC, so it comes up without it.
func JudgeTemplateMACBindings(bs []MACBinding, st identity.TemplateState) []runner.Finding {
	var fs []runner.Finding
	for _, b := range bs {
		d := st.Detail(map[string]string{"mac": b.MAC.String(), "binding": b.Kind, "at": b.At})
		what := "configuration"
		if b.Name != "" {
			what = "configuration for " + b.Name
			d["interface"] = b.Name
		}
		status, summary := runner.Fail, fmt.Sprintf("%s: %s in the template is bound to MAC %s (%s): a clone has another MAC and comes up without it", b.At, what, b.MAC, b.Kind)
		if it, ok := keptBy(st, "net-mac-pins", atFile(b.At)); ok {
			status, summary = runner.Warn, it.Message
		}
		fs = append(fs, CodeIDTemplateMACBinding.New(status, summary, d, CodeIDTemplateMACBinding.Fixf("at", b.At)))
	}
	return fs
}

// atFile is the file of a "path:line" location.
func atFile(at string) string {
	if i := strings.LastIndexByte(at, ':'); i > 0 && strings.Trim(at[i+1:], "0123456789") == "" {
		return at[:i]
	}
	return at
}
