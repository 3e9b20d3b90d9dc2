package imagetest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/blockid/blocktest"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// Volume is a logical volume BuildLVM makes in its volume group.
type Volume struct {
	Name    string
	SizeMiB int
	FS      string // as FSPart's: "ext4", "xfs", "btrfs" or "vfat", filled from Tree
	Tree    string
	Label   string
}

// BuildLVM writes a raw GPT image: the partitions parts first (as Build
// makes them), then one LVM partition whose physical volume the real
// lvm2 tools make (on a loop device over that partition, as root, with
// activation off: no device mapper is needed on the host) with the volume
// group vg and its volumes, each filesystem written at the volume's
// extents as lvs reports them. The image is this test's own, so the
// host may write it; nothing is mounted.
func BuildLVM(t testing.TB, dir, name string, parts []Part, vg string, vols []Volume, qcow2 bool) string {
	t.Helper()
	testenv.RequireRoot(t, "pvcreate needs a loop device")
	lvm := testenv.Tool(t, "lvm", "lvm2")
	losetup := testenv.Tool(t, "losetup", "mount")
	size := 8 // MiB: the PV's metadata and rounding
	for _, v := range vols {
		size += v.SizeMiB
	}
	all := append(append([]Part(nil), parts...), Part{Type: TypeLVM, SizeMiB: size})
	raw := Build(t, dir, name, all, false)
	partStart := int64(2048)
	for _, p := range parts {
		partStart += int64(p.SizeMiB) * 2048
	}
	out, err := exec.Command(losetup, "-f", "--show", "-o", fmt.Sprint(partStart*512), "--sizelimit", fmt.Sprint(int64(size)<<20), raw).Output()
	if err != nil {
		t.Fatalf("losetup: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	run := func(args ...string) []byte {
		t.Helper()
		full := append([]string{args[0], "--devicesfile", "", "--config", "global{activation=0}"}, args[1:]...)
		c := exec.Command(lvm, full...)
		var errb strings.Builder
		c.Stderr = &errb
		b, err := c.Output()
		if err != nil {
			exec.Command(losetup, "-d", dev).Run()
			t.Fatalf("lvm %v: %v: %s", args, err, errb.String())
		}
		return b
	}
	run("pvcreate", "-q", dev)
	run("vgcreate", "-q", vg, dev)
	for _, v := range vols {
		run("lvcreate", "-q", "-an", "-Zn", "-y", "-n", v.Name, "-L", fmt.Sprintf("%dM", v.SizeMiB), vg)
	}
	peStart := strings.TrimSpace(string(run("pvs", "--noheadings", "--units", "s", "--nosuffix", "-o", "pe_start", dev)))
	extent := strings.TrimSpace(string(run("vgs", "--noheadings", "--units", "s", "--nosuffix", "-o", "vg_extent_size", vg)))
	var rep struct {
		Report []struct {
			LV []map[string]string `json:"lv"`
		} `json:"report"`
	}
	if err := json.Unmarshal(run("lvs", "--reportformat", "json", "-o", "lv_name,seg_pe_ranges", vg), &rep); err != nil {
		t.Fatal(err)
	}
	exec.Command(losetup, "-d", dev).Run()
	pe, _ := strconv.ParseInt(peStart, 10, 64)
	ext, _ := strconv.ParseInt(extent, 10, 64)
	for _, v := range vols {
		var first int64 = -1
		for _, row := range rep.Report[0].LV {
			if row["lv_name"] == v.Name {
				_, rng, _ := strings.Cut(row["seg_pe_ranges"], ":")
				a, _, _ := strings.Cut(rng, "-")
				first, _ = strconv.ParseInt(a, 10, 64)
			}
		}
		if first < 0 {
			t.Fatalf("lvs does not list %s", v.Name)
		}
		writeFS(t, raw, (partStart+pe+first*ext)*512, v)
	}
	if !qcow2 {
		return raw
	}
	q := filepath.Join(dir, name+".qcow2")
	if out, err := exec.Command(testenv.Tool(t, "qemu-img", "qemu-utils"), "convert", "-f", "raw", "-O", "qcow2", raw, q).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img convert: %v: %s", err, out)
	}
	os.Remove(raw)
	return q
}

// writeFS makes v's filesystem in a file of its own (MakeFS) and copies
// it into raw at off.
func writeFS(t testing.TB, raw string, off int64, v Volume) {
	t.Helper()
	dir := t.TempDir()
	fsFile := blocktest.Sparse(t, dir, v.Name+".fs", int64(v.SizeMiB)<<20)
	MakeFS(t, fsFile, FSPart{FS: v.FS, SizeMiB: v.SizeMiB, Tree: v.Tree, Label: v.Label})
	copySparse(t, fsFile, raw, off)
}
