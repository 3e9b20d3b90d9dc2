// Package blocktest builds what the block-device tests (blockid, disk,
// image) need: synthetic superblock and partition-table bytes, fake
// /sys/class/block and /dev trees under an image root, and (for root-only
// tests) real loop devices formatted with the mkfs tools. Only tests
// import it.
package blocktest

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"strings"
	"unicode/utf16"
)

var (
	le         = binary.LittleEndian
	be         = binary.BigEndian
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// UUIDBytes parses "0a1b2c3d-..." into its 16 bytes in the order blkid
// prints them (filesystem UUIDs are stored that way). It panics on bad
// input: callers pass literals.
func UUIDBytes(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	if err != nil || len(b) != 16 {
		panic(fmt.Sprintf("bad UUID %q", s))
	}
	return b
}

// GUIDBytes encodes a GUID as GPT stores it: the first three fields
// little-endian.
func GUIDBytes(s string) []byte {
	b := UUIDBytes(s)
	out := append([]byte(nil), b...)
	for _, r := range [][2]int{{0, 4}, {4, 6}, {6, 8}} {
		for i, j := r[0], r[1]-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// Ext describes an ext2/3/4 superblock to synthesise.
type Ext struct {
	Type         string // "ext2", "ext3" or "ext4"
	UUID, Label  string
	Blocks       uint64
	LogBlockSize uint32 // block size is 1024 << LogBlockSize
	MetadataCsum bool   // set metadata_csum and a valid checksum
	BadCsum      bool   // with MetadataCsum: store a wrong checksum
	JournalDev   bool   // an external journal device ("jbd")
}

// Image returns 2 KiB: the boot block and the superblock.
func (e Ext) Image() []byte {
	img := make([]byte, 2048)
	sb := img[1024:]
	le.PutUint32(sb[0x04:], uint32(e.Blocks))
	le.PutUint32(sb[0x18:], e.LogBlockSize)
	le.PutUint16(sb[0x38:], 0xEF53)
	var compat, incompat, ro uint32 = 0, 0x2, 0x1 // filetype, sparse_super
	switch e.Type {
	case "ext3":
		compat |= 0x4
	case "ext4":
		compat |= 0x4
		incompat |= 0x40 | 0x200 // extents, flex_bg
		if e.Blocks>>32 != 0 {
			incompat |= 0x80
		}
	}
	if e.JournalDev {
		incompat |= 0x8
	}
	if e.MetadataCsum {
		ro |= 0x400
	}
	le.PutUint32(sb[0x5C:], compat)
	le.PutUint32(sb[0x60:], incompat)
	le.PutUint32(sb[0x64:], ro)
	le.PutUint32(sb[0x150:], uint32(e.Blocks>>32))
	if e.UUID != "" {
		copy(sb[0x68:0x78], UUIDBytes(e.UUID))
	}
	copy(sb[0x78:0x88], e.Label)
	if e.MetadataCsum {
		sum := ^crc32.Checksum(sb[:0x3FC], castagnoli)
		if e.BadCsum {
			sum++
		}
		le.PutUint32(sb[0x3FC:], sum)
	}
	return img
}

// XFS describes an xfs superblock.
type XFS struct {
	UUID, Label string
	BlockSize   uint32
	Blocks      uint64
}

// Image returns the first 512 bytes.
func (x XFS) Image() []byte {
	img := make([]byte, 512)
	copy(img, "XFSB")
	be.PutUint32(img[4:], x.BlockSize)
	be.PutUint64(img[8:], x.Blocks)
	if x.UUID != "" {
		copy(img[32:48], UUIDBytes(x.UUID))
	}
	copy(img[108:120], x.Label)
	return img
}

// Btrfs describes a btrfs superblock.
type Btrfs struct {
	UUID, Label string
	DevSize     uint64
	Devices     uint64
	BadCsum     bool
}

// Image returns the first 68 KiB (the superblock sits at 64 KiB).
func (b Btrfs) Image() []byte {
	img := make([]byte, 0x11000)
	sb := img[0x10000:]
	copy(sb[0x20:0x30], UUIDBytes(b.UUID))
	copy(sb[0x40:], "_BHRfS_M")
	le.PutUint64(sb[0x70:], b.DevSize*max(b.Devices, 1))
	le.PutUint64(sb[0x88:], max(b.Devices, 1))
	le.PutUint64(sb[0xC9+8:], b.DevSize)
	copy(sb[0x12B:0x22B], b.Label)
	sum := crc32.Checksum(sb[0x20:0x1000], castagnoli)
	if b.BadCsum {
		sum++
	}
	le.PutUint32(sb[0:], sum)
	return img
}

// Swap describes a swap area header.
type Swap struct {
	UUID, Label string
	PageSize    int // default 4096
	Pages       uint32
	Version0    bool // the old "SWAP-SPACE" signature without UUID
	BigEndian   bool
}

// Image returns the first page.
func (s Swap) Image() []byte {
	ps := s.PageSize
	if ps == 0 {
		ps = 4096
	}
	img := make([]byte, ps)
	if s.Version0 {
		copy(img[ps-10:], "SWAP-SPACE")
		return img
	}
	copy(img[ps-10:], "SWAPSPACE2")
	var order binary.ByteOrder = le
	if s.BigEndian {
		order = be
	}
	order.PutUint32(img[1024:], 1)
	order.PutUint32(img[1028:], s.Pages-1)
	if s.UUID != "" {
		copy(img[1036:1052], UUIDBytes(s.UUID))
	}
	copy(img[1052:1068], s.Label)
	return img
}

// FAT describes a FAT16 or FAT32 volume.
type FAT struct {
	Bits      int // 16 or 32
	Serial    uint32
	Label     string // root-directory volume label (blkid's LABEL); "" for none
	BootLabel string // the boot sector's copy (LABEL_FATBOOT); "NO NAME" when empty
	// DeletedFirst puts a deleted label entry before the live one.
	DeletedFirst bool
}

// Image returns the volume up to the end of its root directory.
func (f FAT) Image() []byte {
	pad := func(s string) []byte { return []byte(fmt.Sprintf("%-11s", s)[:11]) }
	boot := f.BootLabel
	if boot == "" {
		boot = "NO NAME"
	}
	var img []byte
	var rootOff int
	switch f.Bits {
	case 16:
		const total, reserved, fats, rootEntries, fatLen, spc = 32768, 4, 2, 512, 32, 4
		rootOff = (reserved + fats*fatLen) * 512
		img = make([]byte, rootOff+rootEntries*32)
		hdr(img, spc, reserved, fats, rootEntries)
		le.PutUint16(img[19:], total)
		le.PutUint16(img[22:], fatLen)
		img[38] = 0x29
		le.PutUint32(img[39:], f.Serial)
		copy(img[43:54], pad(boot))
		copy(img[54:62], "FAT16   ")
	case 32:
		const total, reserved, fats, fatLen, spc = 70000, 32, 2, 546, 1
		rootOff = (reserved + fats*fatLen) * 512 // cluster 2
		img = make([]byte, rootOff+512)
		hdr(img, spc, reserved, fats, 0)
		le.PutUint32(img[32:], total)
		le.PutUint32(img[36:], fatLen)
		le.PutUint32(img[44:], 2) // root cluster
		img[66] = 0x29
		le.PutUint32(img[67:], f.Serial)
		copy(img[71:82], pad(boot))
		copy(img[82:90], "FAT32   ")
		le.PutUint32(img[reserved*512+8:], 0x0FFFFFFF) // root chain ends at once
	default:
		panic("FAT bits must be 16 or 32")
	}
	root := img[rootOff:]
	if f.DeletedFirst {
		copy(root[0:11], pad("OLDLABEL"))
		root[0] = 0xE5
		root[11] = 0x08
		root = root[32:]
	}
	if f.Label != "" {
		copy(root[0:11], pad(f.Label))
		root[11] = 0x08
	}
	return img
}

func hdr(img []byte, spc byte, reserved uint16, fats byte, rootEntries uint16) {
	copy(img, []byte{0xEB, 0x3C, 0x90})
	copy(img[3:11], "mkfs.fat")
	le.PutUint16(img[11:], 512)
	img[13] = spc
	le.PutUint16(img[14:], reserved)
	img[16] = fats
	le.PutUint16(img[17:], rootEntries)
	img[21] = 0xF8
	img[510], img[511] = 0x55, 0xAA
}

// GPTPart is one GPT entry.
type GPTPart struct {
	Type, UUID, Name string
	First, Last      uint64
}

// GPT describes a GUID partition table.
type GPT struct {
	DiskGUID   string
	SectorSize int // default 512
	Entries    int // entry count; default 128
	Parts      []GPTPart
	// Gap leaves unused entries before the partitions (numbering counts them).
	Gap int
	// CorruptHeader stores a wrong header CRC.
	CorruptHeader bool
}

// Image returns the protective MBR, header and entry array.
func (g GPT) Image() []byte {
	ss := g.SectorSize
	if ss == 0 {
		ss = 512
	}
	n := g.Entries
	if n == 0 {
		n = 128
	}
	arr := make([]byte, n*128)
	for i, p := range g.Parts {
		e := arr[(i+g.Gap)*128:]
		copy(e[0:16], GUIDBytes(p.Type))
		copy(e[16:32], GUIDBytes(p.UUID))
		le.PutUint64(e[32:], p.First)
		le.PutUint64(e[40:], p.Last)
		u := utf16.Encode([]rune(p.Name))
		for j, c := range u {
			le.PutUint16(e[56+2*j:], c)
		}
	}
	img := make([]byte, 2*ss+len(arr))
	img[446+4] = 0xEE
	le.PutUint32(img[446+8:], 1)
	le.PutUint32(img[446+12:], 0xFFFFFFFF)
	img[510], img[511] = 0x55, 0xAA
	h := img[ss:]
	copy(h, "EFI PART")
	le.PutUint32(h[8:], 0x00010000)
	le.PutUint32(h[12:], 92)
	le.PutUint64(h[24:], 1)
	le.PutUint64(h[40:], 34)
	copy(h[56:72], GUIDBytes(g.DiskGUID))
	le.PutUint64(h[72:], 2)
	le.PutUint32(h[80:], uint32(n))
	le.PutUint32(h[84:], 128)
	le.PutUint32(h[88:], crc32.ChecksumIEEE(arr))
	sum := crc32.ChecksumIEEE(h[:92])
	if g.CorruptHeader {
		sum++
	}
	le.PutUint32(h[16:], sum)
	copy(img[2*ss:], arr)
	return img
}

// MBRPart is one MBR or EBR entry; Start is relative as in the on-disk format.
type MBRPart struct {
	Type           byte
	Start, Sectors uint32
}

// MBR describes a DOS partition table; Logical partitions are chained in
// EBRs inside the first extended primary partition.
type MBR struct {
	Signature uint32
	Primary   [4]MBRPart
	Logical   []MBRPart
}

// Image returns enough bytes to hold every EBR.
func (m MBR) Image() []byte {
	size := 512
	var ext uint32
	for _, p := range m.Primary {
		if p.Type == 0x05 || p.Type == 0x0F {
			ext = p.Start
		}
	}
	// EBR i sits at ext + i*4096 sectors. A logical entry's Start is
	// relative to its own EBR; the link to the next EBR is relative to the
	// extended partition's start.
	if len(m.Logical) > 0 {
		size = int(ext+uint32(len(m.Logical))*4096)*512 + 512
	}
	img := make([]byte, size)
	le.PutUint32(img[440:], m.Signature)
	for i, p := range m.Primary {
		e := img[446+16*i:]
		e[4] = p.Type
		le.PutUint32(e[8:], p.Start)
		le.PutUint32(e[12:], p.Sectors)
	}
	img[510], img[511] = 0x55, 0xAA
	for i, p := range m.Logical {
		ebr := img[int(ext+uint32(i)*4096)*512:]
		le.PutUint32(ebr[446+8:], p.Start)
		ebr[446+4] = p.Type
		le.PutUint32(ebr[446+12:], p.Sectors)
		if i+1 < len(m.Logical) {
			n := ebr[446+16:]
			n[4] = 0x05
			le.PutUint32(n[8:], uint32(i+1)*4096) // relative to the extended partition
			le.PutUint32(n[12:], 4096)
		}
		ebr[510], ebr[511] = 0x55, 0xAA
	}
	return img
}
