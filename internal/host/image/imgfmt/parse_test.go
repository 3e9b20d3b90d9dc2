package imgfmt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sparse is data followed by zeros up to size, so tests can have large
// files without the bytes.
type sparse struct {
	data []byte
	size int64
}

func (s sparse) ReadAt(p []byte, off int64) (int, error) {
	if off >= s.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), s.size-off)
	for i := range p[:n] {
		p[i] = 0
	}
	if off < int64(len(s.data)) {
		copy(p[:n], s.data[off:])
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

func parseBytes(b []byte) (Header, error) { return Parse(bytes.NewReader(b), int64(len(b))) }

const cl = 512 // the builder's cluster

func TestParseQCOW2(t *testing.T) {
	tests := []struct {
		name string
		img  []byte
		want Header
	}{
		{"v2", q2{version: 2}.build(), Header{Format: QCOW2, Version: 2, VirtualSize: 1 << 20, ClusterBits: 9, L1Size: 32, L1Offset: 2 * cl}},
		{"v3", q2{}.build(), Header{Format: QCOW2, Version: 3, VirtualSize: 1 << 20, ClusterBits: 9, L1Size: 32, L1Offset: 2 * cl}},
		{"backing v2", q2{version: 2, backing: "base.img", exts: []ext{{extBackingFormat, []byte("raw")}}}.build(),
			Header{Format: QCOW2, Version: 2, VirtualSize: 1 << 20, ClusterBits: 9, L1Size: 32, L1Offset: 2 * cl, BackingFile: "base.img", BackingFormat: "raw"}},
		{"backing 1023 at cluster end", q2{backing: strings.Repeat("a", 1023), clusterBits: 16, l1Size: 1, backingOff: 1<<16 - 1023}.build(),
			Header{Format: QCOW2, Version: 3, VirtualSize: 1 << 20, ClusterBits: 16, L1Size: 1, L1Offset: 2 * 65536, BackingFile: strings.Repeat("a", 1023)}},
		{"data file", q2{incompat: IncompatExternalData, autoclear: autoclearDataRaw, exts: []ext{{0x23852875, make([]byte, 24)}, {extDataFile, []byte("/etc/shadow")}}}.build(),
			Header{Format: QCOW2, Version: 3, VirtualSize: 1 << 20, ClusterBits: 9, L1Size: 32, L1Offset: 2 * cl,
				DataFile: "/etc/shadow", ExternalData: true, DataFileRaw: true, IncompatibleFeatures: IncompatExternalData}},
		{"features", q2{incompat: IncompatDirty | IncompatCorrupt | IncompatExtendedL2 | 1<<40, l1Size: 64}.build(),
			Header{Format: QCOW2, Version: 3, VirtualSize: 1 << 20, ClusterBits: 9, L1Size: 64, L1Offset: 2 * cl,
				IncompatibleFeatures: IncompatDirty | IncompatCorrupt | IncompatExtendedL2 | 1<<40, UnknownIncompatible: 1 << 40, Dirty: true, Corrupt: true}},
		{"zstd", q2{ctype: 1, incompat: IncompatCompression}.build(),
			Header{Format: QCOW2, Version: 3, VirtualSize: 1 << 20, ClusterBits: 9, L1Size: 32, L1Offset: 2 * cl, IncompatibleFeatures: IncompatCompression}},
		{"luks", q2{crypt: 2, exts: []ext{{extCrypto, make([]byte, 16)}}}.build(),
			Header{Format: QCOW2, Version: 3, VirtualSize: 1 << 20, ClusterBits: 9, L1Size: 32, L1Offset: 2 * cl, CryptMethod: 2, Encrypted: true}},
		{"aes", q2{version: 2, crypt: 1}.build(),
			Header{Format: QCOW2, Version: 2, VirtualSize: 1 << 20, ClusterBits: 9, L1Size: 32, L1Offset: 2 * cl, CryptMethod: 1, Encrypted: true}},
		{"snapshots", q2{snapshots: 3, snapOff: 3 * cl}.build(),
			Header{Format: QCOW2, Version: 3, VirtualSize: 1 << 20, ClusterBits: 9, L1Size: 32, L1Offset: 2 * cl, Snapshots: 3, SnapshotsOffset: 3 * cl}},
		{"extensions end at file end", q2{fileLen: 104}.build(),
			Header{Format: QCOW2, Version: 3, VirtualSize: 1 << 20, ClusterBits: 9, L1Size: 32, L1Offset: 2 * cl}},
		{"qcow1", qcow1(func(b []byte) {}), Header{Format: QCOW1, Version: 1, VirtualSize: 1 << 20, ClusterBits: 12, BackingFile: "base.img", L1Offset: 4096}},
		{"qcow1 aes", qcow1(func(b []byte) { put32(b, 36, 1) }), Header{Format: QCOW1, Version: 1, VirtualSize: 1 << 20, ClusterBits: 12, BackingFile: "base.img", L1Offset: 4096, CryptMethod: 1, Encrypted: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := parseBytes(tt.img)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, h); d != "" {
				t.Errorf("Parse (-want +got):\n%s", d)
			}
		})
	}
}

// qcow1 is a version 1 header with a backing file, poked by f.
func qcow1(f func([]byte)) []byte {
	b := make([]byte, 1024)
	copy(b, "QFI\xfb")
	put32(b, 4, 1)
	put64(b, 8, 512)
	put32(b, 16, 8)
	put64(b, 24, 1<<20)
	b[32], b[33] = 12, 9
	put64(b, 40, 4096)
	copy(b[512:], "base.img")
	f(b)
	return b
}

func TestParseFormatErrors(t *testing.T) {
	big := q2{clusterBits: 21, l1Size: 1, backing: "far", backingOff: HeadBytes + 512, fileLen: 2 << 20}.build()
	tests := []struct {
		name   string
		img    []byte
		format string
		offset int64
		reason string
	}{
		{"magic only", []byte("QFI\xfb"), QCOW2, 0, "truncated"},
		{"v2 truncated", q2{version: 2}.build()[:71], QCOW2, 0, "truncated"},
		{"v3 truncated", q2{}.build()[:100], QCOW2, 0, "truncated"},
		{"version 0", q2{poke: func(b []byte) { put32(b, 4, 0) }}.build(), QCOW2, 4, "version"},
		{"version 4", q2{version: 4}.build(), QCOW2, 4, "version"},
		{"cluster bits 8", q2{poke: func(b []byte) { put32(b, 20, 8) }}.build(), QCOW2, 20, "cluster_bits"},
		{"cluster bits 22", q2{poke: func(b []byte) { put32(b, 20, 22) }}.build(), QCOW2, 20, "cluster_bits"},
		{"header_length 96", q2{hdrLen: 96}.build(), QCOW2, 100, "below 104"},
		{"header_length 108", q2{hdrLen: 108}.build(), QCOW2, 100, "multiple of 8"},
		{"header_length past cluster", q2{hdrLen: 1024}.build(), QCOW2, 100, "exceeds the cluster"},
		{"header_length past file", q2{hdrLen: 256, fileLen: 200}.build(), QCOW2, 0, "past the end of the file"},
		{"refcount_order 7", q2{poke: func(b []byte) { put32(b, 96, 7) }}.build(), QCOW2, 96, "refcount_order"},
		{"compression type 2", q2{ctype: 2, incompat: IncompatCompression}.build(), QCOW2, 104, "compression_type"},
		{"compression bit, zlib", q2{incompat: IncompatCompression}.build(), QCOW2, 72, "compression type bit"},
		{"zstd without bit", q2{ctype: 1}.build(), QCOW2, 104, "without"},
		{"crypt_method 3", q2{crypt: 3}.build(), QCOW2, 32, "crypt_method"},
		{"l1 too large", q2{l1Size: 4<<20 + 1}.build(), QCOW2, 36, "L1 table claims"},
		{"l1 too small", q2{l1Size: 31}.build(), QCOW2, 36, "too small"},
		{"image too big", q2{size: 1<<63 - 1, l1Size: 1}.build(), QCOW2, 24, "too big"},
		{"l1 misaligned", q2{l1Off: 1000}.build(), QCOW2, 40, "L1 table"},
		{"l1 past int64", q2{l1Off: 1 << 63}.build(), QCOW2, 40, "L1 table"},
		{"refcount table too large", q2{poke: func(b []byte) { put32(b, 56, 1<<14+1) }}.build(), QCOW2, 56, "refcount_table_clusters"},
		{"refcount table misaligned", q2{poke: func(b []byte) { put64(b, 48, 7) }}.build(), QCOW2, 48, "refcount table"},
		{"too many snapshots", q2{snapshots: 65537, snapOff: cl}.build(), QCOW2, 60, "internal snapshots"},
		{"snapshots misaligned", q2{snapshots: 1, snapOff: 100}.build(), QCOW2, 64, "snapshot table"},
		{"backing offset past cluster", q2{backing: "b", backingOff: cl + 8}.build(), QCOW2, 8, "beyond the first cluster"},
		{"backing 1024 bytes", q2{clusterBits: 16, l1Size: 1, backing: strings.Repeat("a", 1024)}.build(), QCOW2, 16, "too long"},
		{"backing past cluster", q2{backing: "abcdefgh", backingOff: cl - 4}.build(), QCOW2, 16, "too long"},
		{"backing past file", q2{backing: "abcdefgh", fileLen: 116}.build(), QCOW2, 112, "end of the file"},
		{"backing past head", big, QCOW2, HeadBytes + 512, "first 1048576"},
		{"backing NUL", q2{backing: "ok\x00/etc/passwd"}.build(), QCOW2, 114, "NUL"},
		{"extension header past area", q2{backing: "b", backingOff: 108}.build(), QCOW2, 104, "extension header"},
		{"extension too long", q2{poke: func(b []byte) { put32(b, 104, 1); put32(b, 108, 500) }}.build(), QCOW2, 104, "runs past the end of the extension area"},
		{"extension len wraps", q2{poke: func(b []byte) { put32(b, 104, extDataFile); put32(b, 108, 0xffffffff) }}.build(), QCOW2, 104, "runs past"},
		{"backing format 16", q2{exts: []ext{{extBackingFormat, []byte("0123456789abcdef")}}}.build(), QCOW2, 108, "backing format"},
		{"backing format NUL", q2{exts: []ext{{extBackingFormat, []byte("raw\x00")}}}.build(), QCOW2, 115, "NUL"},
		{"data file twice", q2{exts: []ext{{extDataFile, []byte("a")}, {extDataFile, []byte("b")}}}.build(), QCOW2, 120, "twice"},
		{"data file NUL", q2{exts: []ext{{extDataFile, []byte("a\x00b")}}}.build(), QCOW2, 113, "NUL"},
		{"crypto without luks", q2{exts: []ext{{extCrypto, make([]byte, 16)}}}.build(), QCOW2, 104, "crypt_method 0"},
		{"crypto size", q2{crypt: 2, exts: []ext{{extCrypto, make([]byte, 8)}}}.build(), QCOW2, 108, "want 16"},
		{"qcow1 truncated", qcow1(func([]byte) {})[:40], QCOW1, 0, "truncated"},
		{"qcow1 size", qcow1(func(b []byte) { put64(b, 24, 1) }), QCOW1, 24, "size"},
		{"qcow1 cluster_bits", qcow1(func(b []byte) { b[32] = 17 }), QCOW1, 32, "cluster_bits"},
		{"qcow1 l2_bits", qcow1(func(b []byte) { b[33] = 5 }), QCOW1, 33, "l2_bits"},
		{"qcow1 crypt", qcow1(func(b []byte) { put32(b, 36, 2) }), QCOW1, 36, "crypt_method"},
		{"qcow1 backing long", qcow1(func(b []byte) { put32(b, 16, 1024) }), QCOW1, 16, "above 1023"},
		{"qcow1 backing past file", qcow1(func(b []byte) { put64(b, 8, 1020) }), QCOW1, 1020, "end of the file"},
		{"qed backing long", qed(func(b []byte) { le32(b, 60, 1024) }), QED, 60, "above 1023"},
		{"qed backing past file", qed(func(b []byte) { le32(b, 56, 4090) }), QED, 4090, "end of the file"},
		{"qed truncated", qed(func([]byte) {})[:60], QED, 0, "truncated"},
		{"vmdk truncated", []byte("KDMV\x01\x00\x00\x00"), VMDK, 0, "truncated"},
		{"vmdk descriptor far", vmdkSparse(func(b []byte) { le64(b, 28, 1<<40) }), VMDK, 28, "beyond"},
		{"vmdk descriptor past file", vmdkSparse(func(b []byte) { le64(b, 36, 100) }), VMDK, 512, "end of the file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := parseBytes(tt.img)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse = %+v, %v; want a FormatError", h, err)
			}
			if fe.Format != tt.format || fe.Offset != tt.offset || !strings.Contains(fe.Reason, tt.reason) {
				t.Errorf("FormatError %+v, want format %s, offset %d, reason with %q", fe, tt.format, tt.offset, tt.reason)
			}
			if !strings.Contains(fe.Error(), tt.format+" header at byte ") {
				t.Errorf("Error() = %q", fe.Error())
			}
		})
	}
}

func le32(b []byte, off int, v uint32) { binary.LittleEndian.PutUint32(b[off:], v) }
func le64(b []byte, off int, v uint64) { binary.LittleEndian.PutUint64(b[off:], v) }

// qed is a QED header with a raw backing file, poked by f.
func qed(f func([]byte)) []byte {
	b := make([]byte, 4096)
	copy(b, "QED\x00")
	le32(b, 4, 65536)
	le32(b, 8, 4)
	le32(b, 12, 1)
	le64(b, 16, 1|4)
	le64(b, 48, 1<<30)
	le32(b, 56, 64)
	le32(b, 60, 8)
	copy(b[64:], "base.img")
	f(b)
	return b
}

const descriptor = `# Disk DescriptorFile
version=1
CID=fffffffe
parentCID=ffffffff
parentFileNameHint="parent.vmdk"
createType="monolithicFlat"

# Extent description
RW 2048 FLAT "disk-flat.vmdk" 0
RDONLY 1024 SPARSE "/dev/sda"
NOACCESS 512 ZERO
`

// vmdkSparse is a sparse VMDK header with the descriptor embedded at
// sector 1, poked by f.
func vmdkSparse(f func([]byte)) []byte {
	b := make([]byte, 2048)
	copy(b, "KDMV")
	le32(b, 4, 1)
	le64(b, 12, 8192)
	le64(b, 28, 1)
	le64(b, 36, 2)
	copy(b[512:], descriptor)
	f(b)
	return b
}

func TestParseOthers(t *testing.T) {
	footer := func(creator string, cyl uint16, heads, secs byte, size uint64) []byte {
		b := make([]byte, 512)
		copy(b, "conectix")
		put32(b, 12, 0x10000)
		copy(b[28:], creator)
		put64(b, 48, size)
		binary.BigEndian.PutUint16(b[56:], cyl)
		b[58], b[59] = heads, secs
		return b
	}
	at := func(off int, s string, n int) []byte { b := make([]byte, n); copy(b[off:], s); return b }
	vdi := at(0, "<<< Oracle VM VirtualBox Disk Image >>>\n", 512)
	le32(vdi, 0x40, 0xbeda107f)
	le32(vdi, 0x44, 0x10001)
	le64(vdi, 0x170, 1<<30)
	luks := at(0, "LUKS\xba\xbe\x00\x01", 8192)
	put32(luks, 104, 4)
	par := at(0, "WithoutFreeSpace", 512)
	le32(par, 16, 2)
	le64(par, 36, 2048)
	koly := at(4096-512, "koly", 4096)
	put64(koly, 4096-512+0x1ec, 100)
	tests := []struct {
		name string
		img  []byte
		want Header
	}{
		{"empty", nil, Header{Format: Raw}},
		{"short", []byte("QF"), Header{Format: Raw, VirtualSize: 2}},
		{"zeros", make([]byte, 4096), Header{Format: Raw, VirtualSize: 4096}},
		{"qed", qed(func([]byte) {}), Header{Format: QED, VirtualSize: 1 << 30, BackingFile: "base.img", BackingFormat: Raw}},
		{"qed no backing", qed(func(b []byte) { le64(b, 16, 0) }), Header{Format: QED, VirtualSize: 1 << 30}},
		{"vmdk sparse", vmdkSparse(func([]byte) {}), Header{Format: VMDK, Version: 1, VirtualSize: 8192 * 512,
			BackingFile: "parent.vmdk", Extents: []string{"disk-flat.vmdk", "/dev/sda"}}},
		{"vmdk text", []byte(descriptor), Header{Format: VMDK, VirtualSize: 3584 * 512, BackingFile: "parent.vmdk", Extents: []string{"disk-flat.vmdk", "/dev/sda"}}},
		{"vmdk text after comments", []byte("\n  \n# made by hand\r\n" + descriptor), Header{Format: VMDK, VirtualSize: 3584 * 512, BackingFile: "parent.vmdk", Extents: []string{"disk-flat.vmdk", "/dev/sda"}}},
		{"vmdk text, QEMU's probe", []byte("# x\nversion=1\nRW 8 FLAT \"x\" 0\n"), Header{Format: VMDK, VirtualSize: 8 * 512, Extents: []string{"x"}}},
		{"not vmdk", []byte("# x\nhello\nRW 8 FLAT \"x\" 0\n"), Header{Format: Raw, VirtualSize: 26}},
		{"vmdk3", at(0, "COWD", 512), Header{Format: VMDK, Version: 3}},
		{"vhdx", at(0, "vhdxfile", 1024), Header{Format: VHDX}},
		{"vhd dynamic chs", append(footer("qemu", 100, 16, 63, 1<<30), make([]byte, 512)...), Header{Format: VHD, Version: 0x10000, VirtualSize: 100 * 16 * 63 * 512}},
		{"vhd fixed hyper-v", append(make([]byte, 4096), footer("win ", 100, 16, 63, 1<<20)...), Header{Format: VHD, Version: 0x10000, VirtualSize: 1 << 20}},
		{"vhd max chs", footer("vpc ", 65535, 16, 255, 1<<40), Header{Format: VHD, Version: 0x10000, VirtualSize: 1 << 40}},
		{"vdi", vdi, Header{Format: VDI, Version: 0x10001, VirtualSize: 1 << 30}},
		{"vdi text only", at(0, "<<< Sun VirtualBox Disk Image >>>\n", 64), Header{Format: VDI}},
		{"luks1", luks, Header{Format: LUKS, Version: 1, Encrypted: true, VirtualSize: 8192 - 2048}},
		{"luks2", at(0, "LUKS\xba\xbe\x00\x02", 4096), Header{Format: LUKS, Version: 2, Encrypted: true}},
		{"iso", at(0x8001, "CD001", 0x9000), Header{Format: ISO, VirtualSize: 0x9000}},
		{"parallels", par, Header{Format: Parallels, Version: 2, VirtualSize: 2048 * 512}},
		{"parallels ext", at(0, "WithouFreSpacExt", 64), Header{Format: Parallels}},
		{"dmg", koly, Header{Format: DMG, VirtualSize: 100 * 512}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := parseBytes(tt.img)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, h); d != "" {
				t.Errorf("Parse (-want +got):\n%s", d)
			}
		})
	}
}

// TestParseLargeFile: the tail of a file past the head is read on its
// own; a raw file's size is the caller's.
func TestParseLargeFile(t *testing.T) {
	const size = 10 << 30
	h, err := Parse(sparse{size: size}, size)
	if err != nil || !cmp.Equal(h, Header{Format: Raw, VirtualSize: size}) {
		t.Fatalf("Parse = %+v, %v", h, err)
	}
	f := make([]byte, 512)
	copy(f, "conectix")
	copy(f[28:], "win ")
	put64(f, 48, 1<<33)
	h, err = Parse(tailReader{sparse{size: size}, f}, size)
	if err != nil || h.Format != VHD || h.VirtualSize != 1<<33 {
		t.Fatalf("Parse = %+v, %v", h, err)
	}
}

// tailReader puts tail at the end of r.
type tailReader struct {
	sparse
	tail []byte
}

func (r tailReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.sparse.ReadAt(p, off)
	start := r.size - int64(len(r.tail))
	for i := range p[:n] {
		if o := off + int64(i); o >= start {
			p[i] = r.tail[o-start]
		}
	}
	return n, err
}

func TestParseReadErrors(t *testing.T) {
	if _, err := Parse(bytes.NewReader([]byte("QFI")), 100); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("file shorter than its size: %v", err)
	}
	if _, err := Parse(bytes.NewReader(nil), -1); err == nil {
		t.Error("negative size: no error")
	}
	boom := errors.New("boom")
	if _, err := Parse(errReader{boom}, 4096); !errors.Is(err, boom) {
		t.Errorf("read error: %v", err)
	}
}

type errReader struct{ err error }

func (r errReader) ReadAt([]byte, int64) (int, error) { return 0, r.err }
