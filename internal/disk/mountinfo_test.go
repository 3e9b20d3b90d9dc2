package disk

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

func TestParseMountinfo(t *testing.T) {
	ms, errs := ParseMountinfo([]byte(sampleMountinfo + "garbage line\n40 1 x:y / / rw - ext4 /dev/x rw\n41 1 1:2 / rel rw - ext4 /dev/x rw\n42 1 1:2 / / rw shared:1 ext4 /dev/x rw\n"))
	if len(ms) != 11 {
		t.Fatalf("parsed %d mounts, want 11: %v", len(ms), errs)
	}
	want := MountInfo{ID: 30, Parent: 27, Major: 254, Minor: 16, Root: "/", MountPoint: "/srv/my data",
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
		if !strings.Contains(e.Reason, wantErr[e.Line]) {
			t.Errorf("line %d: %q, want %q", e.Line, e.Reason, wantErr[e.Line])
		}
	}
	// The later mount at the same point is the visible one.
	if m, ok := FindMount(ms, "/srv/my data/"); !ok || m.ID != 37 {
		t.Errorf("FindMount = %+v, %v", m, ok)
	}
	if _, ok := FindMount(ms, "/nope"); ok {
		t.Error("FindMount found /nope")
	}
}

func TestUsageFilesystems(t *testing.T) {
	ms, _ := ParseMountinfo([]byte(sampleMountinfo))
	var got []string
	for _, m := range UsageFilesystems(ms) {
		got = append(got, m.MountPoint)
	}
	// proc, nfs, squashfs and tmpfs are left out; the xfs bind mount and the
	// second btrfs subvolume repeat filesystems already listed, and the
	// btrfs top-level mount (subvol=/) is preferred over /@home.
	want := []string{"/", "/srv/my data", "/var/lib/docker"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UsageFilesystems = %q, want %q", got, want)
	}
	container, _ := ParseMountinfo([]byte("1 0 0:30 / / rw - overlay overlay rw,lowerdir=/l\n2 1 0:31 / /tmp rw - tmpfs tmpfs rw\n"))
	if fs := UsageFilesystems(container); len(fs) != 1 || fs[0].FSType != "overlay" {
		t.Errorf("an overlay root must be kept: %+v", fs)
	}
}

func TestParseSwaps(t *testing.T) {
	in := "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/vdb                                partition\t2097148\t\t0\t\t-2\n/swap\\040file file 1024 0 -3\nbad\n/dev/x partition many 0 0\n"
	got, errs := ParseSwaps([]byte(in))
	want := []SwapArea{{Filename: "/dev/vdb", Type: "partition", Size: 2097148}, {Filename: "/swap file", Type: "file", Size: 1024}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseSwaps = %+v", got)
	}
	if len(errs) != 2 || errs[0].Line != 4 || errs[1].Line != 5 {
		t.Errorf("errors = %+v", errs)
	}
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add([]byte(sampleMountinfo))
	f.Add([]byte("1 2 3:4 / / rw - ext4 /dev/x rw\n1 2 3:4 /a\\040 /b rw a:1 b:2 - t s o\n"))
	f.Add([]byte("- - - - - - - - - -\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, errs := ParseMountinfo(b)
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
		_ = UsageFilesystems(ms)
	})
}
