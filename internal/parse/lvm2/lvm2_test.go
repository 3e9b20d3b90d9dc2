package lvm2

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// lvsReport is `lvs --reportformat json -o lv_name,seg_start_pe,seg_size_pe,seg_pe_ranges,segtype`.
type lvsReport struct {
	Report []struct {
		LV []map[string]string `json:"lv"`
	} `json:"report"`
}

// targetsFromLVs is what lvm2's own lvs says each LV maps to, as
// Targets (PE ranges "/dev/loopN:a-b" are extents of the PV "pv0").
func targetsFromLVs(t *testing.T, b []byte, extent, peStart int64) map[string][]Target {
	t.Helper()
	var r lvsReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	out := map[string][]Target{}
	for _, row := range r.Report[0].LV {
		start, _ := strconv.ParseInt(row["seg_start_pe"], 10, 64)
		size, _ := strconv.ParseInt(row["seg_size_pe"], 10, 64)
		_, rng, _ := strings.Cut(row["seg_pe_ranges"], ":")
		first, _, _ := strings.Cut(rng, "-")
		e, _ := strconv.ParseInt(first, 10, 64)
		out[row["lv_name"]] = append(out[row["lv_name"]], Target{Start: start * extent, Length: size * extent, PV: "pv0", Offset: peStart + e*extent})
	}
	return out
}

// checkPV parses the PV in img and compares every LV's linear map with
// lvs's.
func checkPV(t *testing.T, img []byte, lvs []byte) VG {
	t.Helper()
	l, err := ParseLabel(img[:2048])
	if err != nil {
		t.Fatal(err)
	}
	if l.Sector != 1 || len(l.Metadata) != 1 || len(l.Data) != 1 || len(l.UUID) != 32 {
		t.Fatalf("label %+v", l)
	}
	text, err := ReadMetadata(bytes.NewReader(img), l.Metadata[0])
	if err != nil {
		t.Fatal(err)
	}
	vg, err := ParseVG(text)
	if err != nil {
		t.Fatal(err)
	}
	if name, ok := vg.PVByUUID(l.UUID); !ok || name != "pv0" {
		t.Errorf("the label's PV is not the metadata's pv0: %q %v", name, ok)
	}
	want := targetsFromLVs(t, lvs, vg.ExtentSize, vg.PVs["pv0"].PEStart)
	got := map[string][]Target{}
	for _, lv := range vg.LVs {
		ts, err := vg.Linear(lv)
		if err != nil {
			t.Fatal(err)
		}
		got[lv.Name] = ts
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("linear maps\n got %+v\nwant %+v (lvs)", got, want)
	}
	return vg
}

// TestCapture reads a PV that the real lvm2 2.03.16 wrote (pvcreate,
// vgcreate, two lvcreate and an lvextend that made root's second segment
// lie after var; testdata/README says how) and holds every LV's map to
// what lvs said of it at the time.
func TestCapture(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "pv.img.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	img, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	lvs, err := os.ReadFile(filepath.Join("testdata", "lvs.json"))
	if err != nil {
		t.Fatal(err)
	}
	vg := checkPV(t, img, lvs)
	if vg.Name != "tvg" || len(vg.LVs) != 2 || len(vg.LVs[0].Segments) != 2 {
		t.Errorf("vg %+v", vg)
	}
}

// TestRealLVM makes a PV with the real lvm2 tools now (as root, on a loop
// device of a file of the test's own; activation off, so no device
// mapper is needed on this host) and compares as TestCapture does.
func TestRealLVM(t *testing.T) {
	testenv.RequireRoot(t, "pvcreate needs a block device: a loop device")
	lvm := testenv.Tool(t, "lvm", "lvm2")
	losetup := testenv.Tool(t, "losetup", "mount")
	dir := t.TempDir()
	img := filepath.Join(dir, "pv.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Truncate(img, 64<<20)
	out, err := exec.Command(losetup, "-f", "--show", img).Output()
	if err != nil {
		t.Fatal(err)
	}
	dev := strings.TrimSpace(string(out))
	defer exec.Command(losetup, "-d", dev).Run()
	cfg := "global{activation=0}"
	run := func(args ...string) []byte {
		t.Helper()
		c := exec.Command(lvm, append(args[:1:1], append([]string{"--devicesfile", "", "--config", cfg}, args[1:]...)...)...)
		var stderr bytes.Buffer
		c.Stderr = &stderr
		b, err := c.Output()
		if err != nil {
			t.Fatalf("lvm %v: %v: %s", args, err, stderr.String())
		}
		return b
	}
	run("pvcreate", "-q", dev)
	run("vgcreate", "-q", "rvg", dev)
	run("lvcreate", "-q", "-an", "-Zn", "-y", "-n", "root", "-L", "12M", "rvg")
	run("lvcreate", "-q", "-an", "-Zn", "-y", "-n", "swap", "-L", "4M", "rvg")
	run("lvextend", "-q", "-L", "+8M", "rvg/root")
	lvs := run("lvs", "--reportformat", "json", "-o", "lv_name,seg_start_pe,seg_size_pe,seg_pe_ranges", "rvg")
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	vg := checkPV(t, b, lvs)
	if vg.Name != "rvg" || len(vg.LVs) != 2 {
		t.Errorf("vg %+v", vg)
	}
}

// TestRefusals: a VG's volumes that are not linear are refused by name,
// as are maps outside their PV.
func TestRefusals(t *testing.T) {
	const meta = `vg { id = "x" seqno = 3 extent_size = 8
physical_volumes { pv0 { id = "a" pe_start = 2048 pe_count = 10 } }
logical_volumes {
 thin { status = ["READ", "WRITE", "VISIBLE"] segment1 { start_extent = 0 extent_count = 2 type = "thin" } }
 two { segment1 { start_extent = 0 extent_count = 2 type = "striped" stripe_count = 2 stripes = ["pv0", 0, "pv0", 4] } }
 far { segment1 { start_extent = 0 extent_count = 20 type = "striped" stripe_count = 1 stripes = ["pv0", 0] } }
 gap { segment1 { start_extent = 1 extent_count = 2 type = "striped" stripe_count = 1 stripes = ["pv0", 0] } }
 other { segment1 { start_extent = 0 extent_count = 2 type = "striped" stripe_count = 1 stripes = ["pv9", 0] } }
 ok { # a comment
   segment1 { start_extent = 0 extent_count = 2 type = "striped" stripe_count = 1 stripes = [ "pv0", 3 ] } }
} }
# trailing comment
contents = "Text Format Volume Group"
`
	vg, err := ParseVG([]byte(meta))
	if err != nil {
		t.Fatal(err)
	}
	for _, lv := range vg.LVs {
		ts, err := vg.Linear(lv)
		want := map[string]string{"thin": "is thin", "two": "striped over 2 PVs", "far": "runs past", "gap": "not contiguous", "other": "does not list"}[lv.Name]
		switch {
		case lv.Name == "ok":
			if err != nil || len(ts) != 1 || ts[0] != (Target{0, 16, "pv0", 2048 + 24}) {
				t.Errorf("ok: %+v %v", ts, err)
			}
		case err == nil || !strings.Contains(err.Error(), want):
			t.Errorf("%s: %v, want %q", lv.Name, err, want)
		}
	}
	for _, bad := range []string{"vg {", "vg { a = }", "vg { a = [1 2] }", "}", "vg { a = \"x }", "a b", "vg { extent_size = 0 }", "x = 1"} {
		if _, err := ParseVG([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	deep := strings.Repeat("a {", 40) + strings.Repeat("}", 40)
	if _, err := ParseConfig([]byte(deep)); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Errorf("deep: %v", err)
	}
}

// FuzzParse: no panic and no unbounded work on any label sector or
// metadata text; every target Linear returns lies within its PV.
func FuzzParse(f *testing.F) {
	f.Add([]byte("vg { extent_size = 8 physical_volumes { pv0 { pe_start = 1 pe_count = 4 } } logical_volumes { a { segment1 { start_extent = 0 extent_count = 1 type = \"striped\" stripe_count = 1 stripes = [\"pv0\", 1] } } } }"), []byte("LABELONE"))
	f.Fuzz(func(t *testing.T, text, head []byte) {
		ParseLabel(append(make([]byte, 512), head...))
		vg, err := ParseVG(text)
		if err != nil {
			return
		}
		for _, lv := range vg.LVs {
			ts, err := vg.Linear(lv)
			if err != nil {
				continue
			}
			for _, tg := range ts {
				pv := vg.PVs[tg.PV]
				if tg.Length <= 0 || tg.Offset < pv.PEStart || tg.Offset+tg.Length > pv.PEStart+pv.PECount*vg.ExtentSize {
					t.Fatalf("target %+v outside %+v", tg, pv)
				}
			}
		}
	})
}
