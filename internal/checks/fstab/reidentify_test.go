package fstab

import (
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/blockdev"
	"github.com/guestcheck/guestcheck/internal/fact/blockid"
	fstabfile "github.com/guestcheck/guestcheck/internal/parse/fstab"
)

// TestNewIdentityCommand holds the remediation's command for each
// filesystem type and identifier kind, and the fallbacks for an unknown
// type or no probed filesystem.
func TestNewIdentityCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ  string // "" means no probed filesystem
		kind fstabfile.IDKind
		want string
	}{
		{"ext4", fstabfile.IDUUID, "`tune2fs -U random /dev/vdb1` while unmounted"},
		{"ext2", fstabfile.IDLabel, "`e2label /dev/vdb1 NEWLABEL`"},
		{"xfs", fstabfile.IDUUID, "`xfs_admin -U generate /dev/vdb1` while unmounted"},
		{"xfs", fstabfile.IDLabel, "`xfs_admin -L NEWLABEL /dev/vdb1`"},
		{"btrfs", fstabfile.IDUUID, "`btrfstune -u /dev/vdb1` while unmounted"},
		{"btrfs", fstabfile.IDLabel, "`btrfs filesystem label /dev/vdb1 NEWLABEL`"},
		{"vfat", fstabfile.IDUUID, "`fatlabel -i -r /dev/vdb1`"},
		{"vfat", fstabfile.IDLabel, "`fatlabel /dev/vdb1 NEWLABEL`"},
		{"swap", fstabfile.IDUUID, "`swaplabel -U $(uuidgen) /dev/vdb1`"},
		{"swap", fstabfile.IDLabel, "`swaplabel -L NEWLABEL /dev/vdb1`"},
		{"ntfs", fstabfile.IDUUID, "the filesystem's tool for a new UUID on /dev/vdb1"},
		{"", fstabfile.IDLabel, "a new label on /dev/vdb1"},
	} {
		d := &blockdev.BlockDevice{Name: "vdb1", Partition: 1, Parent: "vdb"}
		if tc.typ != "" {
			d.FS = &blockid.Superblock{Type: tc.typ}
		}
		if got := newIdentityCommand(tc.kind, d, nil); got != tc.want {
			t.Errorf("%s %v: %q, want %q", tc.typ, tc.kind, got, tc.want)
		}
	}
}
