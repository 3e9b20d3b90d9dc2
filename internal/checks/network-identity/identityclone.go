package networkidentity

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

func machineIDUnset(ev identity.CloneEvidence) bool {
	return !ev.MachineIDFound || ev.MachineIDKind.Unset()
}

// JudgeMachineID judges /etc/machine-id by machine-id(5) and what systemd
// does with it at boot. On the running system it must hold an ID. In an
// image, empty or "uninitialized" is the sealed form whatever the file's
// mode, unless systemd would take /var/lib/dbus/machine-id instead; a
// missing file is sealed only when the root is writable when systemd
// starts, since it cannot create the file on a read-only root.
func JudgeMachineID(ev identity.CloneEvidence, live bool) []runner.Finding {
	d := ev.State.Detail(map[string]string{"file": MachineIDPath})
	if ev.MachineIDLink != "" {
		d["link_to"] = ev.MachineIDLink
	}
	if !ev.MachineIDTimes.Mod.IsZero() {
		d["mtime"] = ev.MachineIDTimes.Mod.UTC().Format(time.RFC3339)
	}
	if ev.MachineIDFound && ev.MachineIDErr == nil {
		d["mode"] = fmt.Sprintf("%04o", uint32(ev.MachineIDMode))
	}
	var out []runner.Finding
	if ev.MachineIDErr != nil {
		d["error"] = ev.MachineIDErr.Error()
		return []runner.Finding{CodeIDMachineIDUnreadable.New(runner.Error, "cannot read "+MachineIDPath, d, readFix(CodeIDMachineIDUnreadable, ev.IsRoot, MachineIDPath, ev.MachineIDErr))}
	}
	if ev.MachineIDFound && identity.LooseMode(ev.MachineIDMode) {
		// machine-id(5) asks for nothing but systemd creates it 0444: a
		// file others may write lets any local user change the identity.
		out = append(out, CodeIDMachineIDMode.New(runner.Warn,
			fmt.Sprintf("%s is writable by group or others (mode %04o)", MachineIDPath, uint32(ev.MachineIDMode)), d,
			CodeIDMachineIDMode.FixOn(live)))
	}
	state := "missing"
	if ev.MachineIDFound {
		state = ev.MachineIDKind.String()
	}
	switch {
	case live && machineIDUnset(ev):
		if ev.MachineIDFound && ev.MachineIDKind == identity.Uninitialized {
			state = quoteShort(ev.MachineID)
		}
		d["content"] = state
		return append(out, CodeIDMachineIDUnset.New(runner.Fail, MachineIDPath+" is "+state+" on a booted system", d,
			CodeIDMachineIDUnset.Fixf()))
	case machineIDUnset(ev) && ev.DBusMachineID != "":
		d["dbus_machine_id"] = ev.DBusMachineID
		d["content"] = state
		return append(out, CodeIDMachineIDDBusFallback.New(runner.Fail,
			fmt.Sprintf("%s is %s, but systemd will take the ID in %s at first boot: every VM made from this image gets %s", MachineIDPath, state, identity.DBusMachineIDPath, ev.DBusMachineID), d,
			CodeIDMachineIDDBusFallback.Fixf()))
	case !ev.MachineIDFound && (ev.MachineIDTransient || ev.NoSystemd):
		return append(out, missingNotNeeded(ev, d))
	case !ev.MachineIDFound && ev.Root.MissingMachineIDFatal():
		d["root"] = ev.Root.Why
		return append(out, CodeIDMachineIDMissingRO.New(runner.Fail,
			MachineIDPath+" is missing and the root is read-only when systemd starts ("+ev.Root.Why+"): systemd cannot create it, and boots without a machine ID", d,
			CodeIDMachineIDMissingRO.Fixf()))
	case !ev.MachineIDFound:
		d["root"] = ev.Root.Why
		return append(out, runner.Passf(CodeIDMachineIDOK.ID,
			MachineIDPath+" is missing; systemd creates it at first boot because the root is writable then ("+ev.Root.Why+")", d))
	case machineIDUnset(ev):
		return append(out, runner.Passf(CodeIDMachineIDOK.ID, "machine-id is "+state+", as in a sealed image: systemd generates one at first boot", d))
	case ev.MachineIDKind == identity.Invalid && !live:
		d["content"] = quoteShort(string(ev.MachineIDRaw))
		return append(out, CodeIDMachineIDInvalid.New(runner.Warn,
			MachineIDPath+" does not hold a machine ID; systemd will replace it with a generated one at first boot", d,
			CodeIDMachineIDInvalid.FixOn(false)))
	case ev.MachineIDKind != identity.Valid:
		d["content"] = quoteShort(string(ev.MachineIDRaw))
		msg := MachineIDPath + " does not hold a valid machine ID (" + ev.MachineIDKind.String() + ")"
		if ev.MachineIDKind == identity.Null {
			msg += "; systemd keeps an all-zero ID rather than generating one"
		}
		return append(out, CodeIDMachineIDInvalid.New(runner.Fail, msg, d, CodeIDMachineIDInvalid.FixOn(live)))
	}
	return append(out, runner.Passf(CodeIDMachineIDOK.ID, "machine-id is set", d))
}

// missingNotNeeded is the pass for a missing /etc/machine-id that no
// boot needs in place: a link to /run, which systemd fills at every boot,
// or an image without systemd.
func missingNotNeeded(ev identity.CloneEvidence, d map[string]string) runner.Finding {
	if ev.MachineIDTransient {
		return runner.Passf(CodeIDMachineIDOK.ID, MachineIDPath+" links to "+ev.MachineIDLink+
			", outside the image: systemd writes a new ID there at every boot, so no two clones share one", d)
	}
	return runner.Passf(CodeIDMachineIDOK.ID, MachineIDPath+" is missing, and the image has no systemd to set up a machine ID at boot", d)
}

// Margins of the clone rules. timestampGrain covers the coarse clock file
// timestamps use and a boot time derived from whole seconds; it is not a
// grace period between the template's boot and the clone's.
// cloneSlackBirth is the margin of the fallback rule, which has no boot
// start to compare with.
const (
	timestampGrain  = 2 * time.Second
	cloneSlackBirth = 10 * time.Minute
)

// Evidence names, reported in the finding's `evidence` detail and listed
// on the check's page.
const (
	EvFirstBoot     = "machine_id_before_first_boot"
	EvJournalBefore = "journal_before_first_boot"
	EvJournalEnded  = "journal_ended_before_instance"
	EvOtherInstance = "other_instance_after_machine_id"
	EvAge           = "machine_id_older_than_instance"
)

// JudgeClone flags a VM whose /etc/machine-id was not made for its
// cloud-init instance: a clone or restore that kept the original's
// identity, or an image with a fixed machine-id. The rules use evidence
// that does not fade with the time between the template's boot and the
// clone's (see docs/checks/network-identity.md).
func JudgeClone(ev identity.CloneEvidence) []runner.Finding {
	if ev.InstanceID == "" || machineIDUnset(ev) || ev.MachineIDKind != identity.Valid || ev.MachineIDTimes.Written().IsZero() {
		return nil // no cloud-init state, or the machine-id finding already says what is wrong
	}
	written := ev.MachineIDTimes.Written()
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	d := map[string]string{"machine_id_written": ts(written)}
	instanceIDDetail(d, "instance_id", ev.InstanceID)
	if ev.PreviousID != "" {
		instanceIDDetail(d, "previous_instance_id", ev.PreviousID)
	}
	var others []string
	for _, o := range ev.OtherInstances {
		others = append(others, ShowInstanceID(o.Name))
	}
	if len(others) > 0 {
		d["other_instances"] = strings.Join(others, ", ")
	}
	if !ev.InstanceBirth.IsZero() {
		d["instance_first_semaphore"] = ts(ev.InstanceBirth)
	}
	if !ev.BootTime.IsZero() {
		d["boot_time"] = ts(ev.BootTime)
	}
	if len(ev.Journals) > 0 {
		d["journal_files"] = strconv.Itoa(len(ev.Journals))
	}
	if len(ev.JournalSkipped) > 0 {
		d["journal_skipped"] = redactMachineID(strings.Join(ev.JournalSkipped, "\n"), ev.MachineID)
	}
	// This boot is the instance's first when every semaphore of the
	// instance was written during it.
	firstBoot := !ev.BootTime.IsZero() && !ev.InstanceBirth.IsZero() && !ev.InstanceBirth.Before(ev.BootTime.Add(-timestampGrain))
	var evidence, reasons []string
	add := func(name, reason string) {
		if !containsStr(evidence, name) {
			evidence = append(evidence, name)
			reasons = append(reasons, reason)
		}
	}
	if firstBoot && written.Before(ev.BootTime.Add(-timestampGrain)) {
		add(EvFirstBoot, fmt.Sprintf("it was last written at %s, before this boot (%s), which is the instance's first", ts(written), ts(ev.BootTime)))
	}
	for _, o := range ev.OtherInstances {
		if !o.Newest.IsZero() && o.Newest.After(written.Add(timestampGrain)) {
			add(EvOtherInstance, fmt.Sprintf("instance %s ran cloud-init at %s with it already written (%s)", ShowInstanceID(o.Name), ts(o.Newest), ts(written)))
		}
	}
	for _, j := range ev.Journals {
		h := j.Header
		if h.Entries == 0 || h.MachineID != strings.ToLower(ev.MachineID) {
			continue
		}
		if firstBoot && h.HeadRealtime.Before(ev.BootTime.Add(-timestampGrain)) {
			add(EvJournalBefore, fmt.Sprintf("the journal %s holds entries under it from %s, before this boot (%s), which is the instance's first", redactMachineID(j.Path, ev.MachineID), ts(h.HeadRealtime), ts(ev.BootTime)))
		}
		if !ev.InstanceBirth.IsZero() && h.TailBootID != ev.BootID && h.TailRealtime.Before(ev.InstanceBirth.Add(-timestampGrain)) {
			add(EvJournalEnded, fmt.Sprintf("the journal %s under it ended at %s, before the instance first ran cloud-init (%s)", redactMachineID(j.Path, ev.MachineID), ts(h.TailRealtime), ts(ev.InstanceBirth)))
		}
	}
	changedThisBoot := ev.PreviousID != "" && ev.PreviousID != noPreviousInstance && ev.PreviousID != ev.InstanceID
	ref := ev.InstanceBirth
	if ref.IsZero() && changedThisBoot {
		ref = ev.InstanceIDTime
	}
	// A machine-id written during this boot, the instance's first, was
	// made for the instance however long cloud-init took to start: a
	// first boot under TCG on a loaded host can run past the margin.
	madeThisBoot := firstBoot && !written.Before(ev.BootTime.Add(-timestampGrain))
	if !madeThisBoot && !ref.IsZero() && written.Before(ref.Add(-cloneSlackBirth)) {
		add(EvAge, fmt.Sprintf("it was written at %s, more than %s before the instance first ran (%s)", ts(written), cloneSlackBirth, ts(ref)))
	}
	if len(evidence) > 0 {
		d["evidence"] = strings.Join(evidence, ", ")
		for i, r := range reasons {
			d["why_"+evidence[i]] = r
		}
		return []runner.Finding{CodeIDCloneKeptMachineID.New(runner.Fail,
			fmt.Sprintf("/etc/machine-id predates cloud-init instance %s: %s", ShowInstanceID(ev.InstanceID), reasons[0]), d,
			CodeIDCloneKeptMachineID.FixOn(ev.Live))}
	}
	switch {
	case firstBoot:
		return []runner.Finding{runner.Passf(CodeIDInstanceOK.ID,
			fmt.Sprintf("machine-id was written during this boot, instance %s's first", ShowInstanceID(ev.InstanceID)), d)}
	case len(others) > 0 || changedThisBoot:
		return []runner.Finding{runner.Passf(CodeIDInstanceOK.ID,
			fmt.Sprintf("cloud-init instance changed to %s, and no earlier instance ran cloud-init after machine-id was written", ShowInstanceID(ev.InstanceID)), d)}
	}
	return []runner.Finding{runner.Passf(CodeIDInstanceOK.ID,
		fmt.Sprintf("cloud-init has seen only instance %s on this disk, and nothing shows machine-id predates it", ShowInstanceID(ev.InstanceID)), d)}
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// redactMachineID keeps the machine-id out of a report: journald names
// its directory after it, and machine-id(5) asks that the ID not be
// exposed (reports carry only guestid's application-specific hash).
func redactMachineID(s, machineID string) string {
	if machineID = strings.ToLower(strings.TrimSpace(machineID)); machineID == "" {
		return s
	}
	return strings.ReplaceAll(s, machineID, "MACHINE-ID")
}

// readFix is code's fix for a guest file p that could not be read (err),
// by whether guestcheck runs as root: "run as root" only helps a user who
// is not root already, and a file that cannot be opened for another
// reason needs repair, not permissions.
func readFix(code runner.Code, isRoot bool, p string, err error) string {
	switch {
	case runner.IsPermission(err) && !isRoot:
		return code.Fixf("path", p)
	case runner.IsPermission(err):
		return code.CaseFix(runner.WhenRootDenied, "path", p)
	}
	return code.CaseFix("when the file cannot be opened for another reason", "path", p)
}

// ShowInstanceID is identity.ShowInstanceID.
func ShowInstanceID(id string) string { return identity.ShowInstanceID(id) }

// instanceIDDetail is identity.InstanceIDDetail.
func instanceIDDetail(d map[string]string, key, id string) { identity.InstanceIDDetail(d, key, id) }
