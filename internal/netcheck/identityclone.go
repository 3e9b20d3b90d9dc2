package netcheck

import (
	"fmt"
	"io"
	iofs "io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/boottime"
	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/fs"
	"github.com/guestcheck/guestcheck/internal/guestfile/journalhdr"
	"github.com/guestcheck/guestcheck/internal/identity"
	"github.com/guestcheck/guestcheck/internal/sealrecord"
)

// JournalDir holds the persistent journal, one directory per machine-id.
const JournalDir = "/var/log/journal"

// FileTimes is a file's modification and status-change times.
type FileTimes struct{ Mod, Change time.Time }

// Written is the latest time the file's content can have been written:
// its ctime, which every write moves and no tool can set back (its mtime
// can be). Falls back to the mtime when the ctime is unknown.
func (t FileTimes) Written() time.Time {
	if !t.Change.IsZero() {
		return t.Change
	}
	return t.Mod
}

// TimesFunc returns the times of a guest path, not following a final
// symlink. Tests over captured trees pass the times the capture recorded.
type TimesFunc func(root *fs.Root, p string) (FileTimes, error)

// LstatTimes is the TimesFunc of the real file system.
func LstatTimes(root *fs.Root, p string) (FileTimes, error) {
	fi, err := root.Lstat(p)
	if err != nil {
		return FileTimes{}, err
	}
	return FileTimes{Mod: fi.Mtime, Change: fi.Ctime}, nil
}

// OtherInstance is a cloud-init instance directory other than the current
// one, and the newest of its per-instance semaphores.
type OtherInstance struct {
	Name   string
	Newest time.Time // zero when it has no semaphore
}

// JournalFile is one file of the persistent journal directory of the
// current machine-id, with its parsed header.
type JournalFile struct {
	Path   string
	Header journalhdr.Header
}

// CloneEvidence is what tells a VM whose machine-id was made for its
// cloud-init instance from one that kept an older one.
type CloneEvidence struct {
	MachineIDRaw   []byte
	MachineID      string // trimmed content
	MachineIDKind  identity.Kind
	MachineIDFound bool
	MachineIDErr   error
	MachineIDMode  iofs.FileMode
	MachineIDTimes FileTimes

	// DBusMachineID is the ID systemd would take from
	// /var/lib/dbus/machine-id when /etc/machine-id is unset; empty when
	// none. Root is whether the image's root is writable at boot; both are
	// read only under an image root and only when they matter.
	DBusMachineID string
	Root          identity.RootMode

	InstanceID     string
	InstanceIDTime time.Time
	PreviousID     string
	// InstanceBirth is the oldest per-instance semaphore of the current
	// instance: written during its first boot. Zero when unknown.
	InstanceBirth  time.Time
	OtherInstances []OtherInstance

	// BootTime is when the running system booted (/proc/stat btime) and
	// BootID its boot_id; zero and empty under an image root.
	BootTime time.Time
	BootID   string

	Journals []JournalFile
	// JournalSkipped lists journal files whose header could not be read,
	// with the reason.
	JournalSkipped []string

	// Template is sealprep's record of the template the image was sealed
	// from (nil when none); TemplateErr is why it could not be read.
	Template    *sealrecord.Record
	TemplateErr error
}

// ReadCloneEvidence gathers CloneEvidence through root.
func ReadCloneEvidence(root *fs.Root, live bool) CloneEvidence {
	return ReadCloneEvidenceTimes(root, live, LstatTimes)
}

// ReadCloneEvidenceTimes is ReadCloneEvidence with file times from times.
func ReadCloneEvidenceTimes(root *fs.Root, live bool, times TimesFunc) CloneEvidence {
	var ev CloneEvidence
	mid := identity.ReadMachineID(root)
	etc := mid.Etc
	ev.MachineIDFound, ev.MachineIDErr = etc.Found || etc.Err != nil, etc.Err
	tpl := identity.ReadTemplate(root)
	ev.Template, ev.TemplateErr = tpl.Record, tpl.Err()
	if etc.Found {
		ev.MachineIDRaw, ev.MachineIDMode = etc.Content, etc.Perm
		ev.MachineID = strings.TrimSpace(string(ev.MachineIDRaw))
		ev.MachineIDKind = etc.Kind
		if t, err := times(root, MachineIDPath); err == nil {
			ev.MachineIDTimes = t
		}
	}
	if !live && mid.Unset() {
		ev.DBusMachineID = mid.DBusFallback()
		if !etc.Found {
			ev.Root = identity.ReadRootMode(root)
		}
	}
	if b, err := root.ReadFile(InstanceIDPath); err == nil {
		ev.InstanceID = strings.TrimSpace(string(b))
		if t, err := times(root, InstanceIDPath); err == nil {
			ev.InstanceIDTime = t.Mod
		}
	}
	if b, err := root.ReadFile(PreviousInstanceIDPath); err == nil {
		ev.PreviousID = strings.TrimSpace(string(b))
	}
	if ev.InstanceID != "" {
		cur := strings.ReplaceAll(ev.InstanceID, "/", "_")
		if es, err := root.ReadDir(cloudInstancesDir); err == nil {
			for _, e := range es {
				if !e.IsDir() {
					continue
				}
				oldest, newest := semTimes(root, cloudInstancesDir+"/"+e.Name+"/sem", times)
				if e.Name == cur {
					ev.InstanceBirth = oldest
				} else {
					ev.OtherInstances = append(ev.OtherInstances, OtherInstance{Name: e.Name, Newest: newest})
				}
			}
		}
	}
	if live {
		ev.BootTime, _ = boottime.Read(root) // zero when unavailable
		if b, err := root.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
			ev.BootID = strings.ReplaceAll(strings.TrimSpace(string(b)), "-", "")
		}
	}
	if ev.MachineIDKind == identity.Valid && ev.MachineIDFound {
		ev.Journals, ev.JournalSkipped = readJournalHeaders(root, JournalDir+"/"+strings.ToLower(ev.MachineID))
	}
	return ev
}

// semTimes returns the oldest and newest modification time of the
// semaphores in dir (cloud-init writes each once, when its module first
// runs for the instance).
func semTimes(root *fs.Root, dir string, times TimesFunc) (oldest, newest time.Time) {
	es, err := root.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range es {
		t, err := times(root, dir+"/"+e.Name)
		if err != nil || t.Mod.IsZero() {
			continue
		}
		if oldest.IsZero() || t.Mod.Before(oldest) {
			oldest = t.Mod
		}
		if t.Mod.After(newest) {
			newest = t.Mod
		}
	}
	return
}

// maxJournalFiles bounds the work on a journal directory; journald keeps
// far fewer files with its default limits.
const maxJournalFiles = 512

// readJournalHeaders reads the header of every journal file in dir
// (active *.journal, archived *.journal and *.journal~ left by a crash).
func readJournalHeaders(root *fs.Root, dir string) (out []JournalFile, skipped []string) {
	es, err := root.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	for _, e := range es {
		if len(out)+len(skipped) >= maxJournalFiles {
			skipped = append(skipped, fmt.Sprintf("%s: more than %d files, the rest not read", dir, maxJournalFiles))
			break
		}
		n := e.Name
		if !e.IsRegular() || !strings.HasSuffix(n, ".journal") && !strings.HasSuffix(n, ".journal~") {
			continue
		}
		p := dir + "/" + n
		h, err := readJournalHeader(root, p)
		if err != nil {
			skipped = append(skipped, p+": "+err.Error())
			continue
		}
		out = append(out, JournalFile{Path: p, Header: h})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, skipped
}

func readJournalHeader(root *fs.Root, p string) (journalhdr.Header, error) {
	f, err := root.Open(p)
	if err != nil {
		return journalhdr.Header{}, err
	}
	defer f.Close()
	b := make([]byte, journalhdr.MinSize)
	n, err := io.ReadFull(f, b)
	if err != nil && n < len(journalhdr.Signature) {
		return journalhdr.Header{}, fmt.Errorf("read header: %w", err)
	}
	return journalhdr.Parse(b[:n])
}

func machineIDUnset(ev CloneEvidence) bool {
	return !ev.MachineIDFound || ev.MachineIDKind.Unset()
}

// JudgeMachineID judges /etc/machine-id by machine-id(5) and what systemd
// does with it at boot. On the running system it must hold an ID. In an
// image, empty or "uninitialized" is the sealed form whatever the file's
// mode, unless systemd would take /var/lib/dbus/machine-id instead; a
// missing file is sealed only when the root is writable when systemd
// starts, since it cannot create the file on a read-only root.
func JudgeMachineID(ev CloneEvidence, live bool) []check.Finding {
	d := map[string]string{"file": MachineIDPath}
	if !ev.MachineIDTimes.Mod.IsZero() {
		d["mtime"] = ev.MachineIDTimes.Mod.UTC().Format(time.RFC3339)
	}
	if ev.MachineIDFound && ev.MachineIDErr == nil {
		d["mode"] = fmt.Sprintf("%04o", uint32(ev.MachineIDMode))
	}
	var out []check.Finding
	if ev.MachineIDErr != nil {
		d["error"] = ev.MachineIDErr.Error()
		return []check.Finding{check.Errorf(CodeIDMachineIDUnreadable, "cannot read "+MachineIDPath, d, "Run guestcheck as root, or make the file readable")}
	}
	if ev.MachineIDFound && identity.LooseMode(ev.MachineIDMode) {
		// machine-id(5) asks for nothing but systemd creates it 0444: a
		// file others may write lets any local user change the identity.
		out = append(out, check.New(check.Warn, CodeIDMachineIDMode,
			fmt.Sprintf("%s is writable by group or others (mode %04o)", MachineIDPath, uint32(ev.MachineIDMode)), d,
			"`chmod 0444 /etc/machine-id`, the mode systemd creates it with"))
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
		return append(out, check.New(check.Fail, CodeIDMachineIDUnset, MachineIDPath+" is "+state+" on a booted system", d,
			"Generate the ID with `systemd-machine-id-setup` (or `dbus-uuidgen --ensure=/etc/machine-id`) and reboot, so DHCP client IDs, journald and other per-machine identities are stable"))
	case machineIDUnset(ev) && ev.DBusMachineID != "":
		d["dbus_machine_id"] = ev.DBusMachineID
		d["content"] = state
		return append(out, check.New(check.Fail, CodeIDMachineIDDBusFallback,
			fmt.Sprintf("%s is %s, but systemd will take the ID in %s at first boot: every VM made from this image gets %s", MachineIDPath, state, identity.DBusMachineIDPath, ev.DBusMachineID), d,
			"Remove /var/lib/dbus/machine-id (or make it a symlink to /etc/machine-id) when sealing, as `sealprep` and virt-sysprep's machine-id operation do"))
	case !ev.MachineIDFound && ev.Root.MissingMachineIDFatal():
		d["root"] = ev.Root.Why
		return append(out, check.New(check.Fail, CodeIDMachineIDMissingRO,
			MachineIDPath+" is missing and the root is read-only when systemd starts ("+ev.Root.Why+"): systemd cannot create it, and boots without a machine ID", d,
			"Seal with an empty file instead: `: > /etc/machine-id` (machine-id(5): an empty file lets systemd mount a generated ID over it on a read-only root)"))
	case !ev.MachineIDFound:
		d["root"] = ev.Root.Why
		return append(out, check.Passf(CodeIDMachineIDOK,
			MachineIDPath+" is missing; systemd creates it at first boot because the root is writable then ("+ev.Root.Why+")", d))
	case machineIDUnset(ev):
		return append(out, check.Passf(CodeIDMachineIDOK, "machine-id is "+state+", as in a sealed image: systemd generates one at first boot", d))
	case ev.MachineIDKind == identity.Invalid && !live:
		d["content"] = quoteShort(string(ev.MachineIDRaw))
		return append(out, check.New(check.Warn, CodeIDMachineIDInvalid,
			MachineIDPath+" does not hold a machine ID; systemd will replace it with a generated one at first boot", d,
			"Seal with an empty file: `: > /etc/machine-id`"))
	case ev.MachineIDKind != identity.Valid:
		d["content"] = quoteShort(string(ev.MachineIDRaw))
		msg := MachineIDPath + " does not hold a valid machine ID (" + ev.MachineIDKind.String() + ")"
		if ev.MachineIDKind == identity.Null {
			msg += "; systemd keeps an all-zero ID rather than generating one"
		}
		return append(out, check.New(check.Fail, CodeIDMachineIDInvalid, msg, d,
			"Replace it: `rm /etc/machine-id && systemd-machine-id-setup`, then reboot (in an image: `: > /etc/machine-id`)"))
	}
	return append(out, check.Passf(CodeIDMachineIDOK, "machine-id is set", d))
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
func JudgeClone(ev CloneEvidence) []check.Finding {
	if ev.InstanceID == "" || machineIDUnset(ev) || ev.MachineIDKind != identity.Valid || ev.MachineIDTimes.Written().IsZero() {
		return nil // no cloud-init state, or the machine-id finding already says what is wrong
	}
	written := ev.MachineIDTimes.Written()
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	d := map[string]string{"instance_id": ev.InstanceID, "machine_id_written": ts(written)}
	if ev.PreviousID != "" {
		d["previous_instance_id"] = ev.PreviousID
	}
	var others []string
	for _, o := range ev.OtherInstances {
		others = append(others, o.Name)
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
		d["journal_skipped"] = strings.Join(ev.JournalSkipped, "\n")
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
		add(EvFirstBoot, fmt.Sprintf("it was last written at %s, before this boot (%s), the instance's first", ts(written), ts(ev.BootTime)))
	}
	for _, o := range ev.OtherInstances {
		if !o.Newest.IsZero() && o.Newest.After(written.Add(timestampGrain)) {
			add(EvOtherInstance, fmt.Sprintf("instance %s ran cloud-init at %s with it already written (%s)", o.Name, ts(o.Newest), ts(written)))
		}
	}
	for _, j := range ev.Journals {
		h := j.Header
		if h.Entries == 0 || h.MachineID != strings.ToLower(ev.MachineID) {
			continue
		}
		if firstBoot && h.HeadRealtime.Before(ev.BootTime.Add(-timestampGrain)) {
			add(EvJournalBefore, fmt.Sprintf("the journal %s holds entries under it from %s, before this boot (%s), the instance's first", j.Path, ts(h.HeadRealtime), ts(ev.BootTime)))
		}
		if !ev.InstanceBirth.IsZero() && h.TailBootID != ev.BootID && h.TailRealtime.Before(ev.InstanceBirth.Add(-timestampGrain)) {
			add(EvJournalEnded, fmt.Sprintf("the journal %s under it ended at %s, before the instance first ran cloud-init (%s)", j.Path, ts(h.TailRealtime), ts(ev.InstanceBirth)))
		}
	}
	changedThisBoot := ev.PreviousID != "" && ev.PreviousID != noPreviousInstance && ev.PreviousID != ev.InstanceID
	ref := ev.InstanceBirth
	if ref.IsZero() && changedThisBoot {
		ref = ev.InstanceIDTime
	}
	if !ref.IsZero() && written.Before(ref.Add(-cloneSlackBirth)) {
		add(EvAge, fmt.Sprintf("it was written at %s, more than %s before the instance first ran (%s)", ts(written), cloneSlackBirth, ts(ref)))
	}
	if len(evidence) > 0 {
		d["evidence"] = strings.Join(evidence, ", ")
		for i, r := range reasons {
			d["why_"+evidence[i]] = r
		}
		return []check.Finding{check.New(check.Fail, CodeIDCloneKeptMachineID,
			fmt.Sprintf("/etc/machine-id predates cloud-init instance %s: %s", ev.InstanceID, reasons[0]), d,
			"Give the VM its own identity: `rm /etc/machine-id && systemd-machine-id-setup`, reboot; seal templates (sealprep, or `cloud-init clean --machine-id`) before cloning, and give images an empty /etc/machine-id")}
	}
	switch {
	case firstBoot:
		return []check.Finding{check.Passf(CodeIDInstanceOK,
			fmt.Sprintf("machine-id was written during this boot, instance %s's first", ev.InstanceID), d)}
	case len(others) > 0 || changedThisBoot:
		return []check.Finding{check.Passf(CodeIDInstanceOK,
			fmt.Sprintf("cloud-init instance changed to %s, and no earlier instance ran cloud-init after machine-id was written", ev.InstanceID), d)}
	}
	return []check.Finding{check.Passf(CodeIDInstanceOK,
		fmt.Sprintf("cloud-init has seen only instance %s on this disk, and nothing shows machine-id predates it", ev.InstanceID), d)}
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
