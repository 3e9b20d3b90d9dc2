package fstab

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"sort"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/blockdev"
	"github.com/guestcheck/guestcheck/internal/fact/mounts"
	fstabfile "github.com/guestcheck/guestcheck/internal/parse/fstab"
	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

const fstabPath = mounts.FstabPath

// systemMounts are mount points of the OS layout: a missing one is a broken
// system, not a missing data disk, so nofail is not expected on them.
var systemMounts = map[string]bool{
	"/": true, "/boot": true, "/boot/efi": true, "/efi": true, "/usr": true, "/var": true, "/var/log": true,
	"/var/log/audit": true, "/var/tmp": true, "/tmp": true, "/home": true, "/opt": true,
}

// RunFstab checks /etc/fstab the way a disk reorder or a cloned disk would
// test it: kernel device names that change when disks are hot-plugged,
// identifiers that match no device or two, data disks whose absence would
// stop the boot, and entries that are not what is mounted. Device
// resolution and mount state are judged on the live system only.
func RunFstab(ctx context.Context, env *runner.Env) []runner.Finding {
	return JudgeFstab(GatherFstab(ctx, env))
}

// fstabJudge is the judgement of one FstabFacts: the facts and what is
// derived from them once. It does no I/O.
type fstabJudge struct {
	f        *FstabFacts
	inv      *blockdev.Inventory // nil when not live or unreadable
	mountsOK bool                // f.Mounts is the live mount table
	rootBase map[string]bool     // disks under "/", when known
}

// JudgeFstab judges gathered fstab facts.
func JudgeFstab(f FstabFacts) []runner.Finding {
	if errors.Is(f.ReadErr, iofs.ErrNotExist) {
		return []runner.Finding{runner.Skipf(codeFstabAbsent.ID, "no /etc/fstab: nothing is mounted from it",
			map[string]string{"file": f.File})}
	}
	if f.ReadErr != nil {
		return []runner.Finding{codeFstabUnreadable.New(runner.Error, "cannot read /etc/fstab",
			map[string]string{"file": f.File, "error": f.ReadErr.Error()}, unreadableFix(f.IsRoot, f.ReadErr))}
	}
	if len(f.Entries) == 0 && len(f.Problems) == 0 {
		return []runner.Finding{runner.Skipf(codeFstabAbsent.ID, "/etc/fstab has no entries", map[string]string{"file": f.File})}
	}
	r := newFstabJudge(&f)
	out := r.syntax()
	if f.Live {
		out = append(out, r.state()...)
	} else {
		out = append(out, runner.Skipf(codeFstabNotLive.ID,
			"device resolution and mount state not checked: "+f.NotLiveReason, map[string]string{"file": f.File}))
	}
	var judged []fstabfile.Entry
	for i, e := range f.Entries {
		if !validMountPoint(e) {
			continue
		}
		if f.Deadline != nil && i >= f.Cut {
			out = append(out, codeFstabStateUnreadable.New(runner.Error, "the check's deadline passed before every entry was judged",
				map[string]string{"error": f.Deadline.Error()}, codeFstabStateUnreadable.CaseFix("when the deadline passed")))
			break
		}
		out = append(out, r.entry(e)...)
		judged = append(judged, e)
	}
	if r.inv != nil {
		out = append(out, r.duplicates(r.referenced(judged))...)
		for _, c := range r.inv.Conflicts {
			out = append(out, codeFstabLinkMismatch.New(runner.Warn, "udev link disagrees with the disk: "+c,
				map[string]string{"conflict": c}, codeFstabLinkMismatch.Fixf()))
		}
	}
	return out
}

func newFstabJudge(f *FstabFacts) *fstabJudge {
	r := &fstabJudge{f: f}
	if !f.Live {
		return r
	}
	r.mountsOK = f.MountsErr == nil
	r.inv = f.Inventory
	if r.inv != nil && r.mountsOK {
		if m, ok := mountinfo.Find(f.Mounts, "/"); ok {
			if d := blockdev.MountDevice(r.inv, m, f.device); d != nil {
				r.rootBase = map[string]bool{}
				for _, b := range r.inv.BaseDisks(d) {
					r.rootBase[b.Name] = true
				}
			}
		}
	}
	return r
}

// validMountPoint is false for a relative mount point: libmount reads it
// as an entry, but systemd-fstab-generator skips it ("is not a valid
// path, ignoring") and mount would resolve it against its working
// directory. syntax judges it; the rest leaves such an entry out.
func validMountPoint(e fstabfile.Entry) bool {
	return e.IsSwap() || strings.HasPrefix(e.MountPoint, "/") || e.MountPoint == "none"
}

// syntax reports the lines mount cannot read and the entries systemd
// ignores for their mount point.
func (r *fstabJudge) syntax() []runner.Finding {
	var out []runner.Finding
	for _, le := range r.f.Problems {
		out = append(out, codeFstabSyntax.New(runner.Fail,
			fmt.Sprintf("line %d of /etc/fstab cannot be parsed: %s", le.Line, le.Msg),
			map[string]string{"entry": fmt.Sprintf("%s:%d", r.f.File, le.Line), "text": fstabfile.LineText(r.f.Data, le.Line), "reason": le.Msg},
			codeFstabSyntax.Fixf("line", fmt.Sprint(le.Line), "reason", le.Msg)))
	}
	for _, e := range r.f.Entries {
		if validMountPoint(e) {
			continue
		}
		out = append(out, codeFstabMountPoint.New(runner.Fail,
			fmt.Sprintf("line %d of /etc/fstab mounts %s on %q, which is not an absolute path", e.Line, e.Spec, e.MountPoint),
			map[string]string{"entry": fmt.Sprintf("%s:%d", r.f.File, e.Line), "spec": e.Spec, "mount_point": e.MountPoint,
				"why": "systemd-fstab-generator ignores the line, so nothing is mounted at boot"},
			mountPointFix(e)))
	}
	return out
}

// state reports what of the live state could not be read.
func (r *fstabJudge) state() []runner.Finding {
	var out []runner.Finding
	if err := r.f.MountsErr; err != nil {
		out = append(out, codeFstabStateUnreadable.New(runner.Error, "cannot read the mount table; mounted state not checked",
			map[string]string{"file": "/proc/self/mountinfo", "error": err.Error()}, codeFstabStateUnreadable.Fixf()))
	}
	if err := r.f.InventoryErr; err != nil {
		return append(out, codeFstabStateUnreadable.New(runner.Error, "cannot list block devices; device resolution not checked",
			map[string]string{"error": err.Error()}, codeFstabStateUnreadable.CaseFix("when the block devices cannot be listed")))
	}
	if inv := r.inv; inv != nil && (len(inv.Denied) > 0 || len(inv.Notes) > 0) {
		out = append(out, probeLimited(inv, r.f.IsRoot))
	}
	return out
}

// probeLimited says which devices were not probed, and so which
// identifiers are known from udev links only.
func probeLimited(inv *blockdev.Inventory, isRoot bool) runner.Finding {
	d := map[string]string{"udev_links": udevPresence(inv.UdevLinks)}
	msg := "some block devices were not probed"
	fix := codeFstabProbeLimited.CaseFix("when the probe was cut short")
	if len(inv.Denied) > 0 {
		devs := strings.Join(inv.Denied, ", ")
		fix = codeFstabProbeLimited.Fixf("devices", devs)
		if isRoot {
			fix = codeFstabProbeLimited.CaseFix("when root is denied", "devices", devs)
		}
		var notes []string
		for _, n := range inv.Denied {
			notes = append(notes, inv.ByName(n).ProbeNote)
		}
		d["unreadable_devices"] = devs
		d["errors"] = strings.Join(notes, "; ")
		why := "could not be opened (a device cgroup or security policy denies it)"
		if !isRoot {
			why = "could not be read without root"
		}
		msg = fmt.Sprintf("%d block device(s) %s; their identifiers come from /dev/disk/by-* links only", len(inv.Denied), why)
		if !inv.UdevLinks {
			msg = fmt.Sprintf("%d block device(s) %s and there are no /dev/disk links: their identifiers are unknown", len(inv.Denied), why)
		}
	}
	if len(inv.Notes) > 0 {
		d["notes"] = strings.Join(inv.Notes, "; ")
		if len(inv.Denied) == 0 {
			msg = "some block devices were not probed: " + inv.Notes[0]
		}
	}
	return codeFstabProbeLimited.New(runner.Skip, msg, d, fix)
}

func udevPresence(b bool) string {
	if b {
		return "present"
	}
	return "absent (udev is not running)"
}

// fstabEntryView is the per-entry context shared by the judgements.
type fstabEntryView struct {
	e        fstabfile.Entry
	src      fstabfile.Source
	what     string // "/data" or "swap /dev/vdb"
	optional bool   // nofail, noauto or automount: boot does not wait on it
	detail   map[string]string
	cloud    bool // written by cloud-init's mounts module
}

func (r *fstabJudge) view(e fstabfile.Entry) fstabEntryView {
	v := fstabEntryView{e: e, src: fstabfile.ClassifySource(e), what: e.MountPoint}
	if e.IsSwap() {
		v.what = "swap " + e.Spec
	}
	v.optional = e.HasOption("nofail") || e.HasOption("noauto") || e.HasOption("x-systemd.automount")
	c, _ := e.Option("comment")
	v.cloud = c == "cloudconfig"
	v.detail = map[string]string{"entry": fmt.Sprintf("%s:%d", r.f.File, e.Line), "spec": e.Spec,
		"mount_point": e.MountPoint, "type": e.Type, "options": strings.Join(e.Options, ",")}
	if v.cloud {
		v.detail["written_by"] = "cloud-init mounts module (comment=cloudconfig)"
	}
	return v
}

// with returns a copy of the entry's detail plus extra pairs.
func (v fstabEntryView) with(kv ...string) map[string]string { return runner.Detail(v.detail, kv...) }

// entry judges one fstab entry.
func (r *fstabJudge) entry(e fstabfile.Entry) []runner.Finding {
	v := r.view(e)
	var out []runner.Finding
	if f, ok := ignoredText(v); ok {
		out = append(out, f)
	}
	res := r.resolve(v)
	data, dataWhy := r.isData(v, res.dev)
	addNofail := data && !e.HasOption("nofail") && !e.HasOption("noauto")

	// Naming.
	namedByKernel := v.src.Kind == fstabfile.SourceDevice && fstabfile.IsKernelDeviceName(v.src.Value)
	if namedByKernel {
		st := runner.Fail
		why := "without nofail the boot stops in emergency mode when that name points at no disk, and mounts the wrong disk when it points at another"
		if v.optional {
			st = runner.Warn
			why = "with nofail/noauto the boot goes on, but the name can point at another disk after a disk is added, removed or hot-plugged"
		}
		msg := fmt.Sprintf("%s is mounted from kernel device name %s%s", v.what, v.src.Value, cloudNote(v))
		if e.IsSwap() {
			msg = fmt.Sprintf("swap is on kernel device name %s%s", v.src.Value, cloudNote(v))
		}
		out = append(out, codeFstabKernelName.New(st, msg,
			v.with(append(res.detailPairs(), "why", why, "data_judged_by", dataWhy)...),
			r.persistentFix(codeFstabKernelName, v, res.dev, addNofail)))
	}
	if v.src.Kind == fstabfile.SourceDiskLink && v.src.LinkDir == "by-path" {
		out = append(out, codeFstabByPath.New(runner.Warn,
			fmt.Sprintf("%s is mounted by bus path %s, which changes when the disk moves to another slot", v.what, v.src.Value),
			v.with(res.detailPairs()...), r.persistentFix(codeFstabByPath, v, res.dev, addNofail)))
	}

	malformed, hasMalformed := malformedID(v, r.f.Live)
	if hasMalformed {
		out = append(out, malformed)
	}

	// Options.
	if v.src.IsBlock() && data && !e.IsSwap() && !v.optional && !namedByKernel {
		out = append(out, codeFstabNoNofail.New(runner.Warn,
			fmt.Sprintf("data filesystem %s has no nofail: boot stops in emergency mode if its disk is missing", v.what),
			v.with(append(res.detailPairs(), "data_judged_by", dataWhy)...),
			codeFstabNoNofail.Fixf("line", fmt.Sprint(e.Line), "fstab_line", fstabLineWith(e, "", "nofail", "x-systemd.device-timeout=10s"))))
	}
	if v.src.Kind == fstabfile.SourceNetwork && !e.HasOption("_netdev") {
		out = append(out, codeFstabNoNetdev.New(runner.Warn,
			fmt.Sprintf("network filesystem %s has no _netdev: it may be mounted before the network is up", v.what),
			v.with(), codeFstabNoNetdev.Fixf("line", fmt.Sprint(e.Line), "fstab_line", fstabLineWith(e, "", "_netdev"))))
	}

	// Resolution (live only). No device carries a malformed identifier,
	// and malformedID has said what the boot does without one.
	if !hasMalformed {
		out = append(out, r.resolutionFindings(v, res)...)
	}

	// Mounted state.
	if f, ok := r.mountedFinding(v, res); ok {
		out = append(out, f)
	}

	if len(out) == 0 {
		msg := fmt.Sprintf("%s: %s", v.what, e.Spec)
		switch {
		case res.dev != nil:
			msg += " resolves to " + res.dev.Path()
			if r.mountsOK && !e.HasOption("noauto") {
				msg += map[bool]string{true: " and is active", false: " and is mounted"}[e.IsSwap()]
			}
		case !v.src.IsBlock():
			msg += " is not a block device (" + string(v.src.Kind) + ")"
		default:
			msg += " is a persistent name"
		}
		out = append(out, runner.Passf(codeFstabEntryOK.ID, msg, v.with(res.detailPairs()...)))
	}
	return out
}

// malformedID judges a UUID= or PARTUUID= value that no device can carry
// (fstabfile.CheckID): it never resolves, live or in an image, so the
// boot waits for it as for a missing disk.
func malformedID(v fstabEntryView, live bool) (runner.Finding, bool) {
	if v.src.Kind != fstabfile.SourceTag && v.src.Kind != fstabfile.SourceDiskLink {
		return runner.Finding{}, false
	}
	err := fstabfile.CheckID(v.src.ID, v.src.Value)
	if err == nil {
		return runner.Finding{}, false
	}
	st := runner.Fail
	why := "systemd waits for it (90 s by default), then the boot drops to emergency mode"
	switch {
	case v.optional:
		st, why = runner.Warn, "nofail, noauto or x-systemd.automount: the boot goes on without it"
	case v.e.IsSwap():
		st, why = runner.Warn, "the boot waits for it (90 s by default), then continues without this swap"
	}
	kind := string(v.src.ID)
	return codeFstabMalformedID.New(st,
		fmt.Sprintf("%s for %s is no %s a device can carry (the value %s): %s", v.e.Spec, v.what, kind, err, why),
		v.with("reason", "the value "+err.Error(), "why", why),
		codeFstabMalformedID.FixOn(live, "kind", kind, "spec", v.e.Spec, "line", fmt.Sprint(v.e.Line))), true
}

// ignoredText reports text on the entry's line that mount and systemd
// read past without a word: after the sixth field, or after a NUL byte.
func ignoredText(v fstabEntryView) (runner.Finding, bool) {
	e := v.e
	switch {
	case e.Trailing != "":
		return codeFstabIgnoredText.New(runner.Warn,
			fmt.Sprintf("line %d of /etc/fstab has text after the sixth field (%q), which mount ignores", e.Line, e.Trailing),
			v.with("ignored", e.Trailing, "why", "fields after the pass number are not read: a comment there is harmless, an option there is not applied"),
			codeFstabIgnoredText.Fixf("line", fmt.Sprint(e.Line), "fstab_line", fstabLineWith(e, ""))), true
	case e.CutAtNUL:
		return codeFstabIgnoredText.New(runner.Warn,
			fmt.Sprintf("line %d of /etc/fstab holds a NUL byte; mount reads the line only up to it", e.Line),
			v.with("why", "the last line has no final newline and holds a NUL byte: libmount reads it only up to the NUL"),
			codeFstabIgnoredText.CaseFix("when the line holds a NUL byte", "line", fmt.Sprint(e.Line), "fstab_line", fstabLineWith(e, ""))), true
	}
	return runner.Finding{}, false
}

func cloudNote(v fstabEntryView) string {
	if v.cloud {
		return " (written by cloud-init)"
	}
	return ""
}

// mountedFinding compares an entry with what is mounted (or swapped on).
func (r *fstabJudge) mountedFinding(v fstabEntryView, res fstabResolution) (runner.Finding, bool) {
	e, dev := v.e, res.dev
	if e.HasOption("noauto") || res.missing != "" || (v.src.IsBlock() && dev == nil && r.inv != nil) {
		// noauto is not mounted at boot; a missing or ambiguous device is
		// reported already.
		return runner.Finding{}, false
	}
	if e.IsSwap() {
		if !r.f.SwapsOK {
			return runner.Finding{}, false
		}
		for _, s := range r.f.Swaps {
			if s.Filename == e.Spec || (dev != nil && r.inv != nil && r.deviceOf(s.Filename) == dev) {
				return runner.Finding{}, false
			}
		}
		return codeFstabNotMounted.New(runner.Warn, fmt.Sprintf("%s is not active", v.what),
			v.with("swaps", "/proc/swaps"), codeFstabNotMounted.CaseFix("when the entry is a swap area", "spec", e.Spec)), true
	}
	if !r.mountsOK {
		return runner.Finding{}, false
	}
	m, ok := mountinfo.Find(r.f.Mounts, e.MountPoint)
	if !ok {
		return codeFstabNotMounted.New(runner.Warn, fmt.Sprintf("%s is not mounted", v.what), v.with(),
			codeFstabNotMounted.Fixf("mount_point", e.MountPoint, "unit", mountUnit(e.MountPoint))), true
	}
	if dev == nil || r.inv == nil {
		return runner.Finding{}, false
	}
	md := blockdev.MountDevice(r.inv, m, r.f.device)
	if md == nil || md == dev {
		return runner.Finding{}, false
	}
	return codeFstabOtherDevice.New(runner.Warn,
		fmt.Sprintf("%s is mounted from %s, but its fstab entry %s names %s", v.what, md.Path(), e.Spec, dev.Path()),
		v.with("mounted_device", md.Path(), "mounted_source", m.Source, "fstab_device", dev.Path()),
		codeFstabOtherDevice.Fixf("mount_point", e.MountPoint, "line", fmt.Sprint(e.Line))), true
}

func (r *fstabJudge) deviceOf(p string) *blockdev.BlockDevice {
	if !strings.HasPrefix(p, "/dev/") {
		return nil
	}
	d, _ := r.f.device(p)
	return d
}

// isData says whether an entry is a data filesystem (whose absence should
// not stop the boot): on the live system, one on another disk than "/";
// otherwise one outside the OS's usual mount points.
func (r *fstabJudge) isData(v fstabEntryView, dev *blockdev.BlockDevice) (bool, string) {
	if !v.src.IsBlock() {
		return false, "not a block device"
	}
	if dev != nil && r.rootBase != nil {
		for _, b := range r.inv.BaseDisks(dev) {
			if r.rootBase[b.Name] {
				return false, "on the same disk as /"
			}
		}
		return true, "on another disk than /"
	}
	if systemMounts[path.Clean(v.e.MountPoint)] {
		return false, "system mount point"
	}
	if v.e.IsSwap() {
		return false, "swap (disk unknown)"
	}
	return true, "mount point outside the OS layout (disk unknown)"
}

// referenced is the identifiers the judged entries name, as "KIND=value".
func (r *fstabJudge) referenced(entries []fstabfile.Entry) map[string]bool {
	ids := map[string]bool{}
	for _, e := range entries {
		if src := fstabfile.ClassifySource(e); src.ID != "" {
			ids[string(src.ID)+"="+src.Value] = true
		}
	}
	return ids
}

// duplicates reports identifiers shared by unrelated devices that fstab
// does not reference (referenced ones fail as ambiguous).
func (r *fstabJudge) duplicates(referenced map[string]bool) []runner.Finding {
	var out []runner.Finding
	for _, d := range r.inv.Duplicates() {
		if referenced[string(d.Kind)+"="+d.Value] {
			continue
		}
		var paths []string
		var ms []blockdev.Match
		for _, x := range d.Devices {
			paths = append(paths, x.Path())
			ms = append(ms, blockdev.Match{Device: x})
		}
		victim := r.likelyCopy(ms)
		out = append(out, codeFstabDuplicate.New(runner.Warn,
			fmt.Sprintf("%s %s is carried by %d devices: %s", d.Kind, d.Value, len(paths), strings.Join(paths, ", ")),
			map[string]string{"id_kind": string(d.Kind), "id_value": d.Value, "devices": strings.Join(paths, ", "),
				"why": "a cloned or restored disk is attached next to its original; mounting by this identifier picks one at random"},
			codeFstabDuplicate.Fixf("command", newIdentityCommand(d.Kind, victim, r.inv), "id", string(d.Kind)+"="+d.Value)))
	}
	return out
}

// likelyCopy picks the device to re-identify: one that is not mounted
// (the attached copy), else the last one.
func (r *fstabJudge) likelyCopy(ms []blockdev.Match) *blockdev.BlockDevice {
	mounted := map[*blockdev.BlockDevice]bool{}
	if r.mountsOK {
		for _, m := range r.f.Mounts {
			if d := blockdev.MountDevice(r.inv, m, r.f.device); d != nil {
				mounted[d] = true
			}
		}
	}
	sorted := append([]blockdev.Match(nil), ms...)
	sort.SliceStable(sorted, func(i, j int) bool { return !mounted[sorted[i].Device] && mounted[sorted[j].Device] })
	if !mounted[sorted[0].Device] {
		return sorted[0].Device
	}
	return ms[len(ms)-1].Device
}
