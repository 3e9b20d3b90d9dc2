package fstab

// The remediations of the fstab check: the exact line, option or command
// that fixes what a finding reports.

import (
	"fmt"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/blockdev"
	fstabfile "github.com/guestcheck/guestcheck/internal/parse/fstab"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// mountPointFix is the remediation for a relative or empty mount point.
func mountPointFix(e fstabfile.Entry) string {
	line := fmt.Sprint(e.Line)
	if e.MountPoint == "" {
		return codeFstabMountPoint.CaseFix("when the mount point is empty", "line", line)
	}
	e.MountPoint = path.Clean("/" + e.MountPoint)
	return codeFstabMountPoint.Fixf("line", line, "fstab_line", fstabLineWith(e, ""))
}

// persistentFix builds code's remediation for a kernel-name or by-path
// entry: the exact line to use, from the probed identity of the device.
func (r *fstabJudge) persistentFix(code runner.Code, v fstabEntryView, dev *blockdev.BlockDevice, addNofail bool) string {
	e := v.e
	var extra []string
	if addNofail {
		extra = []string{"nofail"}
	}
	var spec string
	if dev != nil {
		if id, ok := dev.ID(fstabfile.IDUUID); ok {
			spec = "UUID=" + id.Value
		} else if id, ok := dev.ID(fstabfile.IDPartUUID); ok {
			spec = "PARTUUID=" + id.Value
		}
	}
	probed := spec != ""
	if !probed {
		spec = "UUID=<uuid>"
	}
	devPath := v.src.Value
	if dev != nil {
		devPath = dev.Path()
	}
	kv := []string{"line", fmt.Sprint(e.Line), "fstab_line", fstabLineWith(e, spec, extra...), "device", devPath}
	// Under an image root, blkid would read the host's own disk of that
	// name: the UUID is the one the image's build gave the filesystem.
	// cloud-init rewrites a line it wrote from user-data, so that is
	// where its fix starts.
	switch {
	case v.cloud && !r.f.Live:
		return code.CaseFix(caseCloudImage, kv...)
	case v.cloud && !probed:
		return code.CaseFix(caseCloudUnprobed, kv...)
	case v.cloud:
		return code.CaseFix(caseCloud, kv...)
	case !probed && r.f.Live:
		return code.CaseFix(caseUnprobed, kv...)
	}
	return code.FixOn(r.f.Live, kv...)
}

// fstabLineWith formats e with another spec (when not empty) and extra
// options appended if missing; cloud-init's ownership tag is dropped so
// that it does not rewrite a line the operator fixed.
func fstabLineWith(e fstabfile.Entry, spec string, extra ...string) string {
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
func newIdentityCommand(k fstabfile.IDKind, d *blockdev.BlockDevice, inv *blockdev.Inventory) string {
	dev := d.Path()
	typ := ""
	if d.FS != nil {
		typ = d.FS.Type
	}
	if k == fstabfile.IDUUID || k == fstabfile.IDLabel {
		cmds, known := fsReidentify[typ]
		switch {
		case known && k == fstabfile.IDUUID:
			return fmt.Sprintf(cmds[0], dev)
		case known:
			return fmt.Sprintf(cmds[1], dev)
		case k == fstabfile.IDUUID:
			return "the filesystem's tool for a new UUID on " + dev
		}
		return "a new label on " + dev
	}
	whole := inv.Disk(d)
	if id, ok := d.ID(fstabfile.IDPartUUID); ok && strings.Contains(strings.Join(id.Sources, ","), blockdev.SourceMBR) {
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

// unreadableFix words the fix for an /etc/fstab that could not be read:
// a permission error says "run as root" only to a user who is not root,
// since root that is denied has a mode, a security policy or a root that
// squashes root in its way.
func unreadableFix(isRoot bool, err error) string {
	switch {
	case runner.IsPermission(err) && !isRoot:
		return codeFstabUnreadable.Fixf()
	case runner.IsPermission(err):
		return codeFstabUnreadable.CaseFix(runner.WhenRootDenied)
	}
	return codeFstabUnreadable.CaseFix("when the read fails otherwise", "error", err.Error())
}
