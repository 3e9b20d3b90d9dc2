package disksize

import (
	"context"
	"errors"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/blockdev"
	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
	"github.com/guestcheck/guestcheck/internal/testenv/blockdevtest"
)

// TestJudgeDiskSizeOnFacts judges hand-made disk-size facts: a root that
// fills its partition but not its disk, a data filesystem that does not
// fill its device, a full one, and one statfs cannot answer.
func TestJudgeDiskSizeOnFacts(t *testing.T) {
	vda := &blockdev.BlockDevice{Name: "vda", Major: 254, Size: 20 << 30}
	vda1 := blockdevtest.Dev("vda1", "vda", 1, 1, blockdevtest.RootUUID)
	vdb := blockdevtest.Dev("vdb", "", 0, 16, blockdevtest.DataUUID)
	vdb.Size = 4 << 30 // the filesystem spans 1 GiB of it
	mount := func(line string) mountinfo.Mount {
		ms, errs := mountinfo.Parse([]byte(line))
		if len(ms) != 1 {
			t.Fatal(errs)
		}
		return ms[0]
	}
	use := func(pct uint64) Usage {
		return Usage{BlockSize: 4096, Blocks: 1000, Free: 1000 - pct*10, Avail: 1000 - pct*10, Files: 100, FilesFree: 90}
	}
	f := Facts{Live: true, WarnPercent: 85, FailPercent: 95, Inventory: blockdev.NewInventory(true, vda, vda1, vdb),
		Filesystems: []FilesystemFacts{
			{Mount: mount("1 0 254:1 / / rw - ext4 /dev/vda1 rw"), Device: vda1, Usage: use(40)},
			{Mount: mount("2 1 254:16 / /data rw - ext4 /dev/vdb rw"), Device: vdb, Usage: use(97)},
			{Mount: mount("3 1 0:40 / /nfs rw - ext4 /dev/vdc rw"), StatErr: errors.New("stale handle")},
		}}
	vda1.Start, vda1.Size = 1<<20, 1<<30
	fs := Judge(f)
	checktest.Conventions(t, fs, Codes)
	blockdevtest.WantGroups(t, diskByMount(fs), map[string]string{
		"/":     "pass:disk-usage-ok warn:disk-partition-not-grown",
		"/data": "fail:disk-usage-critical warn:disk-fs-not-grown",
		"/nfs":  "error:disk-statfs-failed",
	})

	f.Deadline = context.DeadlineExceeded
	f.Filesystems = nil
	if c := blockdevtest.Codes(Judge(f)); c != "error:disk-state-unreadable" {
		t.Errorf("past the deadline: %s", c)
	}
	if c := blockdevtest.Codes(Judge(Facts{NotLiveReason: "--root"})); c != "skip:disk-not-live" {
		t.Errorf("not live: %s", c)
	}
	if c := blockdevtest.Codes(Judge(Facts{Live: true})); c != "skip:disk-size-unverified" {
		t.Errorf("nothing mounted: %s", c)
	}
}
