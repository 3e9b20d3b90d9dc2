package mountinfo

import (
	"reflect"
	"strings"
	"testing"
)

const sampleMountinfo = `22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,discard
30 27 254:16 / /srv/my\040data rw,noatime shared:5 master:2 - xfs /dev/vdb rw,attr2,inode64
31 27 0:45 /@home /home rw,relatime shared:7 - btrfs /dev/vdc rw,space_cache=v2,subvolid=257,subvol=/@home
32 27 0:46 / /var/lib/docker rw,relatime shared:8 - btrfs /dev/vdc rw,subvolid=5,subvol=/
33 27 254:16 /sub /bind rw,noatime - xfs /dev/vdb rw
34 27 0:50 / /nfs rw,relatime - nfs4 host:/export rw,vers=4.2
35 27 7:0 / /snap/core rw - squashfs /dev/loop0 ro
36 27 0:51 / /tmp rw - tmpfs tmpfs rw
37 27 254:16 / /srv/my\040data rw,noatime - xfs /dev/vdd rw
38 27 0:52 / /dev/shm rw - tmpfs  rw
`

func TestParse(t *testing.T) {
	ms, errs := Parse([]byte(sampleMountinfo + "garbage line\n40 1 x:y / / rw - ext4 /dev/x rw\n41 1 1:2 / rel rw - ext4 /dev/x rw\n42 1 1:2 / / rw shared:1 ext4 /dev/x rw\n"))
	if len(ms) != 11 {
		t.Fatalf("parsed %d mounts, want 11: %v", len(ms), errs)
	}
	want := Mount{ID: 30, Parent: 27, Major: 254, Minor: 16, Root: "/", MountPoint: "/srv/my data",
		Options: []string{"rw", "noatime"}, Optional: []string{"shared:5", "master:2"}, FSType: "xfs", Source: "/dev/vdb",
		SuperOptions: []string{"rw", "attr2", "inode64"}}
	if !reflect.DeepEqual(ms[2], want) {
		t.Errorf("mount 30:\n got %+v\nwant %+v", ms[2], want)
	}
	if ms[10].Source != "" || ms[10].FSType != "tmpfs" {
		t.Errorf("empty source: %+v", ms[10])
	}
	if !ms[1].HasOption("discard") || !ms[1].HasOption("relatime") || ms[1].HasOption("ro") {
		t.Error("HasOption")
	}
	wantErr := map[int]string{12: "at least 10", 13: "major:minor", 14: "not absolute", 15: `no "-"`}
	if len(errs) != len(wantErr) {
		t.Fatalf("errors = %v", errs)
	}
	for _, e := range errs {
		if !strings.Contains(e.Msg, wantErr[e.Line]) {
			t.Errorf("line %d: %q, want %q", e.Line, e.Msg, wantErr[e.Line])
		}
	}
	// The later mount at the same point is the visible one.
	if m, ok := Find(ms, "/srv/my data/"); !ok || m.ID != 37 {
		t.Errorf("Find = %+v, %v", m, ok)
	}
	if _, ok := Find(ms, "/nope"); ok {
		t.Error("Find found /nope")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(sampleMountinfo))
	f.Add([]byte("1 2 3:4 / / rw - ext4 /dev/x rw\n1 2 3:4 /a\\040 /b rw a:1 b:2 - t s o\n"))
	f.Add([]byte("- - - - - - - - - -\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, errs := Parse(b)
		lines := strings.Count(string(b), "\n") + 1
		if len(ms)+len(errs) > lines {
			t.Fatalf("%d mounts and %d errors from %d lines", len(ms), len(errs), lines)
		}
		for _, m := range ms {
			if !strings.HasPrefix(m.MountPoint, "/") || m.FSType == "" {
				t.Fatalf("bad mount %+v", m)
			}
			for _, o := range m.Optional {
				if o == "-" {
					t.Fatalf("separator kept as an optional field: %+v", m)
				}
			}
		}
	})
}

func TestParseTableAndHolding(t *testing.T) {
	ms, err := ParseTable([]byte("garbage\n" + sampleMountinfo))
	if err != nil || len(ms) != 11 {
		t.Fatalf("ParseTable = %d mounts, %v", len(ms), err)
	}
	if _, err := ParseTable(nil); err == nil {
		t.Error("an empty table must be an error")
	}
	if _, err := ParseTable([]byte("garbage\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a table of bad lines: %v", err)
	}
	if m, _ := Holding(ms, "/srv/my data/x/y.img"); m.ID != 37 {
		t.Errorf("Holding = %+v", m)
	}
	if m, _ := Holding(ms, "/tmpx"); m.MountPoint != "/" {
		t.Errorf("Holding(/tmpx) = %s", m.MountPoint)
	}
}
