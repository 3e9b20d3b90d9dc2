package image

import (
	"bytes"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/blockid"
	"github.com/guestcheck/guestcheck/internal/fact/blockid/blocktest"
	"github.com/guestcheck/guestcheck/internal/parse/fstab"
)

const (
	typeLinuxData = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
	typeRootAMD64 = "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709"
)

// disk lays out a GPT and puts each filesystem header at its partition.
func buildDisk(t *testing.T, parts []blocktest.GPTPart, fss map[int][]byte) []byte {
	t.Helper()
	g := blocktest.GPT{DiskGUID: "0c8c4cd2-0ad6-4b5f-a1b7-3b1b5a0bc2e1", Parts: parts}
	img := g.Image()
	end := uint64(0)
	for _, p := range parts {
		if p.Last > end {
			end = p.Last
		}
	}
	full := make([]byte, (end+34)*512)
	copy(full, img)
	for i, b := range fss {
		copy(full[parts[i].First*512:], b)
	}
	return full
}

func ext4(uuid, label string) []byte {
	return blocktest.Ext{Type: "ext4", UUID: uuid, Label: label, Blocks: 1024}.Image()
}

func TestScanDiskAndChooseRoot(t *testing.T) {
	lvm := make([]byte, 1024)
	copy(lvm[512:], "LABELONE")
	copy(lvm[512+24:], "LVM2 001")
	parts := []blocktest.GPTPart{
		{Type: typeESP, UUID: "8c1f2b0e-5d2a-4c3e-9a11-000000000001", Name: "esp", First: 2048, Last: 4095},
		{Type: typeXBOOTLDR, UUID: "8c1f2b0e-5d2a-4c3e-9a11-000000000002", Name: "boot", First: 4096, Last: 6143},
		{Type: typeLinuxData, UUID: "8c1f2b0e-5d2a-4c3e-9a11-000000000003", Name: "data", First: 6144, Last: 8191},
		{Type: typeRootAMD64, UUID: "8c1f2b0e-5d2a-4c3e-9a11-000000000004", Name: "root", First: 8192, Last: 10239},
		{Type: typeLinuxData, UUID: "8c1f2b0e-5d2a-4c3e-9a11-000000000005", Name: "pv", First: 10240, Last: 12287},
	}
	img := buildDisk(t, parts, map[int][]byte{
		1: ext4("11111111-2222-3333-4444-555555555555", "boot"),
		2: ext4("22222222-2222-3333-4444-555555555555", "data"),
		3: ext4("33333333-2222-3333-4444-555555555555", "root"),
		4: lvm,
	})
	got, table, err := ScanDisk(bytes.NewReader(img), int64(len(img)))
	if err != nil || table != "gpt" || len(got) != 5 {
		t.Fatalf("%v %s %d", err, table, len(got))
	}
	if got[4].Container != "lvm" || got[1].FS.Type != "ext4" || got[1].FS.UUID != "11111111-2222-3333-4444-555555555555" || got[1].Offset != 4096*512 {
		t.Errorf("parts %+v", got)
	}
	c, err := ChooseRoot(got, "amd64")
	if err != nil || c.Index != 3 || !strings.Contains(c.How, "marks it as the Linux root for amd64 (Discoverable Partitions Specification)") {
		t.Errorf("amd64: %+v %v", c, err)
	}
	// Another architecture has no DPS root here: every Linux filesystem
	// is a candidate for the os-release probe; the PV is not.
	c, err = ChooseRoot(got, "arm64")
	if err != nil || c.Index != -1 || len(c.Candidates) != 3 {
		t.Errorf("arm64: %+v %v", c, err)
	}
	// Only an LVM PV: refused with the reason.
	if _, err := ChooseRoot([]Part{got[0], got[4]}, "amd64"); err == nil || !strings.Contains(err.Error(), "LVM") {
		t.Errorf("LVM only: %v", err)
	}
	// fstab resolution, and DPS automatic mounts where fstab is silent.
	entries, _ := fstab.Parse([]byte("UUID=22222222-2222-3333-4444-555555555555 /var ext4 defaults 0 2\n" +
		"PARTLABEL=nope /boot/efi vfat defaults 0 0\n/dev/vdb1 /srv ext4 defaults 0 0\n"))
	ms, notes := PlanMounts(entries, got, 3)
	var paths []string
	for _, m := range ms {
		paths = append(paths, m.Path+"="+got[m.Part].PartLabel)
	}
	if strings.Join(paths, " ") != "/var=data /boot=boot" {
		t.Errorf("mounts %q", paths)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "PARTLABEL=nope") {
		t.Errorf("notes %q", notes)
	}
	// / named by a UUID the root filesystem does not have: every clone
	// drops to emergency mode, and the note says what to write instead.
	rootUUID := "33333333-2222-3333-4444-555555555555"
	for _, tc := range []struct{ fstab, want string }{
		{"UUID=" + rootUUID + " / ext4 defaults 0 1\n", ""},
		{"UUID=\"" + strings.ToUpper(rootUUID) + "\" / ext4 defaults 0 1\n", ""},
		{"PARTLABEL=root / ext4 defaults 0 1\n", ""},
		{"/dev/vda4 / ext4 defaults 0 1\n", ""}, // the guest's name: not knowable here
		{"LABEL=root / ext4 defaults 0 1\n", ""},
		{"UUID=0f7e2c4a-5b1d-4e2f-9a3b-7c6d5e4f3a2b / ext4 defaults 0 1\n",
			"the image's /etc/fstab line 1: / is mounted from UUID=0f7e2c4a-5b1d-4e2f-9a3b-7c6d5e4f3a2b, which no filesystem of this image carries: " +
				"every clone waits for it at boot, then drops to emergency mode; write UUID=" + rootUUID + " on that line (partition 4 (ext4), the root filesystem)"},
		{"# comment\n/dev/disk/by-uuid/22222222-2222-3333-4444-555555555555 / ext4 defaults 0 1\n",
			"the image's /etc/fstab line 2: / is mounted from /dev/disk/by-uuid/22222222-2222-3333-4444-555555555555, which is partition 3 (ext4), not the root filesystem: " +
				"every clone waits for it at boot, then drops to emergency mode; write UUID=" + rootUUID + " on that line (partition 4 (ext4), the root filesystem)"},
	} {
		entries, _ := fstab.Parse([]byte(tc.fstab))
		_, notes := PlanMounts(entries, got, 3)
		if tc.want == "" && len(notes) != 0 || tc.want != "" && (len(notes) != 1 || notes[0] != tc.want) {
			t.Errorf("%q: notes %q, want %q", tc.fstab, notes, tc.want)
		}
	}
	// The ESP has no vfat header here, so no DPS /efi mount.
	for _, m := range ms {
		if m.Path == "/efi" {
			t.Error("mounted a partition with no filesystem")
		}
	}
}

func TestResolveSpec(t *testing.T) {
	parts := []Part{
		{Number: 1, PartUUID: "aaaa-1", PartLabel: "EFI system", FS: blockid.Superblock{Type: "vfat", UUID: "ABCD-1234", Label: "ESP"}},
		{Number: 2, PartUUID: "bbbb-2", PartLabel: "root", FS: blockid.Superblock{Type: "ext4", UUID: "0f7e-uuid", Label: "rootfs"}},
	}
	for spec, want := range map[string]int{
		"UUID=abcd-1234": 0, "UUID=\"0F7E-UUID\"": 1, "LABEL=rootfs": 1, "PARTUUID=BBBB-2": 1,
		"PARTLABEL=root": 1, "/dev/disk/by-uuid/ABCD-1234": 0, "/dev/disk/by-partlabel/EFI\\x20system": 0,
		"LABEL=ROOTFS": -1, "/dev/vda2": -1, "UUID=": -1, "tmpfs": -1,
	} {
		got, ok := ResolveSpec(spec, parts)
		if got != want || ok != (want >= 0) {
			t.Errorf("%s: %d %v, want %d", spec, got, ok, want)
		}
	}
}

func TestParseInfo(t *testing.T) {
	in, err := parseInfo([]byte(`{"virtual-size": 3221225472, "filename": "/proc/self/fd/3", "format": "qcow2",
		"full-backing-filename": "/proc/self/fd/base.qcow2", "backing-filename": "base.qcow2", "backing-filename-format": "qcow2",
		"encrypted": true, "format-specific": {"type": "qcow2", "data": {"data-file": "df.raw"}}}`))
	if err != nil || in.Format != "qcow2" || in.VirtualSize != 3221225472 || in.BackingName != "base.qcow2" ||
		in.BackingFormat != "qcow2" || !in.Encrypted || in.FormatSpecific.Data.DataFile != "df.raw" {
		t.Errorf("%+v %v", in, err)
	}
	for _, bad := range []string{``, `[]`, `{}`, `{"format": "raw"}`, `[{"virtual-size": 1, "format": "raw"}]`} {
		if _, err := parseInfo([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseInfo(f *testing.F) {
	f.Add([]byte(`{"virtual-size": 1, "filename": "a", "format": "raw"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := parseInfo(b)
		if err == nil && (in.Format == "" || in.VirtualSize <= 0) {
			t.Fatalf("accepted %q as %+v", b, in)
		}
	})
}

func FuzzScanDisk(f *testing.F) {
	f.Add(blocktest.GPT{DiskGUID: "0c8c4cd2-0ad6-4b5f-a1b7-3b1b5a0bc2e1", Parts: []blocktest.GPTPart{{Type: typeLinuxData, UUID: "8c1f2b0e-5d2a-4c3e-9a11-000000000001", First: 34, Last: 40}}}.Image())
	f.Add(ext4("11111111-2222-3333-4444-555555555555", "x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		parts, _, err := ScanDisk(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		for _, p := range parts {
			if p.Offset < 0 || p.Size < 0 || p.Offset+p.Size > int64(len(b)) && p.Number > 0 {
				t.Fatalf("partition outside the disk: %+v", p)
			}
		}
		ChooseRoot(parts, "amd64")
	})
}
