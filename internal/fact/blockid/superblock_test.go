package blockid

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/blockid/blocktest"
)

// fixture returns the decompressed head of a real image from
// testdata/images (made by make.sh with the real mkfs tools).
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "images", name+".img.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestProbeRealImages compares Probe with what blkid said about the same
// images when they were made (testdata/images/*.blkid).
func TestProbeRealImages(t *testing.T) {
	sizes := map[string]int64{ // from the mkfs invocations in make.sh
		"ext2": 8 << 20, "ext3": 8 << 20, "ext4": 48 << 20, "xfs": 300 << 20,
		"btrfs": 128 << 20, "vfat": 64 << 20, "vfat16": 16 << 20, "swap": 16 << 20,
	}
	for name, size := range sizes {
		t.Run(name, func(t *testing.T) {
			exp, err := os.ReadFile(filepath.Join("testdata", "images", name+".blkid"))
			if err != nil {
				t.Fatal(err)
			}
			want := blocktest.ParseExport(string(exp))
			sb, err := Probe(bytes.NewReader(fixture(t, name)))
			if err != nil {
				t.Fatal(err)
			}
			if sb.Type != want["TYPE"] || sb.UUID != want["UUID"] || sb.Label != want["LABEL"] {
				t.Errorf("Probe = %+v, blkid said TYPE=%s UUID=%s LABEL=%q", sb, want["TYPE"], want["UUID"], want["LABEL"])
			}
			if sb.Size != size {
				t.Errorf("Size = %d, want %d", sb.Size, size)
			}
		})
	}
}

func TestProbeSynthetic(t *testing.T) {
	const u = "0a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d"
	cases := []struct {
		name string
		img  []byte
		want Superblock
		none bool
	}{
		{"ext2", blocktest.Ext{Type: "ext2", UUID: u, Label: "boot", Blocks: 1024}.Image(),
			Superblock{Type: "ext2", UUID: u, Label: "boot", Size: 1 << 20, Devices: 1}, false},
		{"ext3", blocktest.Ext{Type: "ext3", UUID: u, Blocks: 2048, LogBlockSize: 2}.Image(),
			Superblock{Type: "ext3", UUID: u, Size: 8 << 20, Devices: 1}, false},
		{"ext4 64bit", blocktest.Ext{Type: "ext4", UUID: u, Label: "a-sixteen-char-l", Blocks: 1 << 33, LogBlockSize: 2}.Image(),
			Superblock{Type: "ext4", UUID: u, Label: "a-sixteen-char-l", Size: 32 << 40, Devices: 1}, false},
		{"ext4 csum", blocktest.Ext{Type: "ext4", UUID: u, Label: "root", Blocks: 10, MetadataCsum: true}.Image(),
			Superblock{Type: "ext4", UUID: u, Label: "root", Size: 10240, Devices: 1}, false},
		{"ext4 bad csum", blocktest.Ext{Type: "ext4", UUID: u, MetadataCsum: true, BadCsum: true}.Image(), Superblock{}, true},
		{"ext zero uuid", blocktest.Ext{Type: "ext4", Label: "x"}.Image(), Superblock{Type: "ext4", Label: "x", Devices: 1}, false},
		{"jbd", blocktest.Ext{Type: "ext4", UUID: u, JournalDev: true}.Image(), Superblock{Type: "jbd", UUID: u, Devices: 1}, false},
		{"xfs", blocktest.XFS{UUID: u, Label: "data", BlockSize: 4096, Blocks: 1000}.Image(),
			Superblock{Type: "xfs", UUID: u, Label: "data", Size: 4096000, Devices: 1}, false},
		{"xfs bad block size", blocktest.XFS{UUID: u, BlockSize: 3000}.Image(), Superblock{}, true},
		{"btrfs", blocktest.Btrfs{UUID: u, Label: "pool", DevSize: 1 << 30}.Image(),
			Superblock{Type: "btrfs", UUID: u, Label: "pool", Size: 1 << 30, Devices: 1}, false},
		{"btrfs raid member", blocktest.Btrfs{UUID: u, DevSize: 1 << 30, Devices: 2}.Image(),
			Superblock{Type: "btrfs", UUID: u, Size: 1 << 30, Devices: 2}, false},
		{"btrfs bad csum", blocktest.Btrfs{UUID: u, DevSize: 1 << 30, BadCsum: true}.Image(), Superblock{}, true},
		{"swap", blocktest.Swap{UUID: u, Label: "swap0", Pages: 256}.Image(),
			Superblock{Type: "swap", UUID: u, Label: "swap0", Size: 1 << 20, Devices: 1}, false},
		{"swap 64k pages", blocktest.Swap{UUID: u, PageSize: 65536, Pages: 16}.Image(),
			Superblock{Type: "swap", UUID: u, Size: 1 << 20, Devices: 1}, false},
		{"swap big-endian", blocktest.Swap{UUID: u, Pages: 2, BigEndian: true}.Image(),
			Superblock{Type: "swap", UUID: u, Size: 8192, Devices: 1}, false},
		{"swap v0", blocktest.Swap{Version0: true}.Image(), Superblock{Type: "swap", Devices: 1}, false},
		{"fat32", blocktest.FAT{Bits: 32, Serial: 0x1234ABCD, Label: "EFI", BootLabel: "EFI"}.Image(),
			Superblock{Type: "vfat", UUID: "1234-ABCD", Label: "EFI", Size: 70000 * 512, Devices: 1}, false},
		{"fat16", blocktest.FAT{Bits: 16, Serial: 0xDEADBEEF, Label: "CIDATA"}.Image(),
			Superblock{Type: "vfat", UUID: "DEAD-BEEF", Label: "CIDATA", Size: 32768 * 512, Devices: 1}, false},
		// blkid's LABEL is the root-directory entry only: a boot-sector
		// label alone is LABEL_FATBOOT, not LABEL.
		{"fat boot label only", blocktest.FAT{Bits: 32, Serial: 1, BootLabel: "cidata"}.Image(),
			Superblock{Type: "vfat", UUID: "0000-0001", Size: 70000 * 512, Devices: 1}, false},
		{"fat deleted label skipped", blocktest.FAT{Bits: 16, Serial: 2, Label: "NEW", DeletedFirst: true}.Image(),
			Superblock{Type: "vfat", UUID: "0000-0002", Label: "NEW", Size: 32768 * 512, Devices: 1}, false},
		{"empty", make([]byte, 128<<10), Superblock{}, true},
		{"tiny", []byte("XFSB"), Superblock{}, true},
		{"gpt disk is not a filesystem", blocktest.GPT{DiskGUID: u}.Image(), Superblock{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sb, err := Probe(bytes.NewReader(c.img))
			if c.none {
				if !errors.Is(err, ErrNoFilesystem) {
					t.Fatalf("Probe = %+v, %v; want ErrNoFilesystem", sb, err)
				}
				return
			}
			if err != nil || sb != c.want {
				t.Fatalf("Probe = %+v, %v\nwant %+v", sb, err, c.want)
			}
		})
	}
}

// failingReader fails every read, as a disk with I/O errors does.
type failingReader struct{}

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errors.New("input/output error") }

func TestProbeIOError(t *testing.T) {
	if _, err := Probe(failingReader{}); err == nil || errors.Is(err, ErrNoFilesystem) || !strings.Contains(err.Error(), "input/output error") {
		t.Errorf("Probe on a failing disk = %v, want the I/O error", err)
	}
}

// countingReader counts the bytes requested, to hold Probe to its bound.
type countingReader struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.n.Add(int64(len(p)))
	return c.r.ReadAt(p, off)
}

func FuzzProbe(f *testing.F) {
	for _, name := range []string{"ext4", "xfs", "btrfs", "vfat", "vfat16", "swap"} {
		f.Add(fixture(f, name))
	}
	f.Add(blocktest.FAT{Bits: 32, Serial: 7, Label: "X"}.Image())
	f.Add(blocktest.Swap{UUID: "0a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d", Pages: 3}.Image())
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &countingReader{r: bytes.NewReader(b)}
		sb, err := Probe(c)
		if err != nil && !errors.Is(err, ErrNoFilesystem) {
			t.Fatalf("Probe of in-memory bytes failed: %v", err)
		}
		if c.n.Load() > ProbeReadLimit {
			t.Fatalf("Probe read %d bytes", c.n.Load())
		}
		if err == nil {
			if sb.Type == "" || sb.Size < 0 || sb.Devices < 1 {
				t.Fatalf("bad superblock %+v", sb)
			}
			if n := len(sb.UUID); n != 0 && n != 36 && n != 9 {
				t.Fatalf("bad UUID %q", sb.UUID)
			}
		}
		_, _ = ReadPartitionTable(c, 512)
	})
}
