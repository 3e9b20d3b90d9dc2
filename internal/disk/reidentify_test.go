package disk

import "testing"

// TestNewIdentityCommand holds the remediation's command for each
// filesystem type and identifier kind, and the fallbacks for an unknown
// type or no probed filesystem.
func TestNewIdentityCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ  string // "" means no probed filesystem
		kind IDKind
		want string
	}{
		{"ext4", IDUUID, "`tune2fs -U random /dev/vdb1` while unmounted"},
		{"ext2", IDLabel, "`e2label /dev/vdb1 NEWLABEL`"},
		{"xfs", IDUUID, "`xfs_admin -U generate /dev/vdb1` while unmounted"},
		{"xfs", IDLabel, "`xfs_admin -L NEWLABEL /dev/vdb1`"},
		{"btrfs", IDUUID, "`btrfstune -u /dev/vdb1` while unmounted"},
		{"btrfs", IDLabel, "`btrfs filesystem label /dev/vdb1 NEWLABEL`"},
		{"vfat", IDUUID, "`fatlabel -i -r /dev/vdb1`"},
		{"vfat", IDLabel, "`fatlabel /dev/vdb1 NEWLABEL`"},
		{"swap", IDUUID, "`swaplabel -U $(uuidgen) /dev/vdb1`"},
		{"swap", IDLabel, "`swaplabel -L NEWLABEL /dev/vdb1`"},
		{"ntfs", IDUUID, "the filesystem's tool for a new UUID on /dev/vdb1"},
		{"", IDLabel, "a new label on /dev/vdb1"},
	} {
		d := &BlockDevice{Name: "vdb1", Partition: 1, Parent: "vdb"}
		if tc.typ != "" {
			d.FS = &Superblock{Type: tc.typ}
		}
		if got := newIdentityCommand(tc.kind, d, nil); got != tc.want {
			t.Errorf("%s %v: %q, want %q", tc.typ, tc.kind, got, tc.want)
		}
	}
}
