package image

import (
	"reflect"
	"testing"

	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
)

func TestRootTrimTargets(t *testing.T) {
	ms, errs := mountinfo.Parse([]byte(`1 0 254:1 / / rw - ext4 /dev/vda1 rw
40 1 7:0 / /mnt/root rw - ext4 /dev/loop0 rw
41 40 7:1 / /mnt/root/boot rw - ext4 /dev/loop1 rw
42 40 7:0 /var /mnt/root/srv rw - ext4 /dev/loop0 rw
43 40 7:2 /sub /mnt/root/bind rw - xfs /dev/loop2 rw
44 40 0:30 / /mnt/root/tmp rw - tmpfs tmpfs rw
45 41 7:3 / /mnt/root/boot/efi rw - vfat /dev/loop3 rw
46 40 7:1 / /mnt/root/boot2 rw - ext4 /dev/loop1 rw
47 1 7:4 / /mnt/rootx rw - ext4 /dev/loop4 rw
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got := rootTrimTargets("/mnt/root", ms)
	want := []TrimTarget{{"/", "/mnt/root"}, {"/boot", "/mnt/root/boot"}, {"/boot/efi", "/mnt/root/boot/efi"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rootTrimTargets = %+v\nwant %+v", got, want)
	}
}
