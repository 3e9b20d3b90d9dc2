package identity

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

const testID = "0123456789abcdef0123456789abcdef"

func TestTemplateStateOf(t *testing.T) {
	rec := &sealrecord.Record{SealedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), SealprepVersion: "1.2",
		MachineIDHash: sealrecord.HashMachineID(testID)}
	// An older sealprep's record: the plain SHA-256 of the ID.
	v1 := &sealrecord.Record{SealedAt: rec.SealedAt, SealprepVersion: "0.9", MachineIDSHA256: sealrecord.LegacyHashMachineID(testID)}
	file := func(content string) File {
		b := []byte(content)
		return File{Path: MachineIDPath, Exists: true, Found: true, Content: b, Kind: Classify(b)}
	}
	tests := []struct {
		name string
		etc  File
		rec  *sealrecord.Record
		boot *LiveBoot
		is   bool
		why  string
	}{
		{"missing, no record", File{Path: MachineIDPath}, nil, nil, true, "looks sealed; /etc/machine-id is missing"},
		{"empty, record", file(""), rec, nil, true, "sealprep's record: sealed at 2026-01-02T03:04:05Z by sealprep 1.2; /etc/machine-id is empty"},
		{"uninitialized", file("uninitialized\n"), nil, nil, true, "uninitialized"},
		{"junk systemd replaces", file("not an id\n"), nil, nil, true, "not a machine ID"},
		{"guest", file(testID + "\n"), nil, nil, false, ""},
		{"all zero is kept", file(strings.Repeat("0", 32)), nil, nil, false, ""},
		{"half-sealed", file(testID + "\n"), rec, nil, true, "half-sealed"},
		{"half-sealed, version 1 record", file(testID + "\n"), v1, nil, true, "half-sealed"},
		{"booted clone, version 1 record", file("fedcba9876543210fedcba9876543210\n"), v1, nil, false, "a clone of a sealed template that booted"},
		{"booted clone", file("fedcba9876543210fedcba9876543210\n"), rec, nil, false, "a clone of a sealed template that booted"},
		{"unreadable", File{Path: MachineIDPath, Exists: true, Err: errTest}, nil, nil, false, ""},
		{"link to /run", File{Path: MachineIDPath, Exists: true, Entry: linkEntry, Target: "/run/machine-id"}, nil, nil, true, "outside the image"},
		{"link to an ID", File{Path: MachineIDPath, Exists: true, Entry: linkEntry, Target: "/etc/machine-id.real", Found: true,
			Content: []byte(testID), Kind: Valid}, nil, nil, false, ""},
		{"live first boot, record", file(testID), rec, &LiveBoot{CloudInit: true}, true, "first boot of a sealed image"},
		{"live first boot, transient ID", file(testID), nil, &LiveBoot{CloudInit: true, TransientID: true}, true, "looks sealed"},
		{"live, instance made", file(testID), rec, &LiveBoot{CloudInit: true, Instance: true}, false, ""},
		{"live, no cloud-init", file(testID), rec, &LiveBoot{TransientID: true}, false, ""},
		{"live, nothing says sealed", file(""), nil, &LiveBoot{CloudInit: true}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := TemplateStateOf(MachineID{Etc: tc.etc}, Template{Record: tc.rec}, tc.boot)
			if got.Is != tc.is || !strings.Contains(got.Why, tc.why) || (tc.why == "" && got.Why != "") {
				t.Errorf("got %+v, want Is %v, Why containing %q", got, tc.is, tc.why)
			}
			if got.Record != tc.rec {
				t.Errorf("Record %v, want %v", got.Record, tc.rec)
			}
			if d := got.Detail(nil); (d["template"] != "") != tc.is {
				t.Errorf("Detail %v", d)
			}
		})
	}
}

// TestReadTemplateState reads the decision from fake roots, through both
// readers, off and on the running system.
func TestReadTemplateState(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		live  bool
		is    bool
	}{
		{"empty", map[string]string{"/etc/machine-id": ""}, false, true},
		{"missing", map[string]string{"/etc/hostname": ""}, false, true},
		{"guest", map[string]string{"/etc/machine-id": testID + "\n"}, false, false},
		{"link to /run", map[string]string{"/etc/machine-id": "->/run/machine-id"}, false, true},
		{"relative link to an ID", map[string]string{"/etc/machine-id": "->machine-id.real", "/etc/machine-id.real": testID}, false, false},
		{"relative link to an empty file", map[string]string{"/etc/machine-id": "->machine-id.real", "/etc/machine-id.real": ""}, false, true},
		{"live first boot", map[string]string{"/etc/machine-id": testID, "/usr/bin/cloud-init": "",
			"/proc/self/mountinfo": "30 1 0:25 /machine-id /etc/machine-id ro,relatime shared:5 - tmpfs tmpfs rw\n"}, true, true},
		{"live, cloud-init disabled", map[string]string{"/etc/machine-id": testID, "/usr/bin/cloud-init": "", "/etc/cloud/cloud-init.disabled": "",
			"/proc/self/mountinfo": "30 1 0:25 /machine-id /etc/machine-id ro,relatime shared:5 - tmpfs tmpfs rw\n"}, true, false},
		{"live, instance made", map[string]string{"/etc/machine-id": testID, "/usr/bin/cloud-init": "", "/var/lib/cloud/instance": "->/var/lib/cloud/instances/i-1",
			"/var/lib/cloud/instances/i-1/x": "", "/proc/self/mountinfo": "30 1 0:25 /machine-id /etc/machine-id ro,relatime shared:5 - tmpfs tmpfs rw\n"}, true, false},
		{"live, committed", map[string]string{"/etc/machine-id": testID, "/usr/bin/cloud-init": "",
			"/proc/self/mountinfo": "22 1 252:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"}, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := testenv.WriteTree(t, tc.files)
			for name, r := range readers(t, dir) {
				if got := ReadTemplateState(r, tc.live); got.Is != tc.is {
					t.Errorf("%s: got %+v, want Is %v", name, got, tc.is)
				}
			}
		})
	}
}

func TestResolveLink(t *testing.T) {
	dir := testenv.WriteTree(t, map[string]string{
		"/etc/machine-id": "->../var/lib/a", "/var/lib/a": "->/var/lib/b", "/var/lib/b": "x",
		"/etc/loop": "->/etc/loop", "/etc/plain": "x",
	})
	for name, r := range readers(t, dir) {
		if got := ResolveLink(r, "/etc/machine-id"); got != "/var/lib/b" {
			t.Errorf("%s: chain ends at %q", name, got)
		}
		if got := ResolveLink(r, "/etc/loop"); got != "" {
			t.Errorf("%s: loop ends at %q", name, got)
		}
		if got := ResolveLink(r, "/etc/plain"); got != "" {
			t.Errorf("%s: a file is no link: %q", name, got)
		}
	}
}

var (
	errTest   = errors.New("permission denied")
	linkEntry = fs.Entry{Kind: fs.KindSymlink}
)
