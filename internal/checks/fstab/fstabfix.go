package fstabcheck

// The remediations of the fstab check: the exact line, option or command
// that fixes what a finding reports.

import (
	"fmt"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/blockdev"
	"github.com/guestcheck/guestcheck/internal/parse/fstab"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// mountPointFix is the remediation for a relative or empty mount point.
func mountPointFix(e fstab.Entry) string {
	if e.MountPoint == "" {
		return fmt.Sprintf("give line %d an absolute mount point, or comment the line out", e.Line)
	}
	e.MountPoint = path.Clean("/" + e.MountPoint)
	return fmt.Sprintf("write the mount point of line %d as an absolute path (`%s`), or comment the line out",
		e.Line, fstabLineWith(e, ""))
}

// persistentFix builds the remediation of a kernel-name or by-path entry:
// the exact line to use, from the probed identity of the device.
func (r *fstabJudge) persistentFix(v fstabEntryView, dev *blockdev.BlockDevice, addNofail bool) string {
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
	line := fstabLineWith(e, "UUID=<uuid>", extra...)
	// Under an image root, blkid would read the host's own disk of that
	// name: the UUID is the one the image's build gave the filesystem.
	return runner.Fix(r.f.Live,
		fmt.Sprintf("%srun `blkid %s` and replace line %d with `%s`, using the UUID it prints", prefix, dev0, e.Line, line),
		fmt.Sprintf("%sreplace line %d of /etc/fstab in the image with `%s`, using the UUID the image's build gave that filesystem (or LABEL= a label it sets)", prefix, e.Line, line))
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
func newIdentityCommand(k fstab.IDKind, d *blockdev.BlockDevice, inv *blockdev.Inventory) string {
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
	if id, ok := d.ID(fstab.IDPartUUID); ok && strings.Contains(strings.Join(id.Sources, ","), blockdev.SourceMBR) {
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
