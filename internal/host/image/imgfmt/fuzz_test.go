package imgfmt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// bounded checks every read against the caps Parse promises: the first
// HeadBytes and the last TailBytes of the file.
type bounded struct {
	sparse
	read int64
	bad  []string
}

func (b *bounded) ReadAt(p []byte, off int64) (int, error) {
	end := off + int64(len(p))
	inHead := off >= 0 && end <= HeadBytes
	inTail := off >= b.size-TailBytes && end <= b.size
	if !inHead && !inTail {
		b.bad = append(b.bad, fmt.Sprintf("read [%d,%d) of a %d-byte file", off, end, b.size))
	}
	b.read += int64(len(p))
	return b.sparse.ReadAt(p, off)
}

// FuzzParse: Parse never panics, reads only within its caps, fails only
// with a FormatError on a reader that does not fail, and never returns
// a qcow2 backing file name longer than QEMU's 1023 bytes. The file is
// the input followed by pad zero bytes, so sizes past the head occur.
func FuzzParse(f *testing.F) {
	seeds, err := filepath.Glob("testdata/seeds/*")
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range seeds {
		if filepath.Ext(p) == ".sh" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint32(0))
		f.Add(b, uint32(HeadBytes))
	}
	f.Add(q2{backing: "base", exts: []ext{{extDataFile, []byte("d")}, {extBackingFormat, []byte("raw")}}}.build(), uint32(0))
	f.Add(qcow1(func([]byte) {}), uint32(0))
	f.Add(qed(func([]byte) {}), uint32(0))
	f.Add(vmdkSparse(func([]byte) {}), uint32(0))
	f.Add([]byte(descriptor), uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, pad uint32) {
		r := &bounded{sparse: sparse{data: data, size: int64(len(data)) + int64(pad)}}
		h, err := Parse(r, r.size)
		if len(r.bad) > 0 {
			t.Fatalf("out of bounds: %v", r.bad)
		}
		if r.read > HeadBytes+TailBytes {
			t.Fatalf("read %d bytes", r.read)
		}
		var fe *FormatError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("error %v is not a FormatError", err)
		}
		if err != nil {
			return
		}
		if h.Format == "" {
			t.Fatal("no format")
		}
		if (h.Format == QCOW2 || h.Format == QCOW1 || h.Format == QED) && len(h.BackingFile) > maxBackingName {
			t.Fatalf("%s backing file of %d bytes", h.Format, len(h.BackingFile))
		}
	})
}

// TestSeedsParse: each committed seed is a real image's head, and Parse
// reads it as the format qemu-img made.
func TestSeedsParse(t *testing.T) {
	want := map[string]string{".qcow2": QCOW2, ".qcow": QCOW1, ".qed": QED, ".vmdk": VMDK, ".vhd": VHD,
		".vhdx": VHDX, ".vdi": VDI, ".hdd": Parallels, ".luks": LUKS}
	seeds, _ := filepath.Glob("testdata/seeds/*")
	n := 0
	for _, p := range seeds {
		format, ok := want[filepath.Ext(p)]
		if !ok {
			continue
		}
		n++
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		h, err := parseBytes(b)
		if err != nil || h.Format != format {
			t.Errorf("%s: Parse = %s, %v; want %s", p, h.Format, err, format)
		}
	}
	if n < 20 {
		t.Errorf("%d seeds; make.sh makes 26", n)
	}
}
