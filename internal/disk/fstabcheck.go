package disk

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"sort"
	"strings"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/guestfile/fstab"
	"github.com/guestcheck/guestcheck/internal/guestfile/mountinfo"
)

// Finding codes of the fstab check, in groups. Each group is a section
// of the Codes in docs/checks/fstab.md; TestCodeGroupsDocumented in
// internal/checks holds the two in step.

// Finding codes: the file and its entries.
const (
	codeFstabEntryOK     = "fstab-entry-ok"
	codeFstabAbsent      = "fstab-absent"
	codeFstabUnreadable  = "fstab-unreadable"
	codeFstabSyntax      = "fstab-syntax-error"
	codeFstabMountPoint  = "fstab-mount-point-invalid"
	codeFstabIgnoredText = "fstab-ignored-text"
)

// Finding codes: device names.
const (
	codeFstabKernelName = "fstab-kernel-device-name"
	codeFstabByPath     = "fstab-by-path-device-name"
	codeFstabMissing    = "fstab-device-missing"
	codeFstabAmbiguous  = "fstab-device-ambiguous"
)

// Finding codes: mount options.
const (
	codeFstabNoNofail = "fstab-data-without-nofail"
	codeFstabNoNetdev = "fstab-network-without-netdev"
)

// Finding codes: the mounted system.
const (
	codeFstabNotMounted   = "fstab-not-mounted"
	codeFstabOtherDevice  = "fstab-mounted-device-differs"
	codeFstabDuplicate    = "fstab-duplicate-id"
	codeFstabLinkMismatch = "fstab-udev-link-mismatch"
)

// Finding codes: when an entry cannot be verified.
const (
	codeFstabNotLive         = "fstab-not-live"
	codeFstabProbeLimited    = "fstab-probe-limited"
	codeFstabUnverifiable    = "fstab-device-unverifiable"
	codeFstabStateUnreadable = "fstab-state-unreadable"
)

// FstabCodes lists every finding code RunFstab reports, a line per group.
var FstabCodes = []string{
	codeFstabEntryOK, codeFstabAbsent, codeFstabUnreadable, codeFstabSyntax, codeFstabMountPoint, codeFstabIgnoredText,
	codeFstabKernelName, codeFstabByPath, codeFstabMissing, codeFstabAmbiguous,
	codeFstabNoNofail, codeFstabNoNetdev,
	codeFstabNotMounted, codeFstabOtherDevice, codeFstabDuplicate, codeFstabLinkMismatch,
	codeFstabNotLive, codeFstabProbeLimited, codeFstabUnverifiable, codeFstabStateUnreadable,
}

const fstabPath = "/etc/fstab"

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
func RunFstab(ctx context.Context, env *check.Env) []check.Finding {
	return JudgeFstab(GatherFstab(ctx, env))
}

// fstabJudge is the judgement of one FstabFacts: the facts and what is
// derived from them once. It does no I/O.
type fstabJudge struct {
	f        *FstabFacts
	inv      *Inventory      // nil when not live or unreadable
	mountsOK bool            // f.Mounts is the live mount table
	rootBase map[string]bool // disks under "/", when known
}

// JudgeFstab judges gathered fstab facts.
func JudgeFstab(f FstabFacts) []check.Finding {
	if errors.Is(f.ReadErr, iofs.ErrNotExist) {
		return []check.Finding{check.Skipf(codeFstabAbsent, "no /etc/fstab: nothing is mounted from it",
			map[string]string{"file": f.File})}
	}
	if f.ReadErr != nil {
		return []check.Finding{check.Errorf(codeFstabUnreadable, "cannot read /etc/fstab",
			map[string]string{"file": f.File, "error": f.ReadErr.Error()},
			"run guestcheck as root, or check the file's permissions")}
	}
	if len(f.Entries) == 0 && len(f.Problems) == 0 {
		return []check.Finding{check.Skipf(codeFstabAbsent, "/etc/fstab has no entries", map[string]string{"file": f.File})}
	}
	r := newFstabJudge(&f)
	out := r.syntax()
	if f.Live {
		out = append(out, r.state()...)
	} else {
		out = append(out, check.Skipf(codeFstabNotLive,
			"device resolution and mount state not checked: "+f.NotLiveReason, map[string]string{"file": f.File}))
	}
	var judged []fstab.Entry
	for i, e := range f.Entries {
		if !validMountPoint(e) {
			continue
		}
		if f.Deadline != nil && i >= f.Cut {
			out = append(out, check.Errorf(codeFstabStateUnreadable, "the check's deadline passed before every entry was judged",
				map[string]string{"error": f.Deadline.Error()}, "raise checks.fstab.timeout in the config file"))
			break
		}
		out = append(out, r.entry(e)...)
		judged = append(judged, e)
	}
	if r.inv != nil {
		out = append(out, r.duplicates(r.referenced(judged))...)
		for _, c := range r.inv.Conflicts {
			out = append(out, check.New(check.Warn, codeFstabLinkMismatch, "udev link disagrees with the disk: "+c,
				map[string]string{"conflict": c},
				"run `udevadm trigger --settle` (or reboot) so that udev re-reads the device and rewrites its /dev/disk links"))
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
			if d := mountDevice(r.inv, m, f.device); d != nil {
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
func validMountPoint(e fstab.Entry) bool {
	return e.IsSwap() || strings.HasPrefix(e.MountPoint, "/") || e.MountPoint == "none"
}

// syntax reports the lines mount cannot read and the entries systemd
// ignores for their mount point.
func (r *fstabJudge) syntax() []check.Finding {
	var out []check.Finding
	for _, le := range r.f.Problems {
		out = append(out, check.New(check.Fail, codeFstabSyntax,
			fmt.Sprintf("line %d of /etc/fstab cannot be parsed: %s", le.Line, le.Msg),
			map[string]string{"entry": fmt.Sprintf("%s:%d", r.f.File, le.Line), "text": fstab.LineText(r.f.Data, le.Line), "reason": le.Msg},
			fmt.Sprintf("fix or comment out line %d: mount and systemd-fstab-generator reject or ignore it, so what it should mount is not mounted", le.Line)))
	}
	for _, e := range r.f.Entries {
		if validMountPoint(e) {
			continue
		}
		out = append(out, check.New(check.Fail, codeFstabMountPoint,
			fmt.Sprintf("line %d of /etc/fstab mounts %s on %q, which is not an absolute path", e.Line, e.Spec, e.MountPoint),
			map[string]string{"entry": fmt.Sprintf("%s:%d", r.f.File, e.Line), "spec": e.Spec, "mount_point": e.MountPoint,
				"why": "systemd-fstab-generator ignores the line, so nothing is mounted at boot"},
			mountPointFix(e)))
	}
	return out
}

// state reports what of the live state could not be read.
func (r *fstabJudge) state() []check.Finding {
	var out []check.Finding
	if err := r.f.MountsErr; err != nil {
		out = append(out, check.Errorf(codeFstabStateUnreadable, "cannot read the mount table; mounted state not checked",
			map[string]string{"file": "/proc/self/mountinfo", "error": err.Error()}, "check that /proc is mounted"))
	}
	if err := r.f.InventoryErr; err != nil {
		return append(out, check.Errorf(codeFstabStateUnreadable, "cannot list block devices; device resolution not checked",
			map[string]string{"error": err.Error()}, "check that /sys is mounted"))
	}
	if inv := r.inv; inv != nil && (len(inv.Denied) > 0 || len(inv.Notes) > 0) {
		out = append(out, probeLimited(inv, r.f.IsRoot))
	}
	return out
}

// probeLimited says which devices were not probed, and so which
// identifiers are known from udev links only.
func probeLimited(inv *Inventory, isRoot bool) check.Finding {
	d := map[string]string{"udev_links": udevPresence(inv.UdevLinks)}
	msg := "some block devices were not probed"
	if len(inv.Denied) > 0 {
		var notes []string
		for _, n := range inv.Denied {
			notes = append(notes, inv.ByName(n).ProbeNote)
		}
		d["unreadable_devices"] = strings.Join(inv.Denied, ", ")
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
	return check.Skipf(codeFstabProbeLimited, msg, d)
}

func udevPresence(b bool) string {
	if b {
		return "present"
	}
	return "absent (udev is not running)"
}

// fstabEntryView is the per-entry context shared by the judgements.
type fstabEntryView struct {
	e        fstab.Entry
	src      fstab.Source
	what     string // "/data" or "swap /dev/vdb"
	optional bool   // nofail, noauto or automount: boot does not wait on it
	detail   map[string]string
	cloud    bool // written by cloud-init's mounts module
}

func (r *fstabJudge) view(e fstab.Entry) fstabEntryView {
	v := fstabEntryView{e: e, src: fstab.ClassifySource(e), what: e.MountPoint}
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
func (v fstabEntryView) with(kv ...string) map[string]string { return check.Detail(v.detail, kv...) }

// entry judges one fstab entry.
func (r *fstabJudge) entry(e fstab.Entry) []check.Finding {
	v := r.view(e)
	var out []check.Finding
	if f, ok := ignoredText(v); ok {
		out = append(out, f)
	}
	res := r.resolve(v)
	data, dataWhy := r.isData(v, res.dev)
	addNofail := data && !e.HasOption("nofail") && !e.HasOption("noauto")

	// Naming.
	namedByKernel := v.src.Kind == fstab.SourceDevice && fstab.IsKernelDeviceName(v.src.Value)
	if namedByKernel {
		st := check.Fail
		why := "without nofail the boot stops in emergency mode when that name points at no disk, and mounts the wrong disk when it points at another"
		if v.optional {
			st = check.Warn
			why = "with nofail/noauto the boot goes on, but the name can point at another disk after a disk is added, removed or hot-plugged"
		}
		msg := fmt.Sprintf("%s is mounted from kernel device name %s%s", v.what, v.src.Value, cloudNote(v))
		if e.IsSwap() {
			msg = fmt.Sprintf("swap is on kernel device name %s%s", v.src.Value, cloudNote(v))
		}
		out = append(out, check.New(st, codeFstabKernelName, msg,
			v.with(append(res.detailPairs(), "why", why, "data_judged_by", dataWhy)...),
			r.persistentFix(v, res.dev, addNofail)))
	}
	if v.src.Kind == fstab.SourceDiskLink && v.src.LinkDir == "by-path" {
		out = append(out, check.New(check.Warn, codeFstabByPath,
			fmt.Sprintf("%s is mounted by bus path %s, which changes when the disk moves to another slot", v.what, v.src.Value),
			v.with(res.detailPairs()...), r.persistentFix(v, res.dev, addNofail)))
	}

	// Options.
	if v.src.IsBlock() && data && !e.IsSwap() && !v.optional && !namedByKernel {
		out = append(out, check.New(check.Warn, codeFstabNoNofail,
			fmt.Sprintf("data filesystem %s has no nofail: boot stops in emergency mode if its disk is missing", v.what),
			v.with(append(res.detailPairs(), "data_judged_by", dataWhy)...),
			fmt.Sprintf("add nofail (and x-systemd.device-timeout=10s to bound the wait for a hot-plugged disk) to line %d: `%s`",
				e.Line, fstabLineWith(e, "", "nofail", "x-systemd.device-timeout=10s"))))
	}
	if v.src.Kind == fstab.SourceNetwork && !e.HasOption("_netdev") {
		out = append(out, check.New(check.Warn, codeFstabNoNetdev,
			fmt.Sprintf("network filesystem %s has no _netdev: it may be mounted before the network is up", v.what),
			v.with(), fmt.Sprintf("add _netdev to the options of line %d: `%s`", e.Line, fstabLineWith(e, "", "_netdev"))))
	}

	// Resolution (live only).
	out = append(out, r.resolutionFindings(v, res)...)

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
		out = append(out, check.Passf(codeFstabEntryOK, msg, v.with(res.detailPairs()...)))
	}
	return out
}

// ignoredText reports text on the entry's line that mount and systemd
// read past without a word: after the sixth field, or after a NUL byte.
func ignoredText(v fstabEntryView) (check.Finding, bool) {
	e := v.e
	switch {
	case e.Trailing != "":
		return check.New(check.Warn, codeFstabIgnoredText,
			fmt.Sprintf("line %d of /etc/fstab has text after the sixth field (%q), which mount ignores", e.Line, e.Trailing),
			v.with("ignored", e.Trailing, "why", "fields after the pass number are not read: a comment there is harmless, an option there is not applied"),
			fmt.Sprintf("move a comment to its own line starting with #, or move options into the fourth field: `%s`", fstabLineWith(e, ""))), true
	case e.CutAtNUL:
		return check.New(check.Warn, codeFstabIgnoredText,
			fmt.Sprintf("line %d of /etc/fstab holds a NUL byte; mount reads the line only up to it", e.Line),
			v.with("why", "the last line has no final newline and holds a NUL byte: libmount reads it only up to the NUL"),
			fmt.Sprintf("rewrite line %d without the NUL byte and end the file with a newline: `%s`", e.Line, fstabLineWith(e, ""))), true
	}
	return check.Finding{}, false
}

// mountPointFix is the remediation for a relative or empty mount point.
func mountPointFix(e fstab.Entry) string {
	if e.MountPoint == "" {
		return fmt.Sprintf("give line %d an absolute mount point, or comment the line out", e.Line)
	}
	e.MountPoint = path.Clean("/" + e.MountPoint)
	return fmt.Sprintf("write the mount point of line %d as an absolute path (`%s`), or comment the line out",
		e.Line, fstabLineWith(e, ""))
}

func cloudNote(v fstabEntryView) string {
	if v.cloud {
		return " (written by cloud-init)"
	}
	return ""
}

// fstabResolution is what an fs_spec resolved to on the live system.
type fstabResolution struct {
	dev      *BlockDevice
	sources  []string
	matches  []Match // when more than one
	missing  string  // why it is missing, when it is
	skip     string  // why it could not be judged
	foldHint []Match // case-insensitive matches of a missing identifier
}

func (res fstabResolution) detailPairs() []string {
	if res.dev == nil {
		return nil
	}
	d := res.dev
	kv := []string{"device", d.Path(), "device_size", iecBytes(d.Size), "device_size_bytes", fmt.Sprint(d.Size),
		"resolved_by", strings.Join(res.sources, ", ")}
	if d.FS != nil {
		kv = append(kv, "fs_type", d.FS.Type, "fs_uuid", d.FS.UUID, "fs_label", d.FS.Label)
	}
	if id, ok := d.ID(fstab.IDPartUUID); ok {
		kv = append(kv, "partuuid", id.Value)
	}
	if d.ProbeNote != "" {
		kv = append(kv, "probe_note", d.ProbeNote)
	}
	return kv
}

// resolve finds the device an entry names, on the live system.
func (r *fstabJudge) resolve(v fstabEntryView) fstabResolution {
	var res fstabResolution
	if r.inv == nil {
		return res
	}
	switch {
	case v.src.ID != "": // UUID=, LABEL=, ... and /dev/disk/by-{uuid,label,partuuid,partlabel}
		ms := r.inv.Lookup(v.src.ID, v.src.Value)
		switch len(ms) {
		case 0:
			if unread := r.inv.Unread(); len(unread) > 0 && !r.inv.UdevLinks {
				// The identifier may be on a device that could not be read.
				res.skip = fmt.Sprintf("no readable device has %s %s, but %s could not be read and there are no /dev/disk links to consult",
					v.src.ID, v.src.Value, strings.Join(unread, ", "))
				return res
			}
			res.missing = fmt.Sprintf("no block device has %s %s", v.src.ID, v.src.Value)
			res.foldHint = r.inv.LookupFold(v.src.ID, v.src.Value)
		case 1:
			res.dev, res.sources = ms[0].Device, ms[0].Sources
		default:
			res.matches = ms
		}
	case v.src.Kind == fstab.SourceDiskLink: // by-id, by-path: only udev knows them
		if !r.inv.UdevLinks {
			res.skip = "/dev/disk does not exist (udev is not running), so " + v.src.Value + " cannot be resolved"
			return res
		}
		r.resolvePath(v.src.Value, &res)
	case v.src.Kind == fstab.SourceDevice:
		r.resolvePath(v.src.Value, &res)
	case v.src.Kind == fstab.SourceFile:
		if r.f.Missing[v.src.Value] {
			res.missing = v.src.Value + " does not exist"
		}
	}
	return res
}

func (r *fstabJudge) resolvePath(p string, res *fstabResolution) {
	d, err := r.f.device(p)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		res.missing = p + " does not exist"
	case err != nil:
		res.missing = err.Error()
	case d.Size == 0:
		res.missing = p + " has no medium (size 0)"
	default:
		res.dev, res.sources = d, []string{p}
	}
}

func (r *fstabJudge) resolutionFindings(v fstabEntryView, res fstabResolution) []check.Finding {
	e := v.e
	switch {
	case res.skip != "":
		return []check.Finding{check.Skipf(codeFstabUnverifiable, fmt.Sprintf("%s: %s", v.what, res.skip), v.with())}
	case len(res.matches) > 1:
		var paths []string
		for _, m := range res.matches {
			paths = append(paths, m.Device.Path())
		}
		victim := r.likelyCopy(res.matches)
		return []check.Finding{check.New(check.Fail, codeFstabAmbiguous,
			fmt.Sprintf("%s for %s matches %d block devices: %s", e.Spec, v.what, len(paths), strings.Join(paths, ", ")),
			v.with("devices", strings.Join(paths, ", "), "why", "a cloned or restored disk carries the same identifier; which one is mounted depends on probe order"),
			fmt.Sprintf("give the copy a new identity (%s) or detach it, so that %s names one device", newIdentityCommand(v.src.ID, victim, r.inv), e.Spec))}
	case res.missing != "":
		st := check.Fail
		why := "systemd waits for the device (90 s by default), then the boot drops to emergency mode"
		switch {
		case v.optional:
			st, why = check.Warn, "nofail, noauto or x-systemd.automount: the boot goes on without it"
		case e.IsSwap():
			st, why = check.Warn, "the boot waits for the device (90 s by default), then continues without this swap"
		}
		kv := []string{"why", why}
		if len(res.foldHint) > 0 {
			kv = append(kv, "case_mismatch", fmt.Sprintf("%s has it with different case; mount compares exactly", res.foldHint[0].Device.Path()))
		}
		fix := "attach the disk, or correct the identifier (`blkid` lists the present ones)"
		if !v.optional {
			spec := ""
			if v.src.Kind == fstab.SourceDevice && fstab.IsKernelDeviceName(v.src.Value) {
				spec = "UUID=<uuid>" // never suggest keeping a kernel name
			}
			fix += fmt.Sprintf(", or add nofail,x-systemd.device-timeout=10s so that boot continues without it: `%s`",
				fstabLineWith(e, spec, "nofail", "x-systemd.device-timeout=10s"))
		}
		return []check.Finding{check.New(st, codeFstabMissing,
			fmt.Sprintf("%s for %s is not present: %s", e.Spec, v.what, res.missing), v.with(kv...), fix)}
	}
	return nil
}

// mountedFinding compares an entry with what is mounted (or swapped on).
func (r *fstabJudge) mountedFinding(v fstabEntryView, res fstabResolution) (check.Finding, bool) {
	e, dev := v.e, res.dev
	if e.HasOption("noauto") || res.missing != "" || (v.src.IsBlock() && dev == nil && r.inv != nil) {
		// noauto is not mounted at boot; a missing or ambiguous device is
		// reported already.
		return check.Finding{}, false
	}
	if e.IsSwap() {
		if !r.f.SwapsOK {
			return check.Finding{}, false
		}
		for _, s := range r.f.Swaps {
			if s.Filename == e.Spec || (dev != nil && r.inv != nil && r.deviceOf(s.Filename) == dev) {
				return check.Finding{}, false
			}
		}
		return check.New(check.Warn, codeFstabNotMounted, fmt.Sprintf("%s is not active", v.what),
			v.with("swaps", "/proc/swaps"), fmt.Sprintf("run `swapon %s` and read its error", e.Spec)), true
	}
	if !r.mountsOK {
		return check.Finding{}, false
	}
	m, ok := mountinfo.Find(r.f.Mounts, e.MountPoint)
	if !ok {
		return check.New(check.Warn, codeFstabNotMounted, fmt.Sprintf("%s is not mounted", v.what), v.with(),
			fmt.Sprintf("run `mount %s` and read its error (or `journalctl -b -u %s`)", e.MountPoint, mountUnit(e.MountPoint))), true
	}
	if dev == nil || r.inv == nil {
		return check.Finding{}, false
	}
	md := mountDevice(r.inv, m, r.f.device)
	if md == nil || md == dev {
		return check.Finding{}, false
	}
	return check.New(check.Warn, codeFstabOtherDevice,
		fmt.Sprintf("%s is mounted from %s, but its fstab entry %s names %s", v.what, md.Path(), e.Spec, dev.Path()),
		v.with("mounted_device", md.Path(), "mounted_source", m.Source, "fstab_device", dev.Path()),
		fmt.Sprintf("find out which disk holds the data %s needs, then fix line %d or remount (`umount %s && mount %s`)",
			e.MountPoint, e.Line, e.MountPoint, e.MountPoint)), true
}

func (r *fstabJudge) deviceOf(p string) *BlockDevice {
	if !strings.HasPrefix(p, "/dev/") {
		return nil
	}
	d, _ := r.f.device(p)
	return d
}

// isData says whether an entry is a data filesystem (whose absence should
// not stop the boot): on the live system, one on another disk than "/";
// otherwise one outside the OS's usual mount points.
func (r *fstabJudge) isData(v fstabEntryView, dev *BlockDevice) (bool, string) {
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

// persistentFix builds the remediation of a kernel-name or by-path entry:
// the exact line to use, from the probed identity of the device.
func (r *fstabJudge) persistentFix(v fstabEntryView, dev *BlockDevice, addNofail bool) string {
	e := v.e
	var extra []string
	if addNofail {
		extra = []string{"nofail"}
	}
	var spec string
	if dev != nil {
		if id, ok := dev.ID(fstab.IDUUID); ok {
			spec = "UUID=" + id.Value
		} else if id, ok := dev.ID(fstab.IDPartUUID); ok {
			spec = "PARTUUID=" + id.Value
		}
	}
	prefix := ""
	if v.cloud {
		prefix = "cloud-init wrote this line from the mounts/swap user-data, so change the device there and "
	}
	if spec != "" {
		return fmt.Sprintf("%sreplace line %d with `%s`", prefix, e.Line, fstabLineWith(e, spec, extra...))
	}
	dev0 := v.src.Value
	if dev != nil {
		dev0 = dev.Path()
	}
	return fmt.Sprintf("%srun `blkid %s` and replace line %d with `%s`, using the UUID it prints", prefix, dev0, e.Line,
		fstabLineWith(e, "UUID=<uuid>", extra...))
}

// fstabLineWith formats e with another spec (when not empty) and extra
// options appended if missing; cloud-init's ownership tag is dropped so
// that it does not rewrite a line the operator fixed.
func fstabLineWith(e fstab.Entry, spec string, extra ...string) string {
	if spec != "" {
		e.Spec = spec
	}
	var opts []string
	for _, o := range e.Options {
		if o != "comment=cloudconfig" {
			opts = append(opts, o)
		}
	}
	if len(opts) == 0 {
		opts = []string{"defaults"}
	}
	for _, x := range extra {
		name, _, _ := strings.Cut(x, "=")
		if !e.HasOption(name) {
			opts = append(opts, x)
		}
	}
	e.Options = opts
	return e.String()
}

// referenced is the identifiers the judged entries name, as "KIND=value".
func (r *fstabJudge) referenced(entries []fstab.Entry) map[string]bool {
	ids := map[string]bool{}
	for _, e := range entries {
		if src := fstab.ClassifySource(e); src.ID != "" {
			ids[string(src.ID)+"="+src.Value] = true
		}
	}
	return ids
}

// duplicates reports identifiers shared by unrelated devices that fstab
// does not reference (referenced ones fail as ambiguous).
func (r *fstabJudge) duplicates(referenced map[string]bool) []check.Finding {
	var out []check.Finding
	for _, d := range r.inv.Duplicates() {
		if referenced[string(d.Kind)+"="+d.Value] {
			continue
		}
		var paths []string
		var ms []Match
		for _, x := range d.Devices {
			paths = append(paths, x.Path())
			ms = append(ms, Match{Device: x})
		}
		victim := r.likelyCopy(ms)
		out = append(out, check.New(check.Warn, codeFstabDuplicate,
			fmt.Sprintf("%s %s is carried by %d devices: %s", d.Kind, d.Value, len(paths), strings.Join(paths, ", ")),
			map[string]string{"id_kind": string(d.Kind), "id_value": d.Value, "devices": strings.Join(paths, ", "),
				"why": "a cloned or restored disk is attached next to its original; mounting by this identifier picks one at random"},
			fmt.Sprintf("give the copy a new identity (%s) before anything refers to it", newIdentityCommand(d.Kind, victim, r.inv))))
	}
	return out
}

// likelyCopy picks the device to re-identify: one that is not mounted
// (the attached copy), else the last one.
func (r *fstabJudge) likelyCopy(ms []Match) *BlockDevice {
	mounted := map[*BlockDevice]bool{}
	if r.mountsOK {
		for _, m := range r.f.Mounts {
			if d := mountDevice(r.inv, m, r.f.device); d != nil {
				mounted[d] = true
			}
		}
	}
	sorted := append([]Match(nil), ms...)
	sort.SliceStable(sorted, func(i, j int) bool { return !mounted[sorted[i].Device] && mounted[sorted[j].Device] })
	if !mounted[sorted[0].Device] {
		return sorted[0].Device
	}
	return ms[len(ms)-1].Device
}

// fsReidentify holds, per filesystem type, the commands that give a
// filesystem a new UUID and a new label; %s is the device.
var fsReidentify = func() map[string][2]string {
	ext := [2]string{"`tune2fs -U random %s` while unmounted", "`e2label %s NEWLABEL`"}
	return map[string][2]string{
		"ext2": ext, "ext3": ext, "ext4": ext,
		"xfs":   {"`xfs_admin -U generate %s` while unmounted", "`xfs_admin -L NEWLABEL %s`"},
		"btrfs": {"`btrfstune -u %s` while unmounted", "`btrfs filesystem label %s NEWLABEL`"},
		"vfat":  {"`fatlabel -i -r %s`", "`fatlabel %s NEWLABEL`"},
		"swap":  {"`swaplabel -U $(uuidgen) %s`", "`swaplabel -L NEWLABEL %s`"},
	}
}()

// newIdentityCommand says how to give device d a new identifier of kind k.
func newIdentityCommand(k fstab.IDKind, d *BlockDevice, inv *Inventory) string {
	dev := d.Path()
	typ := ""
	if d.FS != nil {
		typ = d.FS.Type
	}
	if k == fstab.IDUUID || k == fstab.IDLabel {
		cmds, known := fsReidentify[typ]
		switch {
		case known && k == fstab.IDUUID:
			return fmt.Sprintf(cmds[0], dev)
		case known:
			return fmt.Sprintf(cmds[1], dev)
		case k == fstab.IDUUID:
			return "the filesystem's tool for a new UUID on " + dev
		}
		return "a new label on " + dev
	}
	whole := inv.Disk(d)
	if id, ok := d.ID(fstab.IDPartUUID); ok && strings.Contains(strings.Join(id.Sources, ","), SourceMBR) {
		return fmt.Sprintf("`sfdisk --disk-id %s 0x$(openssl rand -hex 4)`", whole.Path())
	}
	return fmt.Sprintf("`sfdisk --part-uuid %s %d $(uuidgen)`", whole.Path(), d.Partition)
}

// mountUnit is systemd's unit name for a mount point (systemd-escape --path).
func mountUnit(p string) string {
	p = strings.Trim(path.Clean(p), "/")
	if p == "" {
		return "-.mount"
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '/':
			b.WriteByte('-')
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == ':', c == '_', c == '.' && i > 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, `\x%02x`, c)
		}
	}
	return b.String() + ".mount"
}
