package blockid

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"sync"
)

// Superblock is what Probe learns from a filesystem's on-disk header: the
// values blkid reports as TYPE, UUID and LABEL, plus the size the
// filesystem believes it spans.
type Superblock struct {
	// Type is "ext2", "ext3", "ext4", "jbd", "xfs", "btrfs", "vfat" or "swap".
	Type string
	// UUID is formatted as blkid prints it: lower-case 8-4-4-4-12, or
	// XXXX-XXXX for vfat; empty when the filesystem has none (all zeros).
	UUID string
	// Label with trailing blanks removed; empty when unset.
	Label string
	// Size is the number of bytes of the device the filesystem uses
	// (blocks × block size); 0 when unknown.
	Size int64
	// Devices is the number of devices of a multi-device btrfs (1 otherwise).
	// Members of one btrfs share its UUID legitimately.
	Devices int
}

// ProbeReadLimit bounds the bytes Probe reads from a device.
const ProbeReadLimit = 1 << 20

// ErrNoFilesystem is returned by Probe when no supported signature is found.
var ErrNoFilesystem = errors.New("no ext2/3/4, xfs, btrfs, vfat or swap signature")

// Probe identifies the filesystem at the start of r. It reads only the
// header sectors it needs: a few KiB, plus a bounded walk of the FAT root
// directory for its label, at most ProbeReadLimit bytes in all. A device
// too short for a signature is not an error: it just has none.
func Probe(r io.ReaderAt) (Superblock, error) {
	// Order matters only for devices carrying stale signatures of several
	// types; mkfs tools wipe the others, so any order finds the live one.
	for _, p := range []func(io.ReaderAt) (Superblock, bool, error){probeExt, probeXFS, probeBtrfs, probeSwap, probeVFAT} {
		sb, ok, err := p(r)
		if err != nil {
			return Superblock{}, err
		}
		if ok {
			if sb.Devices == 0 {
				sb.Devices = 1
			}
			return sb, nil
		}
	}
	return Superblock{}, ErrNoFilesystem
}

// readSpan reads n bytes at off. A short read at the end of the device yields
// nil and no error: a small device simply holds no signature there.
func readSpan(r io.ReaderAt, off int64, n int) ([]byte, error) {
	b := make([]byte, n)
	m, err := r.ReadAt(b, off)
	if m == n {
		return b, nil
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, nil
	}
	return nil, fmt.Errorf("read %d bytes at %d: %w", n, off, err)
}

var (
	leBytes = binary.LittleEndian
	beBytes = binary.BigEndian
	// Built on first use: the Castagnoli table costs more than the rest
	// of the binary's start-up, which a short-lived exec probe pays.
	crc32cTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })
)

// FormatUUID formats 16 bytes the way blkid prints filesystem UUIDs (byte
// order as stored); an all-zero UUID is "no UUID".
func FormatUUID(b []byte) string {
	if len(b) != 16 || bytes.Equal(b, make([]byte, 16)) {
		return ""
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// cString returns b up to its first NUL, with trailing whitespace removed
// as blkid does for labels.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return strings.TrimRight(string(b), " \t\r\n")
}

// ext2/3/4 feature bits that decide the type name (see libblkid's ext.c).
const (
	extCompatHasJournal    = 0x4
	extIncompatFiletype    = 0x2
	extIncompatRecover     = 0x4
	extIncompatJournalDev  = 0x8
	extIncompatMetaBG      = 0x10
	extIncompat64Bit       = 0x80
	extROCompatMetadataCsm = 0x400
	extROCompatExt2Supp    = 0x1 | 0x2 | 0x4 // sparse_super, large_file, btree_dir
)

func probeExt(r io.ReaderAt) (Superblock, bool, error) {
	sb, err := readSpan(r, 1024, 1024)
	if sb == nil || err != nil {
		return Superblock{}, false, err
	}
	if leBytes.Uint16(sb[0x38:]) != 0xEF53 {
		return Superblock{}, false, nil
	}
	compat, incompat, ro := leBytes.Uint32(sb[0x5C:]), leBytes.Uint32(sb[0x60:]), leBytes.Uint32(sb[0x64:])
	if ro&extROCompatMetadataCsm != 0 {
		// The kernel's crc32c without the final inversion; blkid refuses
		// a superblock whose checksum does not match, and so do we.
		if ^crc32.Checksum(sb[:0x3FC], crc32cTable()) != leBytes.Uint32(sb[0x3FC:]) {
			return Superblock{}, false, nil
		}
	}
	var typ string
	hasJournal := compat&extCompatHasJournal != 0
	switch {
	case incompat&extIncompatJournalDev != 0:
		typ = "jbd"
	case !hasJournal && ro&^extROCompatExt2Supp == 0 && incompat&^(extIncompatFiletype|extIncompatMetaBG) == 0:
		typ = "ext2"
	case hasJournal && ro&^extROCompatExt2Supp == 0 && incompat&^(extIncompatFiletype|extIncompatRecover|extIncompatMetaBG) == 0:
		typ = "ext3"
	default:
		typ = "ext4"
	}
	out := Superblock{Type: typ, UUID: FormatUUID(sb[0x68:0x78]), Label: cString(sb[0x78:0x88])}
	if logBS := leBytes.Uint32(sb[0x18:]); logBS <= 6 {
		blocks := uint64(leBytes.Uint32(sb[0x04:]))
		if incompat&extIncompat64Bit != 0 {
			blocks |= uint64(leBytes.Uint32(sb[0x150:])) << 32
		}
		out.Size = clampSize(blocks, 1024<<logBS)
	}
	return out, true, nil
}

// clampSize multiplies without overflowing int64 (fuzzed headers).
func clampSize(blocks uint64, bs uint64) int64 {
	if bs == 0 || blocks > (1<<62)/bs {
		return 0
	}
	return int64(blocks * bs)
}

func probeXFS(r io.ReaderAt) (Superblock, bool, error) {
	sb, err := readSpan(r, 0, 512)
	if sb == nil || err != nil || string(sb[0:4]) != "XFSB" {
		return Superblock{}, false, err
	}
	bs := beBytes.Uint32(sb[4:])
	if bs < 512 || bs > 65536 || bs&(bs-1) != 0 {
		return Superblock{}, false, nil
	}
	return Superblock{Type: "xfs", UUID: FormatUUID(sb[32:48]), Label: cString(sb[108:120]),
		Size: clampSize(beBytes.Uint64(sb[8:]), uint64(bs))}, true, nil
}

const btrfsSuperOffset = 0x10000

func probeBtrfs(r io.ReaderAt) (Superblock, bool, error) {
	// The superblock is 4 KiB; the fields used end with the label at 0x22b.
	sb, err := readSpan(r, btrfsSuperOffset, 4096)
	if sb == nil || err != nil || string(sb[0x40:0x48]) != "_BHRfS_M" {
		return Superblock{}, false, err
	}
	// csum_type 0 is crc32c over everything after the checksum field;
	// other types (xxhash, sha256, blake2) are accepted unverified.
	if leBytes.Uint16(sb[0xC4:]) == 0 && crc32.Checksum(sb[0x20:], crc32cTable()) != leBytes.Uint32(sb[0:]) {
		return Superblock{}, false, nil
	}
	n := leBytes.Uint64(sb[0x88:])
	devices := 1
	if n > 1 && n < 1<<16 {
		devices = int(n)
	}
	// dev_item (at 0xc9) holds this device's size as btrfs sees it.
	size := leBytes.Uint64(sb[0xC9+8:])
	if size > 1<<62 {
		size = 0
	}
	return Superblock{Type: "btrfs", UUID: FormatUUID(sb[0x20:0x30]), Label: cString(sb[0x12B:0x22B]),
		Size: int64(size), Devices: devices}, true, nil
}

// swapPageSizes are the page sizes mkswap may have used; the signature sits
// in the last 10 bytes of the first page.
var swapPageSizes = []int64{4096, 8192, 16384, 32768, 65536}

func probeSwap(r io.ReaderAt) (Superblock, bool, error) {
	for _, ps := range swapPageSizes {
		sig, err := readSpan(r, ps-10, 10)
		if err != nil {
			return Superblock{}, false, err
		}
		if sig == nil {
			return Superblock{}, false, nil
		}
		switch string(sig) {
		case "SWAP-SPACE":
			// Version 0 has no UUID or label.
			return Superblock{Type: "swap"}, true, nil
		case "SWAPSPACE2":
			h, err := readSpan(r, 1024, 44)
			if h == nil || err != nil {
				return Superblock{}, false, err
			}
			order := binary.ByteOrder(leBytes)
			if leBytes.Uint32(h[0:]) != 1 {
				if beBytes.Uint32(h[0:]) != 1 {
					return Superblock{}, false, nil // unknown version, as blkid
				}
				order = beBytes // written on a big-endian machine
			}
			last := uint64(order.Uint32(h[4:]))
			return Superblock{Type: "swap", UUID: FormatUUID(h[12:28]), Label: cString(h[28:44]),
				Size: clampSize(last+1, uint64(ps))}, true, nil
		}
	}
	return Superblock{}, false, nil
}

// probeVFAT follows libblkid's vfat prober: a plausible BIOS parameter
// block, the volume serial as UUID and, as LABEL, the volume-label entry of
// the root directory (the boot sector's copy is what blkid calls LABEL_FATBOOT).
func probeVFAT(r io.ReaderAt) (Superblock, bool, error) {
	bs, err := readSpan(r, 0, 512)
	if bs == nil || err != nil {
		return Superblock{}, false, err
	}
	magic := string(bs[0x52:0x5A]) == "FAT32   " || string(bs[0x52:0x57]) == "MSWIN" ||
		string(bs[0x36:0x3B]) == "MSDOS" || string(bs[0x36:0x39]) == "FAT"
	if !magic {
		// Magic-less FAT needs a jump instruction and the boot signature.
		if (bs[0] != 0xEB && bs[0] != 0xE9) || bs[510] != 0x55 || bs[511] != 0xAA {
			return Superblock{}, false, nil
		}
		if m := string(bs[0x36:0x3E]); m == "JFS     " || m == "HPFS    " {
			return Superblock{}, false, nil
		}
	}
	sectorSize := uint32(leBytes.Uint16(bs[11:]))
	clusterSize := uint32(bs[13])
	reserved := uint32(leBytes.Uint16(bs[14:]))
	fats := uint32(bs[16])
	dirEntries := uint32(leBytes.Uint16(bs[17:]))
	media := bs[21]
	if fats == 0 || reserved == 0 || !(media >= 0xF8 || media == 0xF0) || clusterSize == 0 || clusterSize&(clusterSize-1) != 0 ||
		sectorSize < 512 || sectorSize > 4096 || sectorSize&(sectorSize-1) != 0 {
		return Superblock{}, false, nil
	}
	sectors := uint32(leBytes.Uint16(bs[19:]))
	if sectors == 0 {
		sectors = leBytes.Uint32(bs[32:])
	}
	fat16Len := uint32(leBytes.Uint16(bs[22:]))
	fat32Len := leBytes.Uint32(bs[36:])
	fatLen := fat16Len
	if fatLen == 0 {
		fatLen = fat32Len
	}
	fatSize := uint64(fatLen) * uint64(fats)
	dirSize := (uint64(dirEntries)*32 + uint64(sectorSize) - 1) / uint64(sectorSize)
	meta := uint64(reserved) + fatSize + dirSize
	if uint64(sectors) < meta {
		return Superblock{}, false, nil
	}
	clusters := (uint64(sectors) - meta) / uint64(clusterSize)
	const fat12Max, fat16Max, fat32Max = 0xFF4, 0xFFF4, 0x0FFFFFF6
	maxCount := uint64(fat12Max)
	if fat16Len == 0 && fat32Len != 0 {
		maxCount = fat32Max
	} else if clusters > fat12Max {
		maxCount = fat16Max
	}
	if clusters > maxCount {
		return Superblock{}, false, nil
	}
	out := Superblock{Type: "vfat", Size: int64(sectors) * int64(sectorSize)}
	var label []byte
	switch {
	case fat16Len != 0:
		if sig := bs[38]; sig == 0x28 || sig == 0x29 {
			out.UUID = fatSerial(bs[39:43])
		}
		label, err = fatRootLabel(r, int64(reserved+uint32(fatSize))*int64(sectorSize), dirEntries)
	case fat32Len != 0:
		out.UUID = fatSerial(bs[67:71])
		label, err = fat32RootLabel(r, bs, sectorSize, clusterSize, reserved, uint32(fatSize), fat32Len)
	default:
		return Superblock{}, false, nil
	}
	if err != nil {
		return Superblock{}, false, err
	}
	out.Label = cString(label)
	return out, true, nil
}

func fatSerial(b []byte) string { return fmt.Sprintf("%02X%02X-%02X%02X", b[3], b[2], b[1], b[0]) }

// fatRootLabel scans up to entries directory entries at off for the
// volume-label entry. Root directories are a few KiB; the scan is capped.
func fatRootLabel(r io.ReaderAt, off int64, entries uint32) ([]byte, error) {
	if entries > 4096 {
		entries = 4096
	}
	dir, err := readSpan(r, off, int(entries)*32)
	if dir == nil || err != nil {
		return nil, err
	}
	label, _ := scanFATDir(dir)
	return label, nil
}

// scanFATDir returns the volume label of a directory block and whether the
// end-of-directory marker was seen.
func scanFATDir(dir []byte) ([]byte, bool) {
	for i := 0; i+32 <= len(dir); i += 32 {
		e := dir[i : i+32]
		if e[0] == 0x00 {
			return nil, true
		}
		attr := e[11]
		if e[0] == 0xE5 || leBytes.Uint16(e[20:]) != 0 || leBytes.Uint16(e[26:]) != 0 || attr&0x3F == 0x0F {
			continue // deleted, has clusters, or a long-name piece
		}
		if attr&(0x08|0x10) == 0x08 {
			return append([]byte(nil), e[:11]...), true
		}
	}
	return nil, false
}

// fat32RootLabel walks the root directory's cluster chain. The label is
// nearly always the first entry, so the walk stops after 8 clusters of at
// most 64 KiB (the largest cluster size FAT allows in practice).
func fat32RootLabel(r io.ReaderAt, bs []byte, sectorSize, clusterSize, reserved, fatSize, fat32Len uint32) ([]byte, error) {
	clusterBytes := int(clusterSize * sectorSize)
	if clusterBytes > 64<<10 {
		return nil, nil
	}
	entries := uint64(fat32Len) * uint64(sectorSize) / 4
	next := uint64(leBytes.Uint32(bs[44:]))
	for n := 0; n < 8 && next >= 2 && next < entries; n++ {
		off := (uint64(reserved) + uint64(fatSize) + (next-2)*uint64(clusterSize)) * uint64(sectorSize)
		if off > 1<<62 {
			return nil, nil
		}
		dir, err := readSpan(r, int64(off), clusterBytes)
		if dir == nil || err != nil {
			return nil, err
		}
		if label, end := scanFATDir(dir); label != nil || end {
			return label, nil
		}
		fe, err := readSpan(r, int64(reserved)*int64(sectorSize)+int64(next)*4, 4)
		if fe == nil || err != nil {
			return nil, err
		}
		next = uint64(leBytes.Uint32(fe) & 0x0FFFFFFF)
	}
	return nil, nil
}
