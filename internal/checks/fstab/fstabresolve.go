package fstab

// Resolution: what an fstab entry's fs_spec names on the live system, and
// the findings about a name that matches no device or more than one.

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/blockdev"
	fstabfile "github.com/guestcheck/guestcheck/internal/parse/fstab"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// fstabResolution is what an fs_spec resolved to on the live system.
type fstabResolution struct {
	dev      *blockdev.BlockDevice
	sources  []string
	matches  []blockdev.Match // when more than one
	missing  string           // why it is missing, when it is
	skip     string           // why it could not be judged
	unread   string           // the devices that could not be read, when they are why
	foldHint []blockdev.Match // case-insensitive matches of a missing identifier
}

// detailPairs is the evidence about the resolved device.
func (res fstabResolution) detailPairs() []string {
	if res.dev == nil {
		return nil
	}
	d := res.dev
	kv := []string{"device", d.Path(), "device_size", blockdev.IECBytes(d.Size), "device_size_bytes", fmt.Sprint(d.Size),
		"resolved_by", strings.Join(res.sources, ", ")}
	if d.FS != nil {
		kv = append(kv, "fs_type", d.FS.Type, "fs_uuid", d.FS.UUID, "fs_label", d.FS.Label)
	}
	if id, ok := d.ID(fstabfile.IDPartUUID); ok {
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
				res.unread = strings.Join(unread, ", ")
				res.skip = fmt.Sprintf("no readable device has %s %s, but %s could not be read and there are no /dev/disk links to consult",
					v.src.ID, v.src.Value, res.unread)
				return res
			}
			res.missing = fmt.Sprintf("no block device has %s %s", v.src.ID, v.src.Value)
			res.foldHint = r.inv.LookupFold(v.src.ID, v.src.Value)
		case 1:
			res.dev, res.sources = ms[0].Device, ms[0].Sources
		default:
			res.matches = ms
		}
	case v.src.Kind == fstabfile.SourceDiskLink: // by-id, by-path: only udev knows them
		if !r.inv.UdevLinks {
			res.skip = "/dev/disk does not exist (udev is not running), so " + v.src.Value + " cannot be resolved"
			return res
		}
		r.resolvePath(v.src.Value, &res)
	case v.src.Kind == fstabfile.SourceDevice:
		r.resolvePath(v.src.Value, &res)
	case v.src.Kind == fstabfile.SourceFile:
		if r.f.Missing[v.src.Value] {
			res.missing = v.src.Value + " does not exist"
		}
	}
	return res
}

// resolvePath resolves a device path through the gathered paths.
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

// resolutionFindings reports a name that is ambiguous, missing or cannot be judged.
func (r *fstabJudge) resolutionFindings(v fstabEntryView, res fstabResolution) []runner.Finding {
	e := v.e
	switch {
	case res.skip != "":
		fix := codeFstabUnverifiable.Fixf("spec", e.Spec)
		if res.unread != "" {
			fix = codeFstabUnverifiable.CaseFix("when some devices could not be read", "devices", res.unread, "spec", e.Spec)
		}
		return []runner.Finding{codeFstabUnverifiable.New(runner.Skip, fmt.Sprintf("%s: %s", v.what, res.skip), v.with(), fix)}
	case len(res.matches) > 1:
		var paths []string
		for _, m := range res.matches {
			paths = append(paths, m.Device.Path())
		}
		victim := r.likelyCopy(res.matches)
		return []runner.Finding{codeFstabAmbiguous.New(runner.Fail,
			fmt.Sprintf("%s for %s matches %d block devices: %s", e.Spec, v.what, len(paths), strings.Join(paths, ", ")),
			v.with("devices", strings.Join(paths, ", "), "why", "a cloned or restored disk carries the same identifier; which one is mounted depends on probe order"),
			codeFstabAmbiguous.Fixf("command", newIdentityCommand(v.src.ID, victim, r.inv), "spec", e.Spec))}
	case res.missing != "":
		st := runner.Fail
		why := "systemd waits for the device (90 s by default), then the boot drops to emergency mode"
		switch {
		case v.optional:
			st, why = runner.Warn, "nofail, noauto or x-systemd.automount: the boot goes on without it"
		case e.IsSwap():
			st, why = runner.Warn, "the boot waits for the device (90 s by default), then continues without this swap"
		}
		kv := []string{"why", why}
		if len(res.foldHint) > 0 {
			kv = append(kv, "case_mismatch", fmt.Sprintf("%s has it with different case; mount compares exactly", res.foldHint[0].Device.Path()))
		}
		line := fmt.Sprint(e.Line)
		fix := codeFstabMissing.CaseFix("when the entry has `nofail`, `noauto` or `x-systemd.automount`",
			"spec", e.Spec, "line", line)
		if !v.optional {
			spec := ""
			if v.src.Kind == fstabfile.SourceDevice && fstabfile.IsKernelDeviceName(v.src.Value) {
				spec = "UUID=<uuid>" // never suggest keeping a kernel name
			}
			fix = codeFstabMissing.Fixf("spec", e.Spec, "line", line,
				"fstab_line", fstabLineWith(e, spec, "nofail", "x-systemd.device-timeout=10s"))
		}
		return []runner.Finding{codeFstabMissing.New(st,
			fmt.Sprintf("%s for %s is not present: %s", e.Spec, v.what, res.missing), v.with(kv...), fix)}
	}
	return nil
}
