package imgfmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// qemuInfo is what `qemu-img info --output=json` says that Parse says too.
type qemuInfo struct {
	Format          string `json:"format"`
	VirtualSize     uint64 `json:"virtual-size"`
	ClusterSize     uint64 `json:"cluster-size"`
	BackingFilename string `json:"backing-filename"`
	BackingFormat   string `json:"backing-filename-format"`
	Encrypted       bool   `json:"encrypted"`
	DirtyFlag       bool   `json:"dirty-flag"`
	Snapshots       []json.RawMessage
	FormatSpecific  struct {
		Data struct {
			Compat      string `json:"compat"`
			DataFile    string `json:"data-file"`
			DataFileRaw bool   `json:"data-file-raw"`
			Corrupt     bool   `json:"corrupt"`
			ExtendedL2  bool   `json:"extended-l2"`
		} `json:"data"`
	} `json:"format-specific"`
}

// realImage is one image qemu-img makes; cmds run in the directory,
// "qemu-img" replaced by the tool's path.
type realImage struct {
	name, file, format string
	cmds               [][]string
	patch              func(t *testing.T, path string)
	check              func(t *testing.T, h Header)
}

// secret is the --object qemu-img needs to create and open LUKS images.
var secret = []string{"--object", "secret,id=sec0,data=abc"}

func qcow2Image(name, size string, opts ...string) realImage {
	args := []string{"qemu-img", "create", "-q", "-f", "qcow2"}
	for _, o := range opts {
		args = append(args, "-o", o)
	}
	return realImage{name: name, file: name + ".qcow2", format: QCOW2,
		cmds: [][]string{append(args, name+".qcow2", size)}}
}

func backed(name, backing, fmt string) realImage {
	args := []string{"qemu-img", "create", "-q", "-f", "qcow2", "-u", "-b", backing, "-F", fmt, name + ".qcow2", "64M"}
	return realImage{name: name, file: name + ".qcow2", format: QCOW2, cmds: [][]string{args}}
}

func realImages(dir string) []realImage {
	lukss := append([]string{"qemu-img", "create", "-q", "-f", "qcow2"}, secret...)
	imgs := []realImage{
		qcow2Image("v2", "64M", "compat=0.10"),
		qcow2Image("v3", "64M", "compat=1.1"),
		backed("backing-fmt", "base.img", "raw"),
		backed("backing-abs", filepath.Join(dir, "sub", "base.qcow2"), "qcow2"),
		backed("backing-rel", "../sub/base.img", "raw"),
		{name: "backing-nofmt", file: "backing-nofmt.qcow2", format: QCOW2,
			cmds:  [][]string{{"qemu-img", "create", "-q", "-f", "qcow2", "-o", "compat=0.10", "-u", "-b", "base.img", "-F", "raw", "backing-nofmt.qcow2", "64M"}},
			patch: dropBackingFormat},
		qcow2Image("datafile", "64M", "data_file=datafile.raw"),
		qcow2Image("datafile-raw", "64M", "data_file=datafile-raw.raw,data_file_raw=on"),
		{name: "encrypted", file: "encrypted.qcow2", format: QCOW2,
			cmds: [][]string{append(lukss, "-o", "encrypt.format=luks,encrypt.key-secret=sec0", "encrypted.qcow2", "64M")}},
		qcow2Image("cluster512", "64M", "cluster_size=512"),
		qcow2Image("cluster2M", "64M", "cluster_size=2M"),
		qcow2Image("extended-l2", "64M", "extended_l2=on"),
		qcow2Image("zstd", "64M", "compression_type=zstd"),
		qcow2Image("lazy", "64M", "lazy_refcounts=on"),
		qcow2Image("1T", "1T"),
		qcow2Image("2P", "2P"),
		qcow2Image("2E", "2E", "cluster_size=2M"),
		{name: "snapshot", file: "snapshot.qcow2", format: QCOW2, cmds: [][]string{
			{"qemu-img", "create", "-q", "-f", "qcow2", "snapshot.qcow2", "64M"},
			{"qemu-img", "snapshot", "-c", "s1", "snapshot.qcow2"},
			{"qemu-img", "snapshot", "-c", "s2", "snapshot.qcow2"}}},
		{name: "qcow1", file: "old.qcow", format: QCOW1,
			cmds: [][]string{{"qemu-img", "create", "-q", "-f", "qcow", "-u", "-b", "base.img", "-F", "raw", "old.qcow", "64M"}}},
		{name: "qed", file: "disk.qed", format: QED,
			cmds: [][]string{{"qemu-img", "create", "-q", "-f", "qed", "-u", "-b", "base.img", "-F", "raw", "disk.qed", "64M"}}},
		{name: "vmdk-sparse", file: "sparse.vmdk", format: VMDK,
			cmds:  [][]string{{"qemu-img", "create", "-q", "-f", "vmdk", "sparse.vmdk", "64M"}},
			check: extents("sparse.vmdk")},
		{name: "vmdk-flat", file: "flat.vmdk", format: VMDK,
			cmds:  [][]string{{"qemu-img", "create", "-q", "-f", "vmdk", "-o", "subformat=monolithicFlat", "flat.vmdk", "64M"}},
			check: extents("flat-flat.vmdk")},
		{name: "vmdk-stream", file: "stream.vmdk", format: VMDK,
			cmds: [][]string{{"qemu-img", "create", "-q", "-f", "vmdk", "-o", "subformat=streamOptimized", "stream.vmdk", "64M"}}},
		{name: "vpc", file: "dyn.vhd", format: VHD, cmds: [][]string{{"qemu-img", "create", "-q", "-f", "vpc", "dyn.vhd", "64M"}}},
		{name: "vpc-fixed", file: "fixed.vhd", format: VHD, cmds: [][]string{{"qemu-img", "create", "-q", "-f", "vpc", "-o", "subformat=fixed", "fixed.vhd", "64M"}}},
		{name: "vhdx", file: "disk.vhdx", format: VHDX, cmds: [][]string{{"qemu-img", "create", "-q", "-f", "vhdx", "disk.vhdx", "64M"}}},
		{name: "vdi", file: "disk.vdi", format: VDI, cmds: [][]string{{"qemu-img", "create", "-q", "-f", "vdi", "disk.vdi", "64M"}}},
		{name: "parallels", file: "disk.hdd", format: Parallels, cmds: [][]string{{"qemu-img", "create", "-q", "-f", "parallels", "disk.hdd", "64M"}}},
		{name: "luks", file: "disk.luks", format: LUKS, cmds: [][]string{append(append([]string{"qemu-img", "create", "-q", "-f", "luks"}, secret...),
			"-o", "key-secret=sec0", "disk.luks", "64M")}},
		{name: "raw", file: "disk.raw", format: Raw, cmds: [][]string{{"qemu-img", "create", "-q", "-f", "raw", "disk.raw", "64M"}}},
	}
	return imgs
}

// dropBackingFormat turns the backing format extension into an unknown
// one, which QEMU keeps and ignores: an image as QEMU before 5.2 wrote it
// without -F (7.2 refuses -b without -F even with -u).
func dropBackingFormat(t *testing.T, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b[:4096], []byte{0xe2, 0x79, 0x2a, 0xca})
	if i < 0 {
		t.Fatal("no backing format extension to drop")
	}
	copy(b[i:], []byte{0x12, 0x34, 0x56, 0x78})
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func extents(want ...string) func(*testing.T, Header) {
	return func(t *testing.T, h Header) {
		if !slices.Equal(h.Extents, want) {
			t.Errorf("Extents = %q, want %q", h.Extents, want)
		}
	}
}

// TestRealImages holds Parse to what qemu-img itself says of images it
// made, one for each qcow2 feature and each other format.
func TestRealImages(t *testing.T) {
	qemuImg := testenv.Tool(t, "qemu-img", "qemu-utils")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, im := range realImages(dir) {
		t.Run(im.name, func(t *testing.T) {
			path := makeImage(t, qemuImg, dir, im)
			h := parseFile(t, path)
			if h.Format != im.format {
				t.Fatalf("Format = %q, want %q", h.Format, im.format)
			}
			if im.check != nil {
				im.check(t, h)
			}
			compareInfo(t, h, qemuInfoOf(t, qemuImg, path, im.format))
		})
	}
}

func makeImage(t *testing.T, qemuImg, dir string, im realImage) string {
	t.Helper()
	for _, c := range im.cmds {
		// qemu-img times its LUKS key derivation by the thread's CPU time
		// and gives up ("Unable to get accurate CPU usage") now and then on
		// a loaded machine; that is the benchmark's weather, not the
		// image's, so it is tried again, then skipped with the reason.
		for try := 1; ; try++ {
			cmd := exec.Command(qemuImg, c[1:]...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err == nil {
				break
			}
			if !bytes.Contains(out, []byte("Unable to get accurate CPU usage")) {
				t.Fatalf("%q: %v\n%s", c, err, out)
			}
			if try == 5 {
				testenv.Skip(t, "qemu-img-luks-timing", fmt.Sprintf("qemu-img could not time its LUKS key derivation in 5 tries: %s", bytes.TrimSpace(out)))
			}
			time.Sleep(time.Duration(try) * 200 * time.Millisecond)
		}
	}
	path := filepath.Join(dir, im.file)
	if im.patch != nil {
		im.patch(t, path)
	}
	return path
}

func parseFile(t *testing.T, path string) Header {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	h, err := Parse(f, st.Size())
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return h
}

func qemuInfoOf(t *testing.T, qemuImg, path, format string) qemuInfo {
	t.Helper()
	args := []string{"info", "--output=json"}
	if format == LUKS || format == QCOW2 {
		args = append(args, secret...)
	}
	args = append(args, "-f", format, path)
	cmd := exec.Command(qemuImg, args...)
	cmd.Dir = filepath.Dir(path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("qemu-img %q: %v", args, err)
	}
	var qi qemuInfo
	if err := json.Unmarshal(out, &qi); err != nil {
		t.Fatal(err)
	}
	return qi
}

func compareInfo(t *testing.T, h Header, qi qemuInfo) {
	t.Helper()
	d := qi.FormatSpecific.Data
	sizeKnown := h.Format != VHDX && !(h.Format == LUKS && h.Version != 1)
	checks := []struct {
		what      string
		got, want any
	}{
		{"format", h.Format, qi.Format},
		{"backing-filename", h.BackingFile, qi.BackingFilename},
		{"backing-filename-format", h.BackingFormat, qi.BackingFormat},
		{"data-file", h.DataFile, d.DataFile},
		{"data-file-raw", h.DataFileRaw, d.DataFileRaw},
		{"encrypted", h.Encrypted, qi.Encrypted},
	}
	if sizeKnown {
		checks = append(checks, struct {
			what      string
			got, want any
		}{"virtual-size", h.VirtualSize, qi.VirtualSize})
	}
	if h.Format == QCOW2 {
		checks = append(checks, []struct {
			what      string
			got, want any
		}{
			{"cluster-size", uint64(1) << h.ClusterBits, qi.ClusterSize},
			{"compat", map[uint32]string{2: "0.10", 3: "1.1"}[h.Version], d.Compat},
			{"snapshots", int(h.Snapshots), len(qi.Snapshots)},
			{"dirty-flag", h.Dirty, qi.DirtyFlag},
			{"corrupt", h.Corrupt, d.Corrupt},
			{"extended-l2", h.IncompatibleFeatures&IncompatExtendedL2 != 0, d.ExtendedL2},
			{"external data bit", h.ExternalData, d.DataFile != ""},
		}...)
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: Parse says %v, qemu-img %v", c.what, c.got, c.want)
		}
	}
}
