// Package blockdevtest is what the fstab and disk-size judges' tests
// share: the identifiers of their fake disks, hand-made devices, an Env
// over a fake system and the grouping of findings their tables compare.
package blockdevtest

import (
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/blockdev"
	"github.com/guestcheck/guestcheck/internal/fact/blockid"
	"github.com/guestcheck/guestcheck/internal/fact/blockid/blocktest"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/fstab"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Identifiers of the fake disks.
const (
	RootUUID  = "0a1b2c3d-4e5f-4a6b-8c7d-000000000001"
	DataUUID  = "0a1b2c3d-4e5f-4a6b-8c7d-000000000002"
	LogsUUID  = "0a1b2c3d-4e5f-4a6b-8c7d-000000000003"
	CloneUUID = "0a1b2c3d-4e5f-4a6b-8c7d-000000000004"
	TwinUUID  = "0a1b2c3d-4e5f-4a6b-8c7d-000000000005"
	MediaUUID = "0a1b2c3d-4e5f-4a6b-8c7d-000000000006"
	OtherUUID = "0a1b2c3d-4e5f-4a6b-8c7d-000000000007"
	LostUUID  = "0a1b2c3d-4e5f-4a6b-8c7d-0000000000aa"
	Lost2UUID = "0a1b2c3d-4e5f-4a6b-8c7d-0000000000ab"
	StaleUUID = "0a1b2c3d-4e5f-4a6b-8c7d-0000000000ff"
	ESPPart   = "11111111-2222-4333-8444-555555555555"
	RootPart  = "66666666-7777-4888-8999-aaaaaaaaaaaa"
)

// Ext4 is an ext4 superblock image of mib MiB.
func Ext4(uuid, label string, mib uint64) []byte {
	return blocktest.Ext{Type: "ext4", UUID: uuid, Label: label, Blocks: mib * 256, LogBlockSize: 2}.Image()
}

// Dev is a probed ext4 device with a filesystem UUID.
func Dev(name, parent string, part int, minor uint32, uuid string) *blockdev.BlockDevice {
	return &blockdev.BlockDevice{Name: name, Parent: parent, Partition: part, Major: 254, Minor: minor, Size: 1 << 30, Probed: true,
		FS:  &blockid.Superblock{Type: "ext4", UUID: uuid, Size: 1 << 30},
		IDs: []blockdev.Identifier{{Kind: fstab.IDUUID, Value: uuid, Sources: []string{blockdev.SourceSuperblock}}}}
}

// Env is a check's Env over the root dir (a blocktest.System's Dir).
func Env(t *testing.T, dir string, live bool) *runner.Env {
	t.Helper()
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return &runner.Env{Root: r, Live: live, Config: config.Default(), Now: time.Now, IsRoot: os.Geteuid() == 0}
}

// Codes is the sorted "status:code" list of findings.
func Codes(fs []runner.Finding) string {
	var c []string
	for _, f := range fs {
		c = append(c, string(f.Status)+":"+f.Code)
	}
	sort.Strings(c)
	return strings.Join(c, " ")
}

// WantGroups holds findings grouped by key (an fstab line, a mount point)
// to want: each group's Codes, and no other group.
func WantGroups(t *testing.T, got map[string][]runner.Finding, want map[string]string) {
	t.Helper()
	for key, w := range want {
		if c := Codes(got[key]); c != w {
			t.Errorf("%q: %s, want %s", key, c, w)
		}
	}
	for key, fs := range got {
		if _, ok := want[key]; !ok {
			t.Errorf("unexpected findings for %q: %s", key, Codes(fs))
		}
	}
}

// HostEnv is a live Env on the real machine, as guestcheck runs in a VM.
func HostEnv(t *testing.T) *runner.Env {
	t.Helper()
	r, err := fs.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	return &runner.Env{Root: r, Live: true, Config: config.Default(), Now: time.Now, IsRoot: true}
}
