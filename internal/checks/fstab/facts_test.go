package fstab

import (
	"context"
	"errors"
	iofs "io/fs"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/blockdev"
	fstabfile "github.com/guestcheck/guestcheck/internal/parse/fstab"
	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
	"github.com/guestcheck/guestcheck/internal/testenv/blockdevtest"
)

// liveFacts are the facts of a VM with its root on vda1 and a data disk
// vdb, both mounted, for an fstab of content.
func liveFacts(t *testing.T, content string) FstabFacts {
	t.Helper()
	vda, vda1 := &blockdev.BlockDevice{Name: "vda", Major: 254, Size: 8 << 30}, blockdevtest.Dev("vda1", "vda", 1, 1, blockdevtest.RootUUID)
	vdb := blockdevtest.Dev("vdb", "", 0, 16, blockdevtest.DataUUID)
	ms, errs := mountinfo.Parse([]byte("1 0 254:1 / / rw - ext4 /dev/vda1 rw\n2 1 254:16 / /data rw - ext4 /dev/vdb rw\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	f := FstabFacts{File: "/etc/fstab", Data: []byte(content), Live: true, IsRoot: true, Mounts: ms, SwapsOK: true,
		Inventory: blockdev.NewInventory(true, vda, vda1, vdb),
		Paths:     map[string]PathDevice{"/dev/vdb": {Device: vdb}, "/dev/vda1": {Device: vda1}}, Missing: map[string]bool{}}
	f.Entries, f.Problems = fstabfile.Parse(f.Data)
	return f
}

// TestJudgeFstabOnFacts judges hand-made facts: no root, no /sys, no
// /dev, so every finding follows from the value alone.
func TestJudgeFstabOnFacts(t *testing.T) {
	root := "UUID=" + blockdevtest.RootUUID + " / ext4 defaults 0 1\n"
	for _, c := range []struct {
		name, fstab string
		edit        func(*FstabFacts)
		want        map[string]string // line -> codes
	}{
		{"persistent names pass", root + "UUID=" + blockdevtest.DataUUID + " /data ext4 defaults,nofail 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "pass:fstab-entry-ok"}},
		{"data disk without nofail", root + "UUID=" + blockdevtest.DataUUID + " /data ext4 defaults 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "warn:fstab-data-without-nofail"}},
		{"kernel name of a data disk", root + "/dev/vdb /data ext4 defaults 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "fail:fstab-kernel-device-name"}},
		{"kernel name of the root disk", "/dev/vda1 / ext4 defaults 0 1\n", nil,
			map[string]string{"1": "fail:fstab-kernel-device-name"}},
		{"unknown UUID", root + "UUID=0a1b2c3d-0000-4000-8000-0000000000ff /srv ext4 defaults 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "fail:fstab-device-missing warn:fstab-data-without-nofail"}},
		{"path not gathered does not exist", root + "/dev/mapper/gone /srv ext4 defaults,nofail 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "warn:fstab-device-missing"}},
		{"missing swap file", root + "/swapfile none swap sw 0 0\n", func(f *FstabFacts) { f.Missing["/swapfile"] = true },
			map[string]string{"1": "pass:fstab-entry-ok", "2": "warn:fstab-device-missing"}},
		{"swap not active", root + "/swapfile none swap sw 0 0\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "warn:fstab-not-mounted"}},
		{"not mounted", root + "UUID=" + blockdevtest.DataUUID + " /srv ext4 defaults,nofail 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "warn:fstab-not-mounted"}},
		{"syntax and mount point", root + "garbage\n/dev/vdb data ext4 defaults,nofail 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "fail:fstab-syntax-error", "3": "fail:fstab-mount-point-invalid"}},
		{"not live", "/dev/vdb /data ext4 defaults 0 2\n", func(f *FstabFacts) {
			*f = FstabFacts{File: f.File, Data: f.Data, Entries: f.Entries, NotLiveReason: "needs the running system"}
		}, map[string]string{"": "skip:fstab-not-live", "1": "fail:fstab-kernel-device-name"}},
		{"malformed UUID", root + "UUID=bad-uuid /boot ext4 defaults 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "fail:fstab-id-malformed"}},
		{"malformed PARTUUID with nofail", root + "/dev/disk/by-partuuid/0ffe-01 /srv ext4 defaults,nofail 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "warn:fstab-id-malformed"}},
		{"malformed UUID, not live", "UUID=bad-uuid /boot ext4 defaults 0 2\nUUID=ABCD-1234 /boot/efi vfat umask=0077 0 1\n", func(f *FstabFacts) {
			*f = FstabFacts{File: f.File, Data: f.Data, Entries: f.Entries, NotLiveReason: "needs the running system"}
		}, map[string]string{"": "skip:fstab-not-live", "1": "fail:fstab-id-malformed", "2": "pass:fstab-entry-ok"}},
		{"deadline", root + "UUID=" + blockdevtest.DataUUID + " /data ext4 defaults,nofail 0 2\n", func(f *FstabFacts) {
			f.Deadline, f.Cut = context.DeadlineExceeded, 1
		}, map[string]string{"1": "pass:fstab-entry-ok", "": "error:fstab-state-unreadable"}},
		{"inventory unreadable", root, func(f *FstabFacts) { f.Inventory, f.InventoryErr = nil, errors.New("no /sys") },
			map[string]string{"": "error:fstab-state-unreadable", "1": "pass:fstab-entry-ok"}},
		{"absent", "", func(f *FstabFacts) {
			f.ReadErr = &iofs.PathError{Op: "open", Path: "/etc/fstab", Err: iofs.ErrNotExist}
		}, map[string]string{"": "skip:fstab-absent"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := liveFacts(t, c.fstab)
			if c.edit != nil {
				c.edit(&f)
			}
			fs := JudgeFstab(f)
			checktest.Conventions(t, fs, Codes)
			blockdevtest.WantGroups(t, fstabByLine(fs), c.want)
		})
	}
}

// TestJudgeFstabMalformedID: the message says what is wrong with the
// value and what the boot does; the fix, live or in an image, says what
// to write instead.
func TestJudgeFstabMalformedID(t *testing.T) {
	f := liveFacts(t, "UUID=bad-uuid /boot ext4 defaults 0 2\n")
	got := JudgeFstab(f)
	if len(got) != 1 {
		t.Fatalf("findings %+v", got)
	}
	want := "UUID=bad-uuid for /boot is no UUID a device can carry (the value holds 'u', which is not a hexadecimal digit): " +
		"systemd waits for it (90 s by default), then the boot drops to emergency mode"
	if got[0].Message != want || got[0].Detail["reason"] != "the value holds 'u', which is not a hexadecimal digit" {
		t.Errorf("message %q, detail %v", got[0].Message, got[0].Detail)
	}
	if fix := got[0].Remediation; fix != "Replace `UUID=bad-uuid` on line 1 of `/etc/fstab` with `UUID=` and the value `blkid -s UUID -o value DEVICE` prints for the filesystem it means, or comment the line out." {
		t.Errorf("live fix %q", fix)
	}
	f = FstabFacts{File: f.File, Data: f.Data, Entries: f.Entries, NotLiveReason: "needs the running system"}
	for _, g := range JudgeFstab(f) {
		if g.Code == codeFstabMalformedID.ID && !strings.Contains(g.Remediation, "in the image with `UUID=` and the value the image's build gave") {
			t.Errorf("image fix %q", g.Remediation)
		}
	}
}
