package fstab

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseFstab(t *testing.T) {
	in := strings.Join([]string{
		"# /etc/fstab: static file system information.",
		"",
		"UUID=0a1b2c3d-0000-4000-8000-000000000001 / ext4 errors=remount-ro 0 1",
		"  \t# indented comment",
		"LABEL=my\\040data /srv/my\\040data xfs defaults,nofail",
		"/dev/vdb none swap sw,comment=cloudconfig 0 0",
		"/dev/vdc /mnt",
		"tmpfs\t/tmp\ttmpfs\tmode=1777,context=\"system_u:object_r:tmp_t:s0,c1\"\t0\t0\r",
		"/dev/vdd /x ext4 defaults 0 2 extra # comment",
		"/dev/vde /y ext4 defaults zero 2",
		"/dev/vdf relative ext4 defaults 0 2",
		"host:/export /nfs nfs4 _netdev 0 -1",
		"PARTUUID=\"5d0c0ffe-01\" /boot vfat umask=0077 0 2",
		"/dev/vdg /z xfs",
		"/dev/vdh /n\x00ul ext4 defaults",
		"/dev/vdi /e\\000x ext4 defaults 0 0\r\r",
		"/dev/vdj /f ext4 defaults 0 99999999999999999999 x",
		"garbage",
		"/dev/vdk /k ext4 defaults 0 2\x00 # rest",
	}, "\n")
	entries, errs := Parse([]byte(in))
	want := []Entry{
		{Line: 3, Spec: "UUID=0a1b2c3d-0000-4000-8000-000000000001", MountPoint: "/", Type: "ext4", Options: []string{"errors=remount-ro"}, PassNo: 1, Fields: 6},
		{Line: 5, Spec: "LABEL=my data", MountPoint: "/srv/my data", Type: "xfs", Options: []string{"defaults", "nofail"}, Fields: 4},
		{Line: 6, Spec: "/dev/vdb", MountPoint: "none", Type: "swap", Options: []string{"sw", "comment=cloudconfig"}, Fields: 6},
		{Line: 8, Spec: "tmpfs", MountPoint: "/tmp", Type: "tmpfs", Options: []string{"mode=1777", `context="system_u:object_r:tmp_t:s0,c1"`}, Fields: 6},
		{Line: 9, Spec: "/dev/vdd", MountPoint: "/x", Type: "ext4", Options: []string{"defaults"}, PassNo: 2, Fields: 6, Trailing: "extra # comment"},
		{Line: 11, Spec: "/dev/vdf", MountPoint: "relative", Type: "ext4", Options: []string{"defaults"}, PassNo: 2, Fields: 6},
		{Line: 12, Spec: "host:/export", MountPoint: "/nfs", Type: "nfs4", Options: []string{"_netdev"}, PassNo: -1, Fields: 6},
		{Line: 13, Spec: `PARTUUID="5d0c0ffe-01"`, MountPoint: "/boot", Type: "vfat", Options: []string{"umask=0077"}, PassNo: 2, Fields: 6},
		{Line: 14, Spec: "/dev/vdg", MountPoint: "/z", Type: "xfs", Fields: 3},
		{Line: 19, Spec: "/dev/vdk", MountPoint: "/k", Type: "ext4", Options: []string{"defaults"}, PassNo: 2, Fields: 6, CutAtNUL: true},
	}
	if !reflect.DeepEqual(entries, want) {
		t.Errorf("entries:\n got %+v\nwant %+v", entries, want)
	}
	wantErr := map[int]string{7: "has 2 fields", 10: `field 5 (dump) is "zero", want a number`, 15: "NUL byte",
		16: `field 6 (pass) is "0\r"`, 17: "out of range", 18: "has 1 field,"}
	if len(errs) != len(wantErr) {
		t.Errorf("got %d line errors, want %d: %v", len(errs), len(wantErr), errs)
	}
	for _, e := range errs {
		if w, ok := wantErr[e.Line]; !ok || !strings.Contains(e.Msg, w) {
			t.Errorf("line %d: reason %q, want it to contain %q", e.Line, e.Msg, w)
		}
		if text := LineText([]byte(in), e.Line); text == "" || !strings.HasPrefix(e.Error(), "line ") || strings.Contains(text, "\x00") {
			t.Errorf("line error %+v lacks text or a line prefix, or shows a raw NUL", e)
		}
	}
}

// TestParseFstabNumbers pins dump and pass to C's strtol stored in an int,
// as libmount reads them.
func TestParseFstabNumbers(t *testing.T) {
	for in, want := range map[string][2]int{
		"0 0": {0, 0}, "-1 +2": {-1, 2}, "007 010": {7, 10}, "\v5 \f6": {5, 6}, "4294967297 1": {1, 1},
		"2147483648 -2147483649": {-2147483648, 2147483647}, "0 99999999999999999999": {0, -1},
		"-99999999999999999999": {0, 0}, "3": {3, 0},
	} {
		es, errs := Parse([]byte("a /b c d " + in))
		if len(errs) != 0 || len(es) != 1 || es[0].Freq != want[0] || es[0].PassNo != want[1] {
			t.Errorf("%q: %+v %v, want freq %d pass %d", in, es, errs, want[0], want[1])
		}
	}
	for _, in := range []string{"x 0", "0 y", "1a", "0 0x1", "+ 0", "- 0", "# c", "0 # c", "99999999999999999999 0", "0 1\r\r"} {
		if es, errs := Parse([]byte("a /b c d " + in)); len(errs) != 1 || len(es) != 0 {
			t.Errorf("%q: got %+v %v, want a line error", in, es, errs)
		}
	}
}

func TestFstabOptionsAndString(t *testing.T) {
	e := Entry{Spec: "LABEL=a b", MountPoint: "/mnt/a#b", Type: "ext4",
		Options: []string{"defaults", "x-systemd.device-timeout=10s", "nofail"}, PassNo: 2}
	if v, ok := e.Option("x-systemd.device-timeout"); !ok || v != "10s" {
		t.Errorf("Option(device-timeout) = %q, %v", v, ok)
	}
	if !e.HasOption("nofail") || e.HasOption("noauto") || e.HasOption("x-systemd") {
		t.Error("HasOption")
	}
	got := e.String()
	if want := `LABEL=a\040b /mnt/a\043b ext4 defaults,x-systemd.device-timeout=10s,nofail 0 2`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	back, errs := Parse([]byte(got))
	if len(errs) != 0 || len(back) != 1 || back[0].Spec != e.Spec || back[0].MountPoint != e.MountPoint {
		t.Errorf("String() does not parse back: %+v %v", back, errs)
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`a\040b`:       "a b",
		`tab\011x`:     "tab\tx",
		`nl\012`:       "nl\n",
		`back\134sl`:   `back\sl`,
		`\777`:         "\xff", // modulo 256, as libmount
		`a\400b`:       "a",    // 256 is NUL modulo 256: the string ends
		`a\000b`:       "a",    // NUL ends the string, as libmount's C string
		`\377`:         "\xff",
		`x\04`:         `x\04`, // too short
		`trailing\\`:   `trailing\\`,
		`plain`:        "plain",
		`\101\102\103`: "ABC",
	} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
	for _, s := range []string{"a b", "x\ty\nz", `c:\dir`, "#hash", "ok"} {
		if got := Unescape(Escape(s)); got != s {
			t.Errorf("Unescape(Escape(%q)) = %q", s, got)
		}
	}
	if got := UdevUnescape(`my\x20data\x2fx\xzz`); got != `my data/x\xzz` {
		t.Errorf("UdevUnescape = %q", got)
	}
}

func TestClassifySource(t *testing.T) {
	cases := []struct {
		line string
		want Source
	}{
		{"UUID=abc / ext4 defaults", Source{Kind: SourceTag, ID: IDUUID, Value: "abc"}},
		{`LABEL="my\040data" /d ext4 defaults`, Source{Kind: SourceTag, ID: IDLabel, Value: "my data"}},
		{"PARTUUID=5d0c0ffe-01 /d ext4 defaults", Source{Kind: SourceTag, ID: IDPartUUID, Value: "5d0c0ffe-01"}},
		{"PARTLABEL=data /d ext4 defaults", Source{Kind: SourceTag, ID: IDPartLabel, Value: "data"}},
		{`/dev/disk/by-label/my\x20data /d ext4 defaults`, Source{Kind: SourceDiskLink, ID: IDLabel, Value: "my data", LinkDir: "by-label"}},
		{"/dev/disk/by-uuid/abc /d ext4 defaults", Source{Kind: SourceDiskLink, ID: IDUUID, Value: "abc", LinkDir: "by-uuid"}},
		{"/dev/disk/by-id/virtio-data01 /d ext4 defaults", Source{Kind: SourceDiskLink, Value: "/dev/disk/by-id/virtio-data01", LinkDir: "by-id"}},
		{"/dev/disk/by-path/pci-0000:00:05.0 /d ext4 defaults", Source{Kind: SourceDiskLink, Value: "/dev/disk/by-path/pci-0000:00:05.0", LinkDir: "by-path"}},
		{"/dev/vdb /d ext4 defaults", Source{Kind: SourceDevice, Value: "/dev/vdb"}},
		{"/dev/mapper/vg-data /d xfs defaults", Source{Kind: SourceDevice, Value: "/dev/mapper/vg-data"}},
		{"/swapfile none swap sw", Source{Kind: SourceFile, Value: "/swapfile"}},
		{"server:/export /nfs nfs defaults", Source{Kind: SourceNetwork, Value: "server:/export"}},
		{"//server/share /smb cifs defaults", Source{Kind: SourceNetwork, Value: "//server/share"}},
		{"ceph-mon:6789:/ /ceph ceph defaults", Source{Kind: SourceNetwork, Value: "ceph-mon:6789:/"}},
		{"tmpfs /tmp tmpfs defaults", Source{Kind: SourceVirtual, Value: "tmpfs"}},
		{"/srv/a /srv/b none bind", Source{Kind: SourceVirtual, Value: "/srv/a"}},
		{"/dev/vdb /d tmpfs defaults", Source{Kind: SourceVirtual, Value: "/dev/vdb"}},
		{"share0 /mnt/share virtiofs defaults", Source{Kind: SourceVirtual, Value: "share0"}},
	}
	for _, c := range cases {
		es, errs := Parse([]byte(c.line))
		if len(errs) != 0 || len(es) != 1 {
			t.Fatalf("%q: %v", c.line, errs)
		}
		if got := ClassifySource(es[0]); got != c.want {
			t.Errorf("%q: got %+v, want %+v", c.line, got, c.want)
		}
		if got := ClassifySource(es[0]).IsBlock(); got != (c.want.Kind == SourceTag || c.want.Kind == SourceDiskLink || c.want.Kind == SourceDevice) {
			t.Errorf("%q: IsBlock = %v", c.line, got)
		}
	}
}

// TestCheckID: every identifier a real filesystem or partition table
// writes is well formed; what no device can carry is not, with the reason.
func TestCheckID(t *testing.T) {
	for _, v := range []string{
		"0f7e2c4a-5b1d-4e2f-9a3b-7c6d5e4f3a2b", "0F7E2C4A-5B1D-4E2F-9A3B-7C6D5E4F3A2B", // ext4, XFS, btrfs, swap, LUKS
		"ABCD-1234", "5d0c0ffe-01", "1234ABCD5678EF90", "2023-04-22-10-36-54-00", "0f7e2c4a5b1d4e2f9a3b7c6d5e4f3a2b",
	} {
		for _, k := range []IDKind{IDUUID, IDPartUUID} {
			if err := CheckID(k, v); err != nil {
				t.Errorf("%s=%s: %v", k, v, err)
			}
		}
	}
	for v, want := range map[string]string{
		"bad-uuid":                              `holds 'u', which is not a hexadecimal digit`,
		"":                                      "is empty",
		"abcd":                                  "has 4 hexadecimal digits, fewer than any device's UUID",
		"-abcd1234":                             "has a dash at an end or two in a row",
		"abcd1234-":                             "has a dash at an end or two in a row",
		"abcd--1234":                            "has a dash at an end or two in a row",
		"0f7e2c4a-5b1d-4e2f-9a3b-7c6d5e4f3a2b0": "has 33 hexadecimal digits, more than any device's UUID",
		"0f7e2c4a 5b1d":                         `holds ' ', which is not a hexadecimal digit`,
	} {
		err := CheckID(IDUUID, v)
		if err == nil || err.Error() != want {
			t.Errorf("UUID=%q: %v, want %q", v, err, want)
		}
	}
	if err := CheckID(IDLabel, "bad-uuid"); err != nil {
		t.Errorf("a label is any text: %v", err)
	}
}

// FuzzCheckID: what CheckID accepts is hexadecimal digits and dashes
// only, and every refusal is one line.
func FuzzCheckID(f *testing.F) {
	for _, s := range []string{"bad-uuid", "ABCD-1234", "0f7e2c4a-5b1d-4e2f-9a3b-7c6d5e4f3a2b", "\n", "--"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		err := CheckID(IDPartUUID, v)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("%q: error on several lines: %v", v, err)
			}
			return
		}
		if strings.Trim(v, "0123456789abcdefABCDEF-") != "" || strings.Contains(v, "--") {
			t.Fatalf("%q accepted", v)
		}
	})
}

func TestIsKernelDeviceName(t *testing.T) {
	yes := []string{"/dev/vdb", "/dev/vda1", "/dev/sda", "/dev/sdaa12", "/dev/xvdf", "/dev/xvda1", "/dev/hda", "/dev/nvme0n1", "/dev/nvme1n1p2", "/dev//vdb"}
	no := []string{"/dev/mapper/vg-lv", "/dev/md0", "/dev/loop0", "/dev/disk/by-uuid/x", "/dev/vg/lv", "/dev/nvme0", "/dev/dm-0", "vdb", "/dev/sr0", "/dev/vdb/x"}
	for _, p := range yes {
		if !IsKernelDeviceName(p) {
			t.Errorf("IsKernelDeviceName(%q) = false", p)
		}
	}
	for _, p := range no {
		if IsKernelDeviceName(p) {
			t.Errorf("IsKernelDeviceName(%q) = true", p)
		}
	}
}

// fstabFuzzSeeds seed FuzzParse; the differential test against
// findmnt reads them too.
var fstabFuzzSeeds = []string{
	"UUID=x / ext4 defaults 0 1\n",
	"LABEL=a\\040b /a\\040b xfs defaults,nofail\n# c\n\n",
	"/dev/vdb none swap sw,comment=cloudconfig 0 0\r\n/dev/x",
	"a b c d e f g\n\t\t\n#\n",
	"x /y z o=\"a,b\",c 1 2\n",
	"\\777 /\\0 t \\134\\ 1 1",
	"a /b c\na /b\n",
	"a /b c d 0 0 # comment\n",
	"a /b\x00c d e\na /m\\000x t o\n/x /y z o 0 2\x00junk",
	"a /b c d \v5 99999999999999999999\n",
}

func FuzzParse(f *testing.F) {
	for _, s := range fstabFuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, errs := Parse(b)
		lines := strings.Count(string(b), "\n") + 1
		if len(entries)+len(errs) > lines {
			t.Fatalf("%d entries and %d errors from %d lines", len(entries), len(errs), lines)
		}
		last := 0
		for _, e := range entries {
			if e.Line <= last || e.Line > lines || e.Fields < 3 || e.Fields > 6 ||
				e.Fields == 3 && (e.Options != nil || e.Freq != 0 || e.PassNo != 0) {
				t.Fatalf("bad entry %+v", e)
			}
			if e.Trailing != "" && (e.Fields != 6 || e.Trailing[0] == ' ' || e.Trailing[0] == '\t') {
				t.Fatalf("trailing text %q on an entry of %d fields", e.Trailing, e.Fields)
			}
			last = e.Line
			// No field may hold a NUL byte: libmount's fields are C strings,
			// and a NUL in a mount point would name another directory.
			for _, f := range append([]string{e.Spec, e.MountPoint, e.Type, e.Trailing}, e.Options...) {
				if strings.IndexByte(f, 0) >= 0 {
					t.Fatalf("NUL byte in a field of %+v", e)
				}
			}
			if e.CutAtNUL && e.Line != lines {
				t.Fatalf("line %d of %d was cut at a NUL, but only the last line can be", e.Line, lines)
			}
			quoted := strings.Contains(strings.Join(e.Options, ","), `"`)
			if quoted {
				continue // unbalanced quotes may legitimately re-split differently
			}
			back, errs := Parse([]byte(e.String()))
			if len(errs) != 0 || len(back) != 1 {
				t.Fatalf("String() %q of %+v does not parse back: %v", e.String(), e, errs)
			}
			g := back[0]
			opts := strings.Join(e.Options, ",")
			if opts == "" {
				opts = "defaults" // what String() writes for absent options
			}
			if g.Spec != e.Spec || g.MountPoint != e.MountPoint || g.Type != e.Type || g.Freq != e.Freq || g.PassNo != e.PassNo ||
				strings.Join(g.Options, ",") != opts || g.Fields != 6 || g.Trailing != "" {
				t.Fatalf("round trip changed %+v into %+v", e, g)
			}
		}
		for _, le := range errs {
			if le.Line < 1 || le.Line > lines || le.Msg == "" || strings.IndexByte(LineText(b, le.Line), 0) >= 0 {
				t.Fatalf("bad line error %+v", le)
			}
		}
	})
}
